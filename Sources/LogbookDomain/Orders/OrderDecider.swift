/// Decides commands on one order: an order id is used once, by a live buyer, and its
/// total is exactly the unit price times the quantity.
public enum OrderDecider {
    public static func decide(_ command: OrderCommand, state: OrderState, buyer: UserState) throws(DomainError)
        -> [OrderEvent]
    {
        switch command {
        case .place(let purchase, let unitPrice):
            guard case .none = state else { throw .alreadyExists(.order, id: purchase.orderId.rawValue) }
            guard buyer.liveUser != nil else { throw .notFound(.user, id: purchase.userId.rawValue) }
            let totalPrice = try unitPrice.multiplied(by: purchase.quantity)
            return [
                .placed(
                    OrderPlaced(
                        orderId: purchase.orderId, userId: purchase.userId, productId: purchase.productId,
                        quantity: purchase.quantity, unitPrice: unitPrice,
                        totalPrice: totalPrice, status: .pending))
            ]
        }
    }

    public static func evolve(_ state: OrderState, _ event: OrderEvent) -> OrderState {
        state.evolved(by: event)
    }
}
