/// Something that happened to an order, on the stream `order-<orderId>`.
public enum OrderEvent: Sendable, Equatable {
    case placed(OrderPlaced)
}

/// `totalPrice` is exactly `unitPrice` × `quantity`.
public struct OrderPlaced: Sendable, Equatable {
    public var orderId: OrderId
    public var userId: UserId
    public var productId: ProductId
    public var quantity: Quantity
    public var unitPrice: Money
    public var totalPrice: Money
    public var status: OrderStatus

    public init(
        orderId: OrderId, userId: UserId, productId: ProductId, quantity: Quantity, unitPrice: Money,
        totalPrice: Money, status: OrderStatus
    ) {
        self.orderId = orderId
        self.userId = userId
        self.productId = productId
        self.quantity = quantity
        self.unitPrice = unitPrice
        self.totalPrice = totalPrice
        self.status = status
    }
}

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

/// What can be asked of an order.
public enum OrderCommand: Sendable, Equatable {
    /// Places the order for a purchase at the product's current price.
    case place(PurchaseProduct, unitPrice: Money)
}

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
