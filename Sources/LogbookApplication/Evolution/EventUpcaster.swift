public import LogbookJSON

/// One step of an event type's schema history: turns a payload written under
/// `fromVersion` into the shape of `fromVersion + 1`. It must be pure (same input, same
/// output) and read nothing but the payload, since a log is read many times.
public struct EventUpcaster: Sendable {
    /// The event type this step applies to, e.g. `UserRegistered`.
    public var type: String
    /// The version of the payloads it reads; it writes version `fromVersion + 1`.
    public var fromVersion: Int
    /// The transformation. It throws when the payload is not a valid `fromVersion` payload.
    public var upcast: @Sendable (JSONObject) throws(EventUpcastError) -> JSONObject

    public init(
        type: String, fromVersion: Int, upcast: @escaping @Sendable (JSONObject) throws(EventUpcastError) -> JSONObject
    ) {
        self.type = type
        self.fromVersion = fromVersion
        self.upcast = upcast
    }
}

/// Why a stored payload could not be brought to its type's current schema version.
public struct EventUpcastError: Error, Sendable, Equatable, CustomStringConvertible {
    public var type: String
    public var version: Int
    public var reason: String

    public init(type: String, version: Int, reason: String) {
        self.type = type
        self.version = version
        self.reason = reason
    }

    public var description: String { "cannot read '\(type)' written under schema version \(version): \(reason)" }
}
