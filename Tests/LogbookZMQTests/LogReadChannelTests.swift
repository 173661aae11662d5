import Foundation
import LogbookApplication
import LogbookFeed
import LogbookJSON
import LogbookWire
import LogbookZMQ
import Testing

/// `LogReadChannel.readEncoded` (how a rebuild reads the log) against a stand-in worker on
/// a real libzmq ROUTER socket that answers with the replies a test gives it: a page in the
/// worker's exact form is kept as its bytes, any other reply takes the general reader, a
/// malformed one is a typed error, never a crash, and a timeout leaves no request behind.
@Suite("Log read channel: pages kept as bytes", .serialized)
struct LogReadChannelTests {
    /// Answers each `ReadLog` in turn with `reply(id)`, on a thread that owns its socket.
    static func serve(_ endpoint: String, _ context: ZMQContext, replies: [@Sendable (String) -> [UInt8]])
        -> OwnedThread
    {
        OwnedThread(name: "test-log-socket") {
            do {
                let router = try ZMQSocket(context, .router)
                try router.bind(endpoint)
                for reply in replies {
                    guard let request = try receive(router, within: 5_000), request.count == 3,
                        case .object(let object)? = try? JSONParser.parse(request[2]),
                        case .string(let id)? = object["id"]
                    else { return }
                    _ = try router.send([request[0], [], reply(id)])
                }
            } catch {
                return
            }
        }
    }

    /// Runs `body` with a channel to a stand-in worker that answers with `replies`, then
    /// expects the worker to have answered them all.
    static func withChannel(
        replies: [@Sendable (String) -> [UInt8]], _ body: (inout LogReadChannel) throws -> Void
    ) throws {
        let context = try ZMQContext()
        let endpoint = temporaryIPCEndpoint()
        let worker = serve(endpoint, context, replies: replies)
        var channel = try LogReadChannel(context, endpoint: endpoint, timeoutMilliseconds: 5_000)
        try body(&channel)
        #expect(ended(worker))
    }

    static let events = [
        RecordedEvent(
            position: 1, eventId: "e1", stream: "user-u1", version: 1, type: "UserDeleted", data: #"{"userId":"u1"}"#,
            metadata: EventMetadata(commandId: "c", correlationId: "c", causationId: "c"), recordedAt: 1_000),
        RecordedEvent(
            position: 3, eventId: "e3", stream: "note\t1", version: 1, type: "Noted", data: #"{"a":[1,"é"]}"#,
            metadata: EventMetadata(commandId: "c", correlationId: "d", causationId: "e"), recordedAt: 2_000),
    ]

    @Test func aPageInTheWorkersFormIsKeptAsItsBytes() throws {
        let page = LogPage(events: Self.events, next: 4, head: 3)
        let reply: @Sendable (String) -> [UInt8] = { LogReader.replyBytes(id: $0, page) }
        try Self.withChannel(replies: [reply, reply]) { channel in
            for spare in [[], [UInt8](repeating: 7, count: 4_096)] {
                let fetched = try channel.readEncoded(from: 1, limit: 10, topics: nil, reusing: spare)
                #expect(fetched.recordedEvents() == Self.events)
                #expect(fetched.next == 4 && fetched.head == 3)
                #expect(fetched.reusableBytes() != nil, "the page was not kept as its bytes")
            }
        }
    }

    @Test func aPageInAnotherFormIsDecoded() throws {
        let page = LogPage(events: Self.events, next: 4, head: 3)
        let reply: @Sendable (String) -> [UInt8] = { id in
            guard case .object(var reply) = LogReader.reply(id: id, page) else { return [] }
            reply["extra"] = .bool(true)
            return JSONWriter.bytes(.object(reply))
        }
        try Self.withChannel(replies: [reply]) { channel in
            let fetched = try channel.readEncoded(from: 1, limit: 10, topics: nil)
            #expect(fetched.recordedEvents() == page.events)
            #expect(fetched.next == page.next && fetched.head == page.head)
            #expect(fetched.reusableBytes() == nil, "a reply in another form was taken as the worker's exact form")
        }
    }

    @Test(arguments: [
        (
            #"{"id":"ID","ok":true,"events":[{"eventId":"e"#,
            FeedFollowError.logUnavailable("the log socket sent a reply that is not JSON")
        ),
        (#"{"id":"ID","ok":false,"error":{"code":"internal","message":"disk gone"}}"#, .logRefused("disk gone")),
        (
            #"{"id":"ID","ok":true,"events":[{"eventId":"e","position":1,"stream":"s","version":1,"type":"T","data":{},"metadata":{"commandId":"c","correlationId":"c","causationId":"c"},"recordedAt":"yesterday"}],"next":2,"head":1}"#,
            .logRefused(
                "an unreadable ReadLog reply: events[0]: event envelope: recordedAt must be an RFC 3339 UTC time with milliseconds"
            )
        ),
    ])
    func aMalformedReplyIsATypedError(template: String, expected: FeedFollowError) throws {
        try Self.withChannel(replies: [{ id in Array(template.replacingOccurrences(of: "ID", with: id).utf8) }]) {
            channel in
            #expect(throws: expected) { try channel.readEncoded(from: 1, limit: 10, topics: nil) }
        }
    }

    @Test("after a timeout, a page asked for ahead on the old socket is asked for again on the new one")
    func aTimeoutForgetsTheRequestsSentAhead() throws {
        let context = try ZMQContext()
        let endpoint = temporaryIPCEndpoint()
        let page = LogPage(events: Self.events, next: 4, head: 3)
        // The stand-in worker ignores the first two requests (both pages asked for ahead, on
        // the first socket) and answers every later one.
        let worker = OwnedThread(name: "test-log-socket") {
            do {
                let router = try ZMQSocket(context, .router)
                try router.bind(endpoint)
                for number in 1...3 {
                    guard let request = try receive(router, within: 5_000), request.count == 3,
                        case .object(let object)? = try? JSONParser.parse(request[2]),
                        case .string(let id)? = object["id"]
                    else { return }
                    if number > 2 { _ = try router.send([request[0], [], LogReader.replyBytes(id: id, page)]) }
                }
            } catch {
                return
            }
        }
        var channel = try LogReadChannel(context, endpoint: endpoint, timeoutMilliseconds: 300)
        // Both pages asked for ahead; the read of the first takes its request and times out.
        channel.requestAhead(from: 1, limit: 10, topics: nil)
        channel.requestAhead(from: 11, limit: 10, topics: nil)
        #expect(throws: FeedFollowError.self) { try channel.read(from: 1, limit: 10, topics: nil) }
        // Without forgetting it, this read would wait for the reply to the request sent ahead,
        // which the new socket never gets, and time out again.
        let read = try channel.read(from: 11, limit: 10, topics: nil)
        #expect(read == page)
        #expect(ended(worker))
    }
}
