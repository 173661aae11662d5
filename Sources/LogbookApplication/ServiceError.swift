public import LogbookDomain
public import LogbookJSON

/// The closed list of error codes clients see. These strings are a public contract:
/// they change only together with `schemas/`, the README and the tests.
public enum ErrorCode: String, Sendable, CaseIterable {
    case invalidInput = "invalid_input"
    case notFound = "not_found"
    case alreadyExists = "already_exists"
    case emailTaken = "email_taken"
    case productNotAvailable = "product_not_available"
    case insufficientStock = "insufficient_stock"
    case wrongExpectedVersion = "wrong_expected_version"
    case unknownType = "unknown_type"
    case malformedRequest = "malformed_request"
    case unauthorized
    case timeout
    case unavailable
    case `internal`
}

/// An error as a client receives it: a code, a message for people, details for programs.
public struct ServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    public var details: [(key: String, value: ErrorDetail)]

    public init(_ code: ErrorCode, _ message: String, details: [(key: String, value: ErrorDetail)] = []) {
        self.code = code
        self.message = message
        self.details = details
    }

    public init(_ error: DomainError) {
        // Every domain code is one of ours; `internal` only if the two lists ever drift apart.
        self.init(ErrorCode(rawValue: error.code) ?? .internal, error.message, details: error.details)
    }

    public init(_ error: EventStoreError) {
        switch error {
        case .unavailable(let message): self.init(.unavailable, "the event log is unavailable: \(message)")
        default: self.init(.internal, error.description)
        }
    }

    /// Why a command met `wrong_expected_version`; clients see it as `details.cause`.
    public enum ConflictCause: String, Sendable {
        /// The client's own `expectedVersion` did not match: decided, and remembered for the id.
        case expectedVersion
        /// Other writers kept changing what the command reads through every attempt: not
        /// remembered, so the same id may be sent again.
        case contention
    }

    public init(_ conflict: VersionConflict, cause: ConflictCause) {
        let message =
            switch cause {
            case .expectedVersion:
                "stream '\(conflict.stream)' is at version \(conflict.actual), expected \(conflict.expected)"
            case .contention:
                "stream '\(conflict.stream)' kept changing while the command was decided; send it again"
            }
        self.init(
            .wrongExpectedVersion, message,
            details: [
                ("stream", .string(conflict.stream)), ("expected", .string(conflict.expected.description)),
                ("actual", .int(conflict.actual)), ("cause", .string(cause.rawValue)),
            ])
    }

    /// A stored event that cannot be read back: the log is damaged or foreign.
    public static func unreadable(_ error: EventDecodingError) -> ServiceError {
        ServiceError(.internal, "the event log holds an unreadable event: \(error)")
    }

    /// `{"code","message","details"?}`: the error object of the wire contract, which is also
    /// how the log records a refusal (`AnswerCodec`), so a retry reads back the same object.
    public var json: JSONValue {
        var object: JSONObject = ["code": .string(code.rawValue), "message": .string(message)]
        if !details.isEmpty {
            var fields = JSONObject()
            for (key, value) in details {
                switch value {
                case .string(let text): fields[key] = .string(text)
                case .int(let number): fields[key] = .int(number)
                }
            }
            object["details"] = .object(fields)
        }
        return .object(object)
    }

    public var description: String { "\(code.rawValue): \(message)" }

    public static func == (lhs: ServiceError, rhs: ServiceError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
            && lhs.details.elementsEqual(rhs.details, by: { $0.key == $1.key && $0.value == $1.value })
    }
}
