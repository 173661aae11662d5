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

    /// The topic of the events of `stream` (`<category>-<id>`), or nil for internal categories:
    /// the same as `init?(category: RecordedEvent.category(ofStream: stream))`, without
    /// making a string of the category.
    public init?(stream: String) {
        var stream = stream
        let topic = stream.withUTF8 { name -> FeedTopic? in
            // As `RecordedEvent.category(ofStream:)`: up to the first dash, or all of a name without one.
            let category = UnsafeBufferPointer(
                rebasing: name[..<(name.firstIndex(of: UInt8(ascii: "-")) ?? name.endIndex)])
            return Self.allCases.first { $0.category.utf8.elementsEqual(category) }
        }
        guard let topic else { return nil }
        self = topic
    }
}
