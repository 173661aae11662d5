/// Why a document is not a `Status` result of the wire contract: the field at fault (a
/// dotted path such as `batches.meanSize`, or `result` for the document itself) and what
/// is wrong with it.
public struct StatusDocumentError: Error, Sendable, Equatable, CustomStringConvertible {
    public var field: String
    public var reason: String

    public init(field: String, _ reason: String) {
        self.field = field
        self.reason = reason
    }

    public var description: String { "\(field) \(reason)" }
}
