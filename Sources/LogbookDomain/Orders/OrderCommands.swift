/// What can be asked of an order.
public enum OrderCommand: Sendable, Equatable {
    /// Places the order for a purchase at the product's current price.
    case place(PurchaseProduct, unitPrice: Money)
}
