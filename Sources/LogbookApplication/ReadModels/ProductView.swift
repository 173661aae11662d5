public import LogbookDomain
public import LogbookJSON

/// A product on sale as queries show it. Removed products have no view. `stock` is the
/// stock the last event recorded (restocks and purchases carry it); `updatedAt` is the
/// recording time of the last event that changed the product, purchases included.
public struct ProductView: ReadModelView {
    public var productId: ProductId
    public var name: String
    public var price: Money
    public var category: ProductCategory
    public var stock: Int
    public var updatedAt: Timestamp

    public init(
        productId: ProductId, name: String, price: Money, category: ProductCategory, stock: Int,
        updatedAt: Timestamp
    ) {
        self.productId = productId
        self.name = name
        self.price = price
        self.category = category
        self.stock = stock
        self.updatedAt = updatedAt
    }

    /// A product can be bought while at least one is in stock.
    public var isAvailable: Bool { stock > 0 }

    /// `{productId, name, price, category, stock, isAvailable, updatedAt}`; `price` is a
    /// decimal string with two decimals.
    public var json: JSONValue {
        [
            "productId": .string(productId.rawValue), "name": .string(name), "price": .string(price.description),
            "category": .string(category.rawValue), "stock": .int(stock), "isAvailable": .bool(isAvailable),
            "updatedAt": .string(updatedAt.rfc3339),
        ]
    }
}
