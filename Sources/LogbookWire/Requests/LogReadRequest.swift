public import LogbookApplication

/// A `ReadLog` request: events from position `from`, at most `limit`, of some topics only.
public struct LogReadRequest: Sendable, Equatable {
    public static let defaultLimit = 1_000
    public static let maximumLimit = 10_000

    public var from: Int64
    public var limit: Int
    /// The stream categories to read (from the topics asked for); nil for the whole log.
    public var categories: Set<String>?

    public init(from: Int64, limit: Int = Self.defaultLimit, topics: [FeedTopic]? = nil) {
        self.from = from
        self.limit = limit
        self.categories = topics.map { Set($0.map(\.category)) }
    }
}

extension LogReader {
    /// The page `request` asks for, its events as `RecordedEvent`s.
    public func read(_ request: LogReadRequest) throws(ServiceError) -> LogPage {
        try read(from: request.from, limit: request.limit, categories: request.categories)
    }

    /// The page `request` asks for, its events handed to `body` as borrowed bytes
    /// (`read(from:limit:categories:visiting:)`).
    public func read<Failure: Error>(
        _ request: LogReadRequest, visiting body: (StoredEventBytes) throws(Failure) -> Void
    ) throws(PagedReadError<Failure>) -> LogPageBounds {
        try read(from: request.from, limit: request.limit, categories: request.categories, visiting: body)
    }
}
