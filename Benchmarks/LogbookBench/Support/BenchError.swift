/// Why the bench could not finish: a server did not start or answer, a file could not be
/// written, a reply did not have the shape the wire contract promises. The message says
/// which, in words a user can act on.
public struct BenchError: Error, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
