/// Something that happened to a product, on the stream `product-<productId>`.
public enum ProductEvent: Sendable, Equatable {
    case added(ProductAdded)
    case updated(ProductUpdated)
    case restocked(ProductRestocked)
    case removed(ProductRemoved)
    case purchased(ProductPurchased)
}

public struct ProductAdded: Sendable, Equatable {
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

/// Only the fields that changed are present.
public struct ProductUpdated: Sendable, Equatable {
    public var productId: ProductId
    public var name: ProductName?
    public var price: Money?
    public var category: ProductCategory?

    public init(
        productId: ProductId, name: ProductName? = nil, price: Money? = nil, category: ProductCategory? = nil
    ) {
        self.productId = productId
        self.name = name
        self.price = price
        self.category = category
    }
}

/// `stock` is the stock after the restock.
public struct ProductRestocked: Sendable, Equatable {
    public var productId: ProductId
    public var quantity: Quantity
    public var stock: Stock

    public init(productId: ProductId, quantity: Quantity, stock: Stock) {
        self.productId = productId
        self.quantity = quantity
        self.stock = stock
    }
}

public struct ProductRemoved: Sendable, Equatable {
    public var productId: ProductId

    public init(productId: ProductId) { self.productId = productId }
}

/// `stock` is the stock after the purchase.
public struct ProductPurchased: Sendable, Equatable {
    public var productId: ProductId
    public var orderId: OrderId
    public var userId: UserId
    public var quantity: Quantity
    public var stock: Stock

    public init(productId: ProductId, orderId: OrderId, userId: UserId, quantity: Quantity, stock: Stock) {
        self.productId = productId
        self.orderId = orderId
        self.userId = userId
        self.quantity = quantity
        self.stock = stock
    }
}
