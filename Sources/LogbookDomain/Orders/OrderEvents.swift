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
