/// A product on sale.
public struct Product: Sendable, Equatable {
    public var id: ProductId
    public var name: ProductName
    public var price: Money
    public var category: ProductCategory
    public var stock: Stock

    public var isAvailable: Bool { stock.isAvailable }

    public init(id: ProductId, name: ProductName, price: Money, category: ProductCategory, stock: Stock) {
        self.id = id
        self.name = name
        self.price = price
        self.category = category
        self.stock = stock
    }
}

/// A product stream folded.
public enum ProductState: Sendable, Equatable {
    case none
    case live(Product)
    case removed

    public static let initial = ProductState.none

    public var liveProduct: Product? {
        if case .live(let product) = self { product } else { nil }
    }

    public func evolved(by event: ProductEvent) -> ProductState {
        switch (self, event) {
        case (.none, .added(let e)):
            return .live(Product(id: e.productId, name: e.name, price: e.price, category: e.category, stock: e.stock))
        case (.live(var product), .updated(let e)):
            product.name = e.name ?? product.name
            product.price = e.price ?? product.price
            product.category = e.category ?? product.category
            return .live(product)
        case (.live(var product), .restocked(let e)):
            product.stock = e.stock
            return .live(product)
        case (.live(var product), .purchased(let e)):
            product.stock = e.stock
            return .live(product)
        case (.live, .removed):
            return .removed
        default:
            return self
        }
    }
}
