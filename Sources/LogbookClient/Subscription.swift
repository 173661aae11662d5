import Glibc
public import LogbookApplication
import LogbookFeed
public import LogbookWire
import LogbookZMQ
import Synchronization

extension LogbookClient {
    /// The change feed of `topics` from position `from` on, as an async stream of events in
    /// position order with no hole and no repeat: whatever the feed drops (a slow start, a
    /// full queue, a reconnect, a worker restart) is read from the log socket before
    /// anything newer is yielded. While the worker is unreachable the subscription waits
    /// and tries again; it ends (throwing) only when the log refuses a read. Ending the
    /// iteration (or cancelling its task) stops the subscription's thread and sockets.
    ///
    /// Events are buffered in the stream until the consumer takes them.
    public func subscribe(topics: [FeedTopic] = FeedTopic.allCases, from position: Int64 = 1)
        -> AsyncThrowingStream<RecordedEvent, any Error>
    {
        let (stream, continuation) = AsyncThrowingStream<RecordedEvent, any Error>.makeStream()
        let context: ZMQContext
        do {
            context = try ZMQContext()
        } catch {
            continuation.finish(throwing: LogbookClientError.transport(error.description))
            return stream
        }
        let subscription = FeedSubscription(
            context: context, endpoints: endpoints, topics: topics, cursor: position > 1 ? position - 1 : 0,
            security: security)
        continuation.onTermination = { _ in subscription.stop() }
        subscription.start(continuation)
        return stream
    }
}

/// One subscription's thread: owns a `FeedFollower` (its SUB and log DEALER sockets, in
/// a context of its own so stopping it touches nothing else) and yields what it hands out.
private final class FeedSubscription: Sendable {
    static let pollMilliseconds = 250
    static let retryMilliseconds = 500

    private let context: ZMQContext
    private let endpoints: ClientEndpoints
    private let topics: [FeedTopic]
    private let cursor: Int64
    private let security: CurveClientKeys?
    private let stopped = Atomic(false)

    init(
        context: ZMQContext, endpoints: ClientEndpoints, topics: [FeedTopic], cursor: Int64,
        security: CurveClientKeys?
    ) {
        self.security = security
        self.context = context
        self.endpoints = endpoints
        self.topics = topics
        self.cursor = cursor
    }

    func stop() {
        stopped.store(true, ordering: .releasing)
        context.shutdown()
    }

    func start(_ continuation: AsyncThrowingStream<RecordedEvent, any Error>.Continuation) {
        _ = OwnedThread(name: "logbook-subscription") { [self] in
            do {
                var follower = try FeedFollower(
                    context, feed: endpoints.feed, log: endpoints.log, topics: topics, cursor: cursor,
                    security: security)
                while !stopped.load(ordering: .acquiring) {
                    do throws(FeedFollowError) {
                        let batch = try follower.waitForNext(timeoutMilliseconds: Self.pollMilliseconds).batch
                        for event in batch.events { continuation.yield(event) }
                    } catch .logUnavailable {
                        // The worker is down or restarting: keep the cursor, wait, read the log again.
                        usleep(UInt32(Self.retryMilliseconds * 1000))
                        follower.requestCatchUp()
                    }
                }
                continuation.finish()
            } catch let error as FeedFollowError where error == .stopped {
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }
}
