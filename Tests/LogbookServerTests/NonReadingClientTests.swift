import Glibc
import LogbookJSON
import LogbookZMQ
import Testing

/// A client that sends commands and does not read the replies: once its replies fill its
/// budget its further commands are dropped unread (not decided), others are served, and
/// once it reads, resending with the same ids completes every command exactly once.
@Suite("Worker: a client that does not read its replies", .serialized)
struct NonReadingClientTests {
    static let posts = 300
    static let content = String(repeating: "x", count: 40_000)

    static func post(_ number: Int) -> [UInt8] {
        JSONWriter.bytes(
            Fixture.command(
                "post-\(number)", "CreatePost",
                ["postId": .string("p\(number)"), "authorId": "u1", "title": "Long", "content": .string(content)]))
    }

    @Test("its commands beyond the budget are not decided; others are served; resent after reading, each once")
    func notReading() throws {
        let rig = try ServiceRig()
        defer { rig.stop() }
        let good = try rig.commandsClient()
        #expect(try good.request(Fixture.registerUser("u1", commandId: "c-u1"))["ok"] == true)

        let greedy = try ZMQSocket(rig.context, .dealer)
        try greedy.set(.receiveHighWaterMark, 1)
        try greedy.connect(rig.endpoints.commands)
        // One at a time, each decided (the head moves past it) before the next, until one is
        // not: its replies filled its budget, so it was dropped unread. (A decision slower
        // than the wait only ends this early; every check below still holds.)
        let log = try DealerClient(rig.context, rig.endpoints.log)
        func head() throws -> Int {
            try log.request(["id": "h", "type": "ReadLog", "from": 1, "limit": 1])["head"]?.intValue ?? -1
        }
        var decided = 0
        sending: for number in 0..<Self.posts {
            try greedy.send([[], Self.post(number)])
            let deadline = MonotonicClock.milliseconds() + 3_000
            while try head() < 2 + number + 1 {
                guard MonotonicClock.milliseconds() < deadline else { break sending }
                usleep(10_000)
            }
            decided = number + 1
        }
        #expect(decided > 0 && decided < Self.posts, "\(decided) of \(Self.posts) posts decided")
        #expect(try good.request(Fixture.addProduct("tea", commandId: "c-tea"))["ok"] == true)

        // It reads what was kept, then sends every command again with its id, a few at a time.
        var answered = Set<String>()
        while let frames = try Self.receive(greedy, within: 1_000) { answered.insert(Self.id(frames)) }
        #expect(!answered.isEmpty)
        for first in stride(from: 0, to: Self.posts, by: 10) {
            let batch = first..<min(first + 10, Self.posts)
            for number in batch { try greedy.send([[], Self.post(number)]) }
            for _ in batch {
                let frames = try #require(
                    try Self.receive(greedy, within: patienceMilliseconds), "no reply after reading")
                answered.insert(Self.id(frames))
            }
        }
        #expect(answered.count == Self.posts)
        #expect(try head() == 2 + Self.posts + 1, "each post once, and the product")
    }

    static func receive(_ socket: borrowing ZMQSocket, within milliseconds: Int) throws -> [[UInt8]]? {
        guard try ZMQPoll.wait([socket.readable], timeoutMilliseconds: milliseconds)[0] else { return nil }
        return try socket.receive(wait: false)
    }

    static func id(_ frames: [[UInt8]]) -> String {
        guard let body = frames.last, case .object(let reply)? = try? JSONParser.parse(body) else { return "" }
        #expect(reply["ok"] == true, "\(reply)")
        return reply["id"]?.stringValue ?? ""
    }
}
