public import LogbookJSON
import LogbookWire
public import LogbookZMQ

/// A member of one consumer group, for the thread that owns it: a DEALER to the groups
/// socket that joins the group, keeps the membership alive with heartbeats, joins again
/// when the groups process no longer knows it (it restarted, or took the member for gone),
/// and hands out deliveries as they come. Acks and nacks are sent as the caller finishes
/// each delivery; their replies are read in passing (`staleAcks` counts the refused ones).
public struct GroupMemberChannel: ~Copyable {
    /// One event delivered: its position, which attempt this is, and its envelope.
    public struct Delivery: Sendable, Equatable {
        public let position: Int64
        public let attempt: Int
        public let event: JSONValue
    }

    private let socket: ZMQSocket
    public let group: String
    /// Deliveries this member holds at most, when it asked for fewer than the group's.
    public let maxInFlight: Int?
    private var counter = 0
    private var joined = false
    /// When the last `Join` and heartbeat went out; nil when one is due at once.
    private var lastJoinSent: Int64?
    private var lastHeartbeatSent: Int64?
    private var heartbeatMilliseconds: Int64 = 1_000
    /// How long to wait for the reply to a `Join` before sending it again.
    static let joinRetryMilliseconds: Int64 = 1_000
    /// Whether the groups process has answered the last `Leave`.
    private var leaveAnswered = false
    /// Acks the groups process refused as stale (the delivery had gone to another member).
    public private(set) var staleAcks = 0

    /// Connects to the groups socket at `endpoint` and asks to join `group`, holding at most
    /// `maxInFlight` deliveries at once (nil: as many as the group allows); with `security`,
    /// as a CURVE client with those keys.
    public init(
        _ context: ZMQContext, endpoint: String, group: String, maxInFlight: Int? = nil,
        security: CurveClientKeys? = nil
    ) throws(ZMQError) {
        let socket = try ZMQSocket(context, .dealer)
        try socket.setMaximumMessageSize(FrameLimit.largest)
        try socket.set(.linger, 1_000)
        try socket.secure(security)
        try socket.connect(endpoint)
        self.socket = socket
        self.group = group
        self.maxInFlight = maxInFlight
    }

    /// Waits up to `timeoutMilliseconds` for a delivery, joining and sending heartbeats as
    /// needed; nil when none came, or at once when `wakeUp` is woken (it is drained). Throws
    /// `GroupMemberError.refused` when the groups process refuses the membership itself (no
    /// such group, not allowed).
    public mutating func next(timeoutMilliseconds: Int, wakeUp: WakeUpPipe? = nil) throws(GroupMemberError)
        -> Delivery?
    {
        let deadline = MonotonicClock.milliseconds() + Int64(timeoutMilliseconds)
        while true {
            let now = MonotonicClock.milliseconds()
            try keepAlive(now: now)
            let wait = max(0, min(deadline - now, heartbeatMilliseconds))
            do {
                let ready = try ZMQPoll.wait(
                    [socket.readable] + (wakeUp.map { [$0.readable] } ?? []), timeoutMilliseconds: Int(wait))
                if ready[0] {
                    while let frames = try socket.receive(wait: false) {
                        if let delivery = try read(frames) { return delivery }
                    }
                }
                if let wakeUp, ready[1] {
                    wakeUp.drain()
                    return nil
                }
            } catch let error as ZMQError {
                throw error.isTerminated ? .stopped : .transport(error.description)
            } catch let error as GroupMemberError {
                throw error
            } catch {
                throw .transport("\(error)")
            }
            if MonotonicClock.milliseconds() >= deadline { return nil }
        }
    }

    /// Tells the group these deliveries are done.
    public mutating func ack(_ positions: [Int64]) throws(GroupMemberError) {
        try send(GroupRequestDocument.ack(id: nextId(.ack), group: group, positions: positions))
    }

    /// Tells the group this delivery failed, and why.
    public mutating func nack(_ position: Int64, reason: String?) throws(GroupMemberError) {
        try send(GroupRequestDocument.nack(id: nextId(.nack), group: group, position: position, reason: reason))
    }

    /// Leaves the group: what this member holds goes to the others at once. Waits up to
    /// `timeoutMilliseconds` for the groups process to answer; the groups process handles a
    /// member's messages in order and answers only once what they changed is durable, so
    /// true means every ack sent before is settled (recorded, or refused as stale). False
    /// when no answer came in time: acks not yet recorded are delivered again.
    public mutating func leave(timeoutMilliseconds: Int) throws(GroupMemberError) -> Bool {
        let id = nextId(.leave)
        leaveAnswered = false
        try send(GroupRequestDocument.naming(.leave, id: id, group: group))
        let deadline = MonotonicClock.milliseconds() + Int64(timeoutMilliseconds)
        while !leaveAnswered {
            let wait = deadline - MonotonicClock.milliseconds()
            guard wait > 0 else { return false }
            do {
                guard try ZMQPoll.wait([socket.readable], timeoutMilliseconds: Int(wait))[0] else { continue }
                // Deliveries that come meanwhile are not handled: leaving gives them back.
                while !leaveAnswered, let frames = try socket.receive(wait: false) { _ = try? read(frames) }
            } catch {
                throw error.isTerminated ? .stopped : .transport(error.description)
            }
        }
        return true
    }

    private mutating func keepAlive(now: Int64) throws(GroupMemberError) {
        if !joined {
            if let sent = lastJoinSent, now - sent < Self.joinRetryMilliseconds { return }
            lastJoinSent = now
            try send(GroupRequestDocument.join(id: nextId(.join), group: group, maxInFlight: maxInFlight))
        } else if lastHeartbeatSent.map({ now - $0 >= heartbeatMilliseconds }) ?? true {
            lastHeartbeatSent = now
            try send(GroupRequestDocument.naming(.heartbeat, id: nextId(.heartbeat), group: group))
        }
    }

    /// A delivery, or nil after a reply (which may change the membership).
    private mutating func read(_ frames: [[UInt8]]) throws(GroupMemberError) -> Delivery? {
        guard let body = frames.last, case .object(let message)? = try? JSONParser.parse(body) else { return nil }
        if message["type"] == .string("Deliver") {
            guard case .int(let position)? = message["position"], case .int(let attempt)? = message["attempt"],
                let event = message["event"]
            else { return nil }
            return Delivery(position: Int64(position), attempt: attempt, event: event)
        }
        let type = message["id"]?.stringValue.flatMap { $0.split(separator: ":").first.map(String.init) }
        if type == GroupRequestType.leave.rawValue { leaveAnswered = true }
        if message["ok"] == .bool(true) {
            let result = message["result"]?.objectValue
            if type == GroupRequestType.join.rawValue {
                joined = true
                if let beat = result?["heartbeatMs"]?.intValue, beat > 0 { heartbeatMilliseconds = Int64(beat) }
            }
            staleAcks += result?["stale"]?.arrayValue?.count ?? 0
            return nil
        }
        let code = message["error"]?.objectValue?["code"]?.stringValue ?? ""
        let text = message["error"]?.objectValue?["message"]?.stringValue ?? "refused"
        switch code {
        case "not_a_member":
            joined = false
            lastJoinSent = nil
        case "stale_delivery":
            staleAcks += 1
        case "unknown_group", "unauthorized", "invalid_input", "malformed_request":
            throw .refused(code: code, message: text)
        default:
            break
        }
        return nil
    }

    /// Request ids say what they were for (`Join:3`), so a reply is understood without a table.
    private mutating func nextId(_ type: GroupRequestType) -> String {
        counter += 1
        return "\(type.rawValue):\(counter)"
    }

    private func send(_ document: JSONObject) throws(GroupMemberError) {
        do {
            // A full queue (the groups process is away) drops the message: heartbeats and
            // joins are sent again, and an unacknowledged delivery is delivered again.
            _ = try socket.send([[], JSONWriter.bytes(.object(document))], wait: false)
        } catch {
            throw error.isTerminated ? .stopped : .transport(error.description)
        }
    }
}

/// Why a group member cannot go on.
public enum GroupMemberError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The groups process refused the membership (no such group, a role that may not consume).
    case refused(code: String, message: String)
    /// The socket failed.
    case transport(String)
    /// The context was shut down.
    case stopped

    public var description: String {
        switch self {
        case .refused(let code, let message): "\(code): \(message)"
        case .transport(let reason): "transport: \(reason)"
        case .stopped: "stopped"
        }
    }
}
