/// The change-feed topics of the wire contract and the stream categories they carry.
/// Email claims (category `email`) are internal to the log and have no topic.
public enum FeedTopic: String, Sendable, CaseIterable {
    case users, posts, products, orders

    /// The stream category whose events this topic carries.
    public var category: String {
        switch self {
        case .users: "user"
        case .posts: "post"
        case .products: "product"
        case .orders: "order"
        }
    }

    /// The topic a stream category is published on, or nil for internal categories.
    public init?(category: String) {
        guard let topic = Self.allCases.first(where: { $0.category == category }) else { return nil }
        self = topic
    }
}
