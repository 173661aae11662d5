/// What a writer expects a stream's version to be before its events are appended.
public enum ExpectedVersion: Sendable, Equatable, CustomStringConvertible {
    /// No check.
    case any
    /// The stream must have no events.
    case noStream
    /// The stream's last event must have exactly this version (1 or more).
    case exactly(Int)

    /// Whether a stream at `version` (0 when it has no events) meets the expectation.
    public func isMet(byCurrentVersion version: Int) -> Bool {
        switch self {
        case .any: true
        case .noStream: version == 0
        case .exactly(let expected): version == expected
        }
    }

    /// The expectation that a stream is still at `version`.
    public static func at(_ version: Int) -> ExpectedVersion { version == 0 ? .noStream : .exactly(version) }

    public var description: String {
        switch self {
        case .any: "any"
        case .noStream: "noStream"
        case .exactly(let version): String(version)
        }
    }
}
