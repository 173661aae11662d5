import CZeroMQ
import Glibc

/// A libzmq socket, owned by exactly one thread for its whole life: it is not copyable and
/// not `Sendable`, so the compiler refuses to share it or move it across threads. Create
/// it on the thread that will use it; it is closed when its owner lets go of it.
///
/// Messages are lists of frames, each received through `zmq_msg_t` (any size, no fixed
/// buffer). Interrupted calls are retried; a shut-down context surfaces as an error whose
/// `isTerminated` is true.
public struct ZMQSocket: ~Copyable {
    let handle: UnsafeMutableRawPointer
    private let context: ZMQContext

    /// Creates a socket with linger 0 (pending messages are dropped at close) unless set
    /// otherwise.
    public init(_ context: ZMQContext, _ kind: SocketKind) throws(ZMQError) {
        guard let handle = zmq_socket(context.handle, kind.rawValue) else { throw ZMQError.last("zmq_socket") }
        self.handle = handle
        self.context = context
        var zero: Int32 = 0
        zmq_setsockopt(handle, ZMQ_LINGER, &zero, MemoryLayout<Int32>.size)
    }

    deinit {
        zmq_close(handle)
    }

    public func bind(_ endpoint: String) throws(ZMQError) {
        guard zmq_bind(handle, endpoint) == 0 else { throw ZMQError.last("bind \(endpoint)") }
    }

    public func connect(_ endpoint: String) throws(ZMQError) {
        guard zmq_connect(handle, endpoint) == 0 else { throw ZMQError.last("connect \(endpoint)") }
    }

    /// The endpoint last bound, with the port the system chose for `tcp://host:*`.
    public func lastEndpoint() throws(ZMQError) -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        var size = buffer.count
        guard zmq_getsockopt(handle, ZMQ_LAST_ENDPOINT, &buffer, &size) == 0 else {
            throw ZMQError.last("ZMQ_LAST_ENDPOINT")
        }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public func set(_ option: SocketOption, _ value: Int32) throws(ZMQError) {
        var value = value
        guard zmq_setsockopt(handle, option.rawValue, &value, MemoryLayout<Int32>.size) == 0 else {
            throw ZMQError.last("zmq_setsockopt \(option)")
        }
    }

    /// Sets an option whose value is bytes (a CURVE key, the ZAP domain).
    public func set(_ option: BinarySocketOption, bytes: [UInt8]) throws(ZMQError) {
        guard zmq_setsockopt(handle, option.rawValue, bytes, bytes.count) == 0 else {
            throw ZMQError.last("zmq_setsockopt \(option)")
        }
    }

    /// The largest inbound message libzmq accepts; a peer sending a bigger one is
    /// disconnected before the message reaches the owner.
    public func setMaximumMessageSize(_ bytes: Int64) throws(ZMQError) {
        var value = bytes
        guard zmq_setsockopt(handle, ZMQ_MAXMSGSIZE, &value, MemoryLayout<Int64>.size) == 0 else {
            throw ZMQError.last("zmq_setsockopt ZMQ_MAXMSGSIZE")
        }
    }

    /// Subscribes a SUB socket to messages whose first frame starts with `prefix`.
    public func subscribe(_ prefix: String) throws(ZMQError) {
        let bytes = Array(prefix.utf8)
        guard zmq_setsockopt(handle, ZMQ_SUBSCRIBE, bytes, bytes.count) == 0 else {
            throw ZMQError.last("ZMQ_SUBSCRIBE \(prefix)")
        }
    }

    /// Sends one message. Returns false, sending nothing, when `wait` is false and the
    /// message cannot be queued now (the peer's queue is full), or when a ROUTER with
    /// `routerMandatory` has no peer of that identity (it disconnected).
    @discardableResult
    public func send(_ frames: [[UInt8]], wait: Bool = true) throws(ZMQError) -> Bool {
        try offer(frames, wait: wait) == .sent
    }

    /// Sends one message without waiting (unless `wait`) and says what became of it: sent,
    /// refused because the peer's queue is at its high-water mark (`full`), or refused
    /// because a ROUTER with `routerMandatory` has no peer of that identity (`unroutable`).
    public func offer(_ frames: [[UInt8]], wait: Bool = false) throws(ZMQError) -> SendOutcome {
        precondition(!frames.isEmpty, "a message has at least one frame")
        for (index, frame) in frames.enumerated() {
            var flags: Int32 = index < frames.count - 1 ? ZMQ_SNDMORE : 0
            if !wait { flags |= ZMQ_DONTWAIT }
            while true {
                let sent = frame.withUnsafeBytes { zmq_send(handle, $0.baseAddress, $0.count, flags) }
                if sent >= 0 { break }
                let error = zmq_errno()
                if error == EINTR { continue }
                // Only the first frame can be refused: later ones join an accepted message.
                if index == 0 && error == EAGAIN { return .full }
                if index == 0 && error == EHOSTUNREACH { return .unroutable }
                throw ZMQError("zmq_send", errno: error)
            }
        }
        return .sent
    }

    /// Receives one whole message. Returns nil when `wait` is false and none is waiting.
    public func receive(wait: Bool = true) throws(ZMQError) -> [[UInt8]]? {
        try receiveFrames(wait: wait, metadata: false)?.frames
    }

    /// `receive`, copying the message's last frame into `spare`'s storage (grown when it is
    /// too small, by an eighth more than needed) unless `spare` is empty: a reader of large
    /// replies reuses its buffers instead of having fresh pages mapped for every reply.
    public func receive(wait: Bool = true, reusing spare: consuming [UInt8]) throws(ZMQError) -> [[UInt8]]? {
        try receiveFrames(wait: wait, metadata: false, spare: spare)?.frames
    }

    /// Receives one whole message with what libzmq knows of the connection it came on
    /// (`zmq_msg_gets`: the user id and role a ZAP handler gave it, the peer's address).
    /// Returns nil when `wait` is false and none is waiting.
    public func receiveMessage(wait: Bool = true) throws(ZMQError) -> ReceivedMessage? {
        guard let (frames, metadata) = try receiveFrames(wait: wait, metadata: true) else { return nil }
        return ReceivedMessage(frames: frames, metadata: metadata)
    }

    private func receiveFrames(wait: Bool, metadata: Bool, spare: consuming [UInt8] = []) throws(ZMQError) -> (
        frames: [[UInt8]], metadata: MessageMetadata
    )? {
        var frames: [[UInt8]] = []
        var message = zmq_msg_t()
        zmq_msg_init(&message)
        defer { zmq_msg_close(&message) }
        while true {
            let flags: Int32 = (wait || !frames.isEmpty) ? 0 : ZMQ_DONTWAIT
            if zmq_msg_recv(&message, handle, flags) < 0 {
                let error = zmq_errno()
                if error == EINTR { continue }
                if error == EAGAIN && frames.isEmpty { return nil }
                throw ZMQError("zmq_msg_recv", errno: error)
            }
            let size = zmq_msg_size(&message)
            let data = zmq_msg_data(&message)
            let bytes = UnsafeRawBufferPointer(start: data, count: size)
            guard zmq_msg_more(&message) == 0 else {
                frames.append(size == 0 ? [] : Array(bytes))
                continue
            }
            if spare.capacity > 0 && size > 0 {
                spare.removeAll(keepingCapacity: true)
                // Room to spare, so that a slightly larger reply later still fits.
                spare.reserveCapacity(size + size / 8)
                spare.append(contentsOf: bytes)
                frames.append(spare)
            } else {
                frames.append(size == 0 ? [] : Array(bytes))
            }
            // Every frame of a message carries its connection's properties; the last is read.
            return (frames, metadata ? MessageMetadata(of: &message) : MessageMetadata())
        }
    }

    /// This socket as an entry of `ZMQPoll.wait`, waiting until it can be read.
    public var readable: PollItem { PollItem(socket: handle) }

    /// This socket as an entry of `ZMQPoll.ready`, watched for `events`.
    public func watched(for events: PollEvents) -> PollItem { PollItem(socket: handle, events: events) }
}

/// What became of a message `ZMQSocket.offer` tried to send.
public enum SendOutcome: Sendable, Equatable {
    case sent
    /// The peer's queue is at its high-water mark; nothing was sent.
    case full
    /// A ROUTER (with `routerMandatory`) has no peer of that identity; nothing was sent.
    case unroutable
}

/// The integer socket options Logbook sets.
public enum SocketOption: Sendable {
    case linger, sendHighWaterMark, receiveHighWaterMark, routerMandatory, immediate
    case reconnectInterval, reconnectIntervalMax, heartbeatInterval, heartbeatTimeout, heartbeatTTL
    /// 1: this socket is the CURVE server of its connections (set before `bind`).
    case curveServer

    var rawValue: Int32 {
        switch self {
        case .linger: ZMQ_LINGER
        case .sendHighWaterMark: ZMQ_SNDHWM
        case .receiveHighWaterMark: ZMQ_RCVHWM
        case .routerMandatory: ZMQ_ROUTER_MANDATORY
        case .immediate: ZMQ_IMMEDIATE
        case .reconnectInterval: ZMQ_RECONNECT_IVL
        case .reconnectIntervalMax: ZMQ_RECONNECT_IVL_MAX
        case .heartbeatInterval: ZMQ_HEARTBEAT_IVL
        case .heartbeatTimeout: ZMQ_HEARTBEAT_TIMEOUT
        case .heartbeatTTL: ZMQ_HEARTBEAT_TTL
        case .curveServer: ZMQ_CURVE_SERVER
        }
    }
}

/// The socket options Logbook sets whose value is bytes.
public enum BinarySocketOption: Sendable {
    /// This socket's own long-term CURVE keys (32 bytes each).
    case curvePublicKey, curveSecretKey
    /// The server's long-term public key, for a CURVE client (32 bytes).
    case curveServerKey
    /// The domain a CURVE server's connections are presented to the ZAP handler under.
    case zapDomain

    var rawValue: Int32 {
        switch self {
        case .curvePublicKey: ZMQ_CURVE_PUBLICKEY
        case .curveSecretKey: ZMQ_CURVE_SECRETKEY
        case .curveServerKey: ZMQ_CURVE_SERVERKEY
        case .zapDomain: ZMQ_ZAP_DOMAIN
        }
    }
}
