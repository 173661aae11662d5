public import LogbookJSON

/// A query's answer and the log position the read model had applied when it answered.
public struct QueryAnswer: Sendable, Equatable {
    public var position: Int64
    public var result: JSONValue

    public init(position: Int64, result: JSONValue) {
        self.position = position
        self.result = result
    }
}
