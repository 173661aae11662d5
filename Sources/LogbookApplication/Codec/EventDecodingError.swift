/// A stored event that cannot be read back into the domain.
public struct EventDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var type: String
    public var reason: String

    public init(type: String, reason: String) {
        self.type = type
        self.reason = reason
    }

    public var description: String { "cannot read event of type '\(type)': \(reason)" }
}
