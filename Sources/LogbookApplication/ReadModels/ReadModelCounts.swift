/// How many live rows each read model holds: deleted users and posts and removed
/// products are not counted.
public struct ReadModelCounts: Sendable, Equatable, CustomStringConvertible {
    public var users: Int
    public var posts: Int
    public var products: Int
    public var orders: Int

    public init(users: Int = 0, posts: Int = 0, products: Int = 0, orders: Int = 0) {
        self.users = users
        self.posts = posts
        self.products = products
        self.orders = orders
    }

    public var description: String { "\(users) users, \(posts) posts, \(products) products, \(orders) orders" }
}
