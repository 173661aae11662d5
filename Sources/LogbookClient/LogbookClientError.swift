public import LogbookApplication
public import LogbookJSON

/// Why a request got no usable answer. Every failure of the client is one of these; a
/// server's own refusal is `rejected`, with the server's code.
public enum LogbookClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server answered `ok: false`.
    case rejected(ServiceErrorReply)
    /// No reply within the per-attempt timeout, for every one of `attempts` attempts.
    case timedOut(ServerEndpoint, attempts: Int)
    /// The calling task was cancelled before the reply arrived. A command may still have
    /// been carried out: send it again with the same id to learn its outcome.
    case cancelled
    /// The client was closed (or its thread stopped) before the reply arrived.
    case closed
    /// The request cannot be sent as given (no `id`, or one already in flight).
    case invalidRequest(String)
    /// The reply arrived but does not have the shape wire contract version 1 promises.
    case malformedReply(String)
    /// libzmq refused a socket operation (a malformed endpoint, for instance).
    case transport(String)

    public var description: String {
        switch self {
        case .rejected(let reply): "rejected: \(reply)"
        case .timedOut(let server, let attempts):
            "no reply from the \(server) server after \(attempts) attempt\(attempts == 1 ? "" : "s")"
        case .cancelled: "the request was cancelled"
        case .closed: "the client is closed"
        case .invalidRequest(let reason): "invalid request: \(reason)"
        case .malformedReply(let reason): "malformed reply: \(reason)"
        case .transport(let reason): "transport failure: \(reason)"
        }
    }
}

/// A server's refusal, exactly as it sent it: `{"code","message","details"?}`.
public struct ServiceErrorReply: Sendable, Equatable, CustomStringConvertible {
    /// One of ARCHITECTURE §4's codes (`not_found`, `insufficient_stock` …).
    public var code: String
    public var message: String
    public var details: JSONValue?

    public init(code: String, message: String, details: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.details = details
    }

    /// The code as the service's closed list knows it; nil for a code this build does not know.
    public var errorCode: ErrorCode? { ErrorCode(rawValue: code) }

    public var description: String { "\(code): \(message)" }
}
