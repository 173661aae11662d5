import LogbookApplication
import LogbookDomain
import LogbookZMQ

/// What a server does with one request, given who sent it: serve it, answer `unauthorized`,
/// or drop it without a word (a key no longer in the allow-list: revoked keys get no
/// further reply). With security off every request is served.
enum Admission: Equatable {
    case serve
    case unauthorized(ServiceError)
    case drop
}

/// The per-message check of a server socket (ARCHITECTURE §11): libzmq checks a key only at
/// the handshake, so each message's user id (the sender's key, from the ZAP handler) is
/// looked up in the allow-list as it is now, and its role must allow the action.
struct RequestGuard: Sendable {
    let security: ServerSecurity?

    /// Whether the sender's key is still listed; a message from a revoked key is dropped
    /// (and counted) before it is even read.
    func isListed(_ metadata: MessageMetadata) -> Bool {
        guard let security else { return true }
        guard security.role(of: metadata.userId) != nil else {
            security.noteDropped()
            return false
        }
        return true
    }

    /// What to do with a request for `action` from the sender of `metadata`.
    func admit(_ metadata: MessageMetadata, for action: BusAction) -> Admission {
        guard let security else { return .serve }
        guard let role = security.role(of: metadata.userId) else {
            security.noteDropped()
            return .drop
        }
        guard role.may(action) else {
            let allowed = ClientRole.allCases.filter { $0.may(action) }.map(\.rawValue).joined(separator: " or ")
            return .unauthorized(
                ServiceError(
                    .unauthorized, "role \(role) may not \(Self.phrase(action)); that takes \(allowed)",
                    details: [("role", .string(role.rawValue)), ("action", .string(action.rawValue))]))
        }
        return .serve
    }

    private static func phrase(_ action: BusAction) -> String {
        switch action {
        case .command: "send commands"
        case .forget: "forget a user"
        case .query: "send queries"
        case .subscribe: "subscribe to the feed"
        case .readLog: "read the log"
        case .status: "ask for Status"
        case .rebuild: "ask for a Rebuild"
        case .hint: "send commit hints"
        case .consume: "consume as a member of a group"
        case .manageGroups: "manage consumer groups"
        }
    }
}
