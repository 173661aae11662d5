public import LogbookApplication
public import LogbookJSON
import LogbookWire
public import LogbookZMQ

/// A request/reply server the client talks to. The change feed is not one: it is a PUB
/// socket a subscriber follows (see `ClientEndpoints.feed`).
public enum ServerEndpoint: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The worker's command socket (and its `Status`).
    case commands
    /// The query process's socket (and its `Status`).
    case queries
    /// The worker's log-read socket (`ReadLog`).
    case log

    public var description: String { rawValue }
}

/// Where the servers listen (libzmq endpoint strings): the same settings the service's
/// processes use. The defaults are the service's defaults on this machine (ARCHITECTURE §2).
public typealias ClientEndpoints = ServiceEndpoints

extension ServiceEndpoints {
    /// The endpoint string of a request/reply server.
    public func address(of server: ServerEndpoint) -> String {
        switch server {
        case .commands: commands
        case .queries: queries
        case .log: log
        }
    }
}

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

/// An accepted command: the position of its last event in the log and its events, as the
/// worker recorded them (a retried command id returns the first outcome).
public struct CommandReceipt: Sendable, Equatable {
    public var position: Int64
    public var events: [RecordedEvent]

    public init(position: Int64, events: [RecordedEvent]) {
        self.position = position
        self.events = events
    }
}

/// A query's answer and the log position the read model had applied when it answered.
public struct QueryAnswer: Sendable, Equatable {
    public var position: Int64
    public var result: JSONValue

    public init(position: Int64, result: JSONValue) {
        self.position = position
        self.result = result
    }
}
