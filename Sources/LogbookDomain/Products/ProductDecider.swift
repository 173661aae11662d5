/// Decides commands on one product stream. A purchase's order and buyer are checked by
/// `OrderDecider`; `CommandDecider` joins the two into one atomic decision.
public enum ProductDecider {
    public static func decide(_ command: ProductCommand, state: ProductState) throws(DomainError) -> [ProductEvent] {
        switch command {
        case .add(let c):
            guard case .none = state else { throw .alreadyExists(.product, id: c.productId.rawValue) }
            return [
                .added(
                    ProductAdded(
                        productId: c.productId, name: c.name, price: c.price, category: c.category, stock: c.stock))
            ]

        case .update(let c):
            let product = try live(state, c.productId)
            let change = ProductUpdated(
                productId: c.productId,
                name: c.name.flatMap { $0 == product.name ? nil : $0 },
                price: c.price.flatMap { $0 == product.price ? nil : $0 },
                category: c.category.flatMap { $0 == product.category ? nil : $0 })
            return change.name != nil || change.price != nil || change.category != nil ? [.updated(change)] : []

        case .restock(let c):
            let product = try live(state, c.productId)
            let stock = try product.stock.adding(c.quantity)
            return [.restocked(ProductRestocked(productId: c.productId, quantity: c.quantity, stock: stock))]

        case .remove(let c):
            _ = try live(state, c.productId)
            return [.removed(ProductRemoved(productId: c.productId))]

        case .purchase(let c):
            let product = try live(state, c.productId)
            guard product.isAvailable else { throw .productNotAvailable(productId: c.productId.rawValue) }
            guard let stock = product.stock.removing(c.quantity) else {
                throw .insufficientStock(
                    productId: c.productId.rawValue, requested: c.quantity.value, available: product.stock.value)
            }
            return [
                .purchased(
                    ProductPurchased(
                        productId: c.productId, orderId: c.orderId, userId: c.userId, quantity: c.quantity,
                        stock: stock))
            ]
        }
    }

    public static func evolve(_ state: ProductState, _ event: ProductEvent) -> ProductState {
        state.evolved(by: event)
    }

    private static func live(_ state: ProductState, _ id: ProductId) throws(DomainError) -> Product {
        guard let product = state.liveProduct else { throw .notFound(.product, id: id.rawValue) }
        return product
    }
}
