import LogbookDomain
public import LogbookJSON

/// A command as it arrives from a client.
public struct CommandRequest: Sendable, Equatable {
    /// The client-chosen command id (1–128 printable ASCII characters); sending it again
    /// returns the first outcome.
    public var commandId: String
    public var type: String
    public var data: JSONValue
    /// What the client expects the version of the command's main stream to be.
    public var expectedVersion: ExpectedVersion
    public var correlationId: String?
    public var causationId: String?

    public init(
        commandId: String, type: String, data: JSONValue, expectedVersion: ExpectedVersion = .any,
        correlationId: String? = nil, causationId: String? = nil
    ) {
        self.commandId = commandId
        self.type = type
        self.data = data
        self.expectedVersion = expectedVersion
        self.correlationId = correlationId
        self.causationId = causationId
    }

    /// The longest command, correlation or causation id accepted, in bytes.
    public static let maximumIdLength = 128
}

extension ExpectedVersion {
    /// Reads a wire `expectedVersion`: an integer ≥ 0, `"any"` or `"noStream"`; absent means any.
    public init(json: JSONValue?) throws(ServiceError) {
        switch json {
        case nil, .null?, .string("any")?: self = .any
        case .string("noStream")?: self = .noStream
        case .int(let version)? where version >= 0: self = .at(version)
        default:
            throw ServiceError(
                .invalidInput, "expectedVersion: must be an integer ≥ 0, \"any\" or \"noStream\"",
                details: [("field", .string("expectedVersion"))])
        }
    }
}
