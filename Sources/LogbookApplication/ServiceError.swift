public import LogbookDomain
public import LogbookJSON

/// The closed list of error codes clients see. These strings are a public contract:
/// they change only together with `schemas/` (and its README) and the tests.
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
    case unknownGroup = "unknown_group"
    case staleDelivery = "stale_delivery"
    case notAMember = "not_a_member"
    case unauthorized
    case timeout
    case unavailable
    case `internal`
}

/// An error as a client receives it: a code, a message for people, details for programs.
/// A message never names a server's file, host or storage engine message: an error made
/// from a store's failure keeps those in `serverDetail`, for the process log only.
public struct ServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    public var details: [(key: String, value: ErrorDetail)]
    /// What the process log gets and the client never sees (a path, SQLite's own words);
    /// not part of `json` nor of equality.
    public var serverDetail: String?

    public init(_ code: ErrorCode, _ message: String, details: [(key: String, value: ErrorDetail)] = []) {
        self.code = code
        self.message = message
        self.details = details
    }

    public init(_ error: DomainError) {
        // Every domain code is one of ours; `internal` only if the two lists ever drift apart.
        self.init(ErrorCode(rawValue: error.code) ?? .internal, error.message, details: error.details)
    }

    /// The client's side of a failure of the event log: the cause, never the path or the
    /// storage engine's words, which stay in `serverDetail`.
    public init(_ error: EventStoreError) {
        switch error {
        case .unavailable(_, let cause): self.init(.unavailable, Self.naming(cause, "the event log is unavailable"))
        case .notAnEventLog: self.init(.internal, "the event log's file is not a Logbook event log")
        case .corrupt: self.init(.internal, "the event log is corrupt")
        case .failed: self.init(.internal, "the event log failed")
        case .unsupportedSchema, .unreadableEvent, .invalidRequest: self.init(.internal, error.description)
        }
        serverDetail = error.description
    }

    /// The client's side of a failure of a read-model store (as for the event log).
    public init(_ error: ReadModelStoreError) {
        switch error {
        case .unavailable(_, let cause): self.init(.unavailable, Self.naming(cause, "the read models are unavailable"))
        default: self.init(.unavailable, "the read models cannot be read")
        }
        serverDetail = error.description
    }

    /// An error whose cause only the process log may know: `message` for the client,
    /// `serverDetail` for the log.
    public init(_ code: ErrorCode, _ message: String, serverDetail: String) {
        self.init(code, message)
        self.serverDetail = serverDetail
    }

    /// `sentence`, then the cause when there is one a client needs.
    private static func naming(_ cause: StorageCause, _ sentence: String) -> String {
        cause.text.map { "\(sentence): \($0)" } ?? sentence
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
