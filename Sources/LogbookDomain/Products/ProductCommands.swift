/// What can be asked of a product.
public enum ProductCommand: Sendable, Equatable {
    case add(AddProduct)
    case update(UpdateProduct)
    case restock(RestockProduct)
    case remove(RemoveProduct)
    case purchase(PurchaseProduct)

    /// The product the command is about.
    public var productId: ProductId {
        switch self {
        case .add(let c): c.productId
        case .update(let c): c.productId
        case .restock(let c): c.productId
        case .remove(let c): c.productId
        case .purchase(let c): c.productId
        }
    }
}

public struct AddProduct: Sendable, Equatable {
    public var productId: ProductId
    public var name: ProductName
    public var price: Money
    public var category: ProductCategory
    public var stock: Stock

    public init(productId: ProductId, name: ProductName, price: Money, category: ProductCategory, stock: Stock) {
        self.productId = productId
        self.name = name
        self.price = price
        self.category = category
        self.stock = stock
    }
}

/// Absent fields stay as they are; at least one must be given, so an empty update cannot be built.
public struct UpdateProduct: Sendable, Equatable {
    public var productId: ProductId
    public var name: ProductName?
    public var price: Money?
    public var category: ProductCategory?

    public init(
        productId: ProductId, name: ProductName? = nil, price: Money? = nil, category: ProductCategory? = nil
    ) throws(DomainError) {
        guard name != nil || price != nil || category != nil else {
            throw .invalidInput(field: "data", reason: "give at least one of name, price, category")
        }
        self.productId = productId
        self.name = name
        self.price = price
        self.category = category
    }
}

public struct RestockProduct: Sendable, Equatable {
    public var productId: ProductId
    public var quantity: Quantity

    public init(productId: ProductId, quantity: Quantity) {
        self.productId = productId
        self.quantity = quantity
    }
}

public struct RemoveProduct: Sendable, Equatable {
    public var productId: ProductId

    public init(productId: ProductId) { self.productId = productId }
}

/// Buys `quantity` of a product for a user; it also places the order `orderId`.
public struct PurchaseProduct: Sendable, Equatable {
    public var orderId: OrderId
    public var userId: UserId
    public var productId: ProductId
    public var quantity: Quantity

    public init(orderId: OrderId, userId: UserId, productId: ProductId, quantity: Quantity) {
        self.orderId = orderId
        self.userId = userId
        self.productId = productId
        self.quantity = quantity
    }
}
