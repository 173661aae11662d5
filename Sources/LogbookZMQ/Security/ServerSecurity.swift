import Synchronization

/// CURVE on a process's server sockets: the server's key pair, the allow-list of client keys
/// (reloadable while the process runs), and the counts of handshakes admitted and refused.
/// Shared by the process's threads: the ZAP handler asks it about each handshake, and each
/// server loop asks it, per message, for the current role of the sender's key.
public final class ServerSecurity: Sendable {
    public let keys: CurveKeyPair
    /// Where the allow-list is read from (again on `reload()`).
    public let clientsDirectory: String
    private let list: Mutex<AllowList>
    private let admittedCount = Atomic(0)
    private let refusedCount = Atomic(0)
    private let droppedCount = Atomic(0)
    private let reloadWatchers = Mutex<[WakeUpPipe]>([])

    /// Reads the server's secret certificate and the allow-list directory.
    public convenience init(secretCertificate path: String, clientsDirectory: String) throws(SecuritySetupError) {
        guard ZMQContext.has("curve") else { throw .noCurve }
        let keys: CurveKeyPair
        do throws(KeyFileError) {
            guard let pair = try KeyFiles.secretCertificate(at: path).keyPair else {
                throw KeyFileError(path, .notSecret)
            }
            keys = pair
        } catch {
            throw .serverCertificate(error)
        }
        let allowList: AllowList
        do {
            allowList = try AllowList.load(directory: clientsDirectory)
        } catch {
            throw .allowList(error)
        }
        self.init(keys: keys, allowList: allowList, from: clientsDirectory)
    }

    public init(keys: CurveKeyPair, allowList: AllowList, from clientsDirectory: String) {
        self.keys = keys
        self.clientsDirectory = clientsDirectory
        list = Mutex(allowList)
    }

    /// The allow-list in force.
    public var allowList: AllowList { list.withLock { $0 } }

    /// The current role of the key a connection authenticated with (its user id); nil for
    /// a key no longer listed, or none.
    public func role(of key: String?) -> ClientRole? {
        guard let key else { return nil }
        return list.withLock { $0.role(of: key) }
    }

    /// Reads the allow-list directory again and puts it in force, then wakes every reload
    /// watcher (the feed's owner re-binds its socket so every subscriber is admitted again).
    /// On an error the list in force stays.
    @discardableResult
    public func reload() throws(AllowListError) -> AllowList {
        let fresh = try AllowList.load(directory: clientsDirectory)
        list.withLock { $0 = fresh }
        for watcher in reloadWatchers.withLock({ $0 }) { watcher.wake() }
        return fresh
    }

    /// A pipe that becomes readable after each reload, for a thread that polls.
    public func watchReloads() throws(ZMQError) -> WakeUpPipe {
        let pipe = try WakeUpPipe()
        reloadWatchers.withLock { $0.append(pipe) }
        return pipe
    }

    /// Makes `socket` a CURVE server of `domain` with this process's keys. Call before `bind`.
    public func secureServer(_ socket: borrowing ZMQSocket, domain: ZAPDomain) throws(ZMQError) {
        try socket.set(.curveServer, 1)
        try socket.set(.curveSecretKey, bytes: keys.secretKey.bytes)
        try socket.set(.zapDomain, bytes: Array(domain.rawValue.utf8))
    }

    /// Counts a request a server dropped unanswered: its sender's key is no longer listed.
    public func noteDropped() {
        droppedCount.add(1, ordering: .relaxed)
    }

    /// Handshakes admitted so far (each count only grows; a process reports the three as the
    /// `peers` of its `Status`).
    public var handshakesAdmitted: Int { admittedCount.load(ordering: .relaxed) }

    /// Handshakes refused so far.
    public var handshakesRefused: Int { refusedCount.load(ordering: .relaxed) }

    /// Requests dropped unanswered so far, their sender's key no longer listed.
    public var requestsDropped: Int { droppedCount.load(ordering: .relaxed) }

    /// The ZAP answer for a handshake, counted: admitted (with the key's role) only for a
    /// CURVE client whose key is listed and whose role may use `domain`.
    func answer(mechanism: String, key: String?, credentialCount: Int, domain: String)
        -> (reply: ZAPReply, role: ClientRole?)
    {
        let refusal: String
        if mechanism != "CURVE" {
            refusal = "mechanism \(mechanism.isEmpty ? "none" : mechanism) is refused; only CURVE is admitted"
        } else if credentialCount != 1 || key == nil {
            refusal = "no CURVE public key in the request"
        } else if let key, let role = role(of: key) {
            if let action = ZAPDomain(rawValue: domain)?.action, !role.may(action) {
                refusal = "role \(role) may not connect to the \(domain) socket (\(action))"
            } else {
                admittedCount.add(1, ordering: .relaxed)
                let metadata = [Certificate.Property(ZAPMetadata.roleProperty, role.rawValue)]
                return (.admitted(userId: key, metadata: metadata), role)
            }
        } else {
            refusal = "unknown key"
        }
        refusedCount.add(1, ordering: .relaxed)
        return (.refused(refusal), nil)
    }
}

/// Why a server cannot turn CURVE on.
public enum SecuritySetupError: Error, Sendable, Equatable, CustomStringConvertible {
    /// This libzmq was built without CURVE.
    case noCurve
    case serverCertificate(KeyFileError)
    case allowList(AllowListError)

    public var description: String {
        switch self {
        case .noCurve: "this libzmq has no CURVE (zmq_has(\"curve\") is false)"
        case .serverCertificate(let error): "server certificate \(error)"
        case .allowList(let error): "clients: \(error)"
        }
    }
}
