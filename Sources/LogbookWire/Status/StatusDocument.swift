public import LogbookJSON

/// A `Status` result with one JSON form: `json` writes it, `init(json:)` reads exactly
/// that form back (`WorkerStatus`, `QueryStatus`).
public protocol StatusDocument: Sendable, Equatable {
    /// Reads the `result` of a `Status` reply; refuses any other shape.
    init(json: JSONValue) throws(StatusDocumentError)

    /// The `result` of a `Status` reply.
    var json: JSONValue { get }
}

extension WorkerStatus: StatusDocument {}

extension QueryStatus: StatusDocument {}
