/// A placed order.
public struct Order: Sendable, Equatable {
    public var id: OrderId
    public var userId: UserId
    public var productId: ProductId
    public var quantity: Quantity
    public var unitPrice: Money
    public var totalPrice: Money
    public var status: OrderStatus

    public init(
        id: OrderId, userId: UserId, productId: ProductId, quantity: Quantity, unitPrice: Money, totalPrice: Money,
        status: OrderStatus
    ) {
        self.id = id
        self.userId = userId
        self.productId = productId
        self.quantity = quantity
        self.unitPrice = unitPrice
        self.totalPrice = totalPrice
        self.status = status
    }
}

/// An order stream folded.
public enum OrderState: Sendable, Equatable {
    case none
    case placed(Order)

    public static let initial = OrderState.none

    public func evolved(by event: OrderEvent) -> OrderState {
        switch (self, event) {
        case (.none, .placed(let e)):
            .placed(
                Order(
                    id: e.orderId, userId: e.userId, productId: e.productId, quantity: e.quantity,
                    unitPrice: e.unitPrice, totalPrice: e.totalPrice, status: e.status))
        default:
            self
        }
    }
}
