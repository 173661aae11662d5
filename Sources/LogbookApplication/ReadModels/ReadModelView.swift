public import LogbookJSON

/// A row of a read model as queries answer it. `json` is exactly the `result` shape of
/// ARCHITECTURE §4 "Read models", keys in the documented order.
public protocol ReadModelView: Sendable, Equatable {
    var json: JSONValue { get }
}
