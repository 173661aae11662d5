/// Why a service could not start: what it was doing and what went wrong.
public struct ServiceStartError: Error, Sendable, CustomStringConvertible {
    public var component: String
    public var reason: String

    public init(_ component: String, _ reason: String) {
        self.component = component
        self.reason = reason
    }

    public var description: String { "\(component): \(reason)" }
}
