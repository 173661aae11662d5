public import LogbookDomain
public import LogbookJSON

/// A placed order as queries show it. Orders are never removed; `placedAt` is the
/// recording time of `OrderPlaced`.
public struct OrderView: ReadModelView {
    public var orderId: OrderId
    public var userId: UserId
    public var productId: ProductId
    public var quantity: Int
    public var unitPrice: Money
    public var totalPrice: Money
    public var status: OrderStatus
    public var placedAt: Timestamp

    public init(
        orderId: OrderId, userId: UserId, productId: ProductId, quantity: Int, unitPrice: Money, totalPrice: Money,
        status: OrderStatus, placedAt: Timestamp
    ) {
        self.orderId = orderId
        self.userId = userId
        self.productId = productId
        self.quantity = quantity
        self.unitPrice = unitPrice
        self.totalPrice = totalPrice
        self.status = status
        self.placedAt = placedAt
    }

    /// `{orderId, userId, productId, quantity, unitPrice, totalPrice, status, placedAt}`.
    public var json: JSONValue {
        [
            "orderId": .string(orderId.rawValue), "userId": .string(userId.rawValue),
            "productId": .string(productId.rawValue), "quantity": .int(quantity),
            "unitPrice": .string(unitPrice.description), "totalPrice": .string(totalPrice.description),
            "status": .string(status.rawValue), "placedAt": .string(placedAt.rfc3339),
        ]
    }
}
