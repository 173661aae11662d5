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
        guard let topic = stream.withUTF8({ FeedTopic(streamUTF8: $0) }) else { return nil }
        self = topic
    }

    /// The topic of the events of the stream whose name is `name`'s UTF-8 bytes, or nil for
    /// internal categories (`init?(stream:)` for a name that is not a `String`).
    public init?(streamUTF8 name: UnsafeBufferPointer<UInt8>) {
        // As `RecordedEvent.category(ofStream:)`: up to the first dash, or all of a name without one.
        let category = UnsafeBufferPointer(rebasing: name[..<(name.firstIndex(of: UInt8(ascii: "-")) ?? name.endIndex)])
        guard let topic = Self.allCases.first(where: { $0.category.utf8.elementsEqual(category) }) else { return nil }
        self = topic
    }
}
