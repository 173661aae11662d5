public import LogbookApplication
import LogbookFeed
import LogbookJSON
import LogbookWire
import LogbookZMQ
import Synchronization

extension LogbookClient {
    /// A member of consumer group `group` on the groups process (`ClientEndpoints.groups`),
    /// as an async stream of deliveries: at least once, each stream's events in order, and
    /// each delivery to be acked (`GroupMessage.ack()`) or nacked once handled. The member
    /// joins again by itself when the groups process restarts or took it for gone. The
    /// stream ends (throwing `LogbookClientError.rejected`) when the groups process refuses
    /// the membership (no such group, a key not allowed to consume).
    ///
    /// Ending the iteration (or cancelling its task) leaves the group once the acks and
    /// nacks given so far are sent; what the member still held goes to the other members.
    /// At most `maxInFlight` deliveries (the group's `maxInFlight` when nil or larger) wait
    /// in the stream at a time: a consumer that handles one at a time passes 1, so that what
    /// it has not started goes to the other members instead of waiting out `ackWaitMs`.
    public func consume(group: String, maxInFlight: Int? = nil) -> AsyncThrowingStream<GroupMessage, any Error> {
        let (stream, continuation) = AsyncThrowingStream<GroupMessage, any Error>.makeStream()
        let member: GroupConsumer
        do {
            member = try GroupConsumer(
                endpoint: endpoints.groups, group: group, maxInFlight: maxInFlight, security: security)
        } catch {
            continuation.finish(throwing: LogbookClientError.transport(error.description))
            return stream
        }
        continuation.onTermination = { _ in member.stop() }
        member.start(continuation)
        return stream
    }
}

/// One event delivered to a consumer-group member: its position, which attempt this is (1
/// for the first), and the event. `ack()` or `nack(reason:)` it once handled: until then
/// the group delivers no later event of its stream.
public struct GroupMessage: Sendable {
    public let position: Int64
    public let attempt: Int
    public let event: RecordedEvent
    fileprivate let replies: GroupConsumer.Replies

    /// The event is handled: the group will not deliver it again.
    public func ack() { replies.add(.ack(position)) }

    /// Handling failed: the group delivers it again (to any member), and parks it after its
    /// last allowed attempt. `reason` is kept with the event for `groups parked`.
    public func nack(reason: String) { replies.add(.nack(position, reason)) }
}

/// One member's thread: owns a `GroupMemberChannel` (its DEALER, in a context of its own)
/// and sends the acks and nacks other tasks hand it through `Replies`.
private final class GroupConsumer: Sendable {
    /// What the caller decided about deliveries, waiting for the member's thread.
    final class Replies: Sendable {
        enum Reply: Sendable {
            case ack(Int64)
            case nack(Int64, String)
        }

        private let queued = Mutex<[Reply]>([])
        let wakeUp: WakeUpPipe

        init() throws(ZMQError) { wakeUp = try WakeUpPipe() }

        func add(_ reply: Reply) {
            queued.withLock { $0.append(reply) }
            wakeUp.wake()
        }

        func take() -> [Reply] {
            queued.withLock { replies in
                defer { replies = [] }
                return replies
            }
        }
    }

    /// How long the thread waits for a delivery before it looks at its stop flag again.
    static let pollMilliseconds = 250
    /// How long leaving waits for the groups process to settle the acks sent before.
    static let leaveTimeoutMilliseconds = 5_000

    private let context: ZMQContext
    private let endpoint: String
    private let group: String
    private let maxInFlight: Int?
    private let security: CurveClientKeys?
    private let replies: Replies
    private let stopped = Atomic(false)

    init(endpoint: String, group: String, maxInFlight: Int?, security: CurveClientKeys?) throws(ZMQError) {
        context = try ZMQContext()
        replies = try Replies()
        self.endpoint = endpoint
        self.group = group
        self.maxInFlight = maxInFlight
        self.security = security
    }

    func stop() {
        stopped.store(true, ordering: .releasing)
        replies.wakeUp.wake()
    }

    func start(_ continuation: AsyncThrowingStream<GroupMessage, any Error>.Continuation) {
        _ = OwnedThread(name: "logbook-group-member") { [self] in
            do throws(GroupMemberError) {
                var member = try Self.open(
                    context, endpoint: endpoint, group: group, maxInFlight: maxInFlight, security: security)
                while !stopped.load(ordering: .acquiring) {
                    try send(replies.take(), through: &member)
                    guard
                        let delivery = try member.next(
                            timeoutMilliseconds: Self.pollMilliseconds, wakeUp: replies.wakeUp)
                    else { continue }
                    continuation.yield(try message(from: delivery))
                }
                try send(replies.take(), through: &member)
                _ = try member.leave(timeoutMilliseconds: Self.leaveTimeoutMilliseconds)
                continuation.finish()
            } catch .refused(let code, let message) {
                continuation.finish(
                    throwing: LogbookClientError.rejected(ServiceErrorReply(code: code, message: message)))
            } catch .stopped {
                continuation.finish()
            } catch {
                continuation.finish(throwing: LogbookClientError.transport(error.description))
            }
            context.shutdown()
        }
    }

    private static func open(
        _ context: ZMQContext, endpoint: String, group: String, maxInFlight: Int?, security: CurveClientKeys?
    ) throws(GroupMemberError) -> GroupMemberChannel {
        do {
            return try GroupMemberChannel(
                context, endpoint: endpoint, group: group, maxInFlight: maxInFlight, security: security)
        } catch {
            throw .transport(error.description)
        }
    }

    private func send(_ decided: [Replies.Reply], through member: inout GroupMemberChannel) throws(GroupMemberError) {
        let acked = decided.compactMap { if case .ack(let position) = $0 { position } else { nil } }
        if !acked.isEmpty { try member.ack(acked) }
        for case .nack(let position, let reason) in decided { try member.nack(position, reason: reason) }
    }

    /// The delivery as the caller sees it; an envelope that does not decode is a broken
    /// groups process, and ends the stream.
    private func message(from delivery: GroupMemberChannel.Delivery) throws(GroupMemberError) -> GroupMessage {
        do {
            let event = try WireDecoding.recordedEvent(from: delivery.event)
            return GroupMessage(position: delivery.position, attempt: delivery.attempt, event: event, replies: replies)
        } catch {
            throw .transport("delivery \(delivery.position) holds no event envelope: \(error.message)")
        }
    }
}
