import Glibc
import LogbookZMQ
import Testing

@testable import LogbookServer

/// `ReplyOutbox` on a real ROUTER (`ServerSockets.router`) and a real DEALER over ipc: a
/// client that does not read pins at most its budget; when it reads it gets every kept
/// reply, in order; a client that is gone pins no more, and others are served.
@Suite("Reply outbox: what a client that does not read can pin", .serialized)
struct ReplyOutboxTests {
    static let replyBytes = 1 << 20
    static let budget = 4 << 20

    @Test("replies beyond the queue wait up to the budget, then are dropped; reading gets the kept ones, in order")
    func boundedThenDelivered() throws {
        let context = try ZMQContext()
        let endpoint = "ipc:///tmp/logbook-outbox-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let router = try ServerSockets.router(context, at: endpoint, replies: .logPages)
        let client = try ZMQSocket(context, .dealer)
        try client.set(.receiveHighWaterMark, 1)
        try client.connect(endpoint)
        try client.send([[], Array("hello".utf8)])
        let request = try #require(try Self.receive(router), "the router got no request")
        let route = Array(request.dropLast())

        var outbox = ReplyOutbox(budgetBytes: Self.budget)
        var outcomes: [ReplyOutbox.Delivery] = []
        // Until the client's queues (libzmq's and the kernel's) are full and the budget is spent.
        for number in 0..<400 where outcomes.last != .overBudget {
            outcomes.append(try outbox.send(route + [Self.reply(number)], on: router))
            if outcomes.last == .sent { usleep(2_000) }
        }
        #expect(outcomes.last == .overBudget, "the budget was never reached: \(outcomes.count) replies")
        let kept = outcomes.filter { $0 == .kept }.count
        #expect(kept >= 1 && kept * Self.replyBytes <= Self.budget, "kept \(kept)")
        #expect(outbox.isOverBudget(route))
        #expect(!outcomes.contains(.gone))

        // The client reads: it gets every reply sent or kept, in order, and none dropped.
        let delivered = outcomes.prefix { $0 != .overBudget }.count
        var received: [Int] = []
        let deadline = MonotonicClock.milliseconds() + Int64(patienceMilliseconds)
        while received.count < delivered && MonotonicClock.milliseconds() < deadline {
            try outbox.flush(on: router)
            if let frames = try client.receive(wait: false) { received.append(Self.number(frames)) }
        }
        #expect(received == Array(0..<delivered))
        #expect(outbox.isEmpty)
        // Served again: the next reply goes out (at once, or from the outbox).
        #expect(try outbox.send(route + [Self.reply(9_999)], on: router) != .overBudget)
        var last: Int?
        while last == nil && MonotonicClock.milliseconds() < deadline {
            try outbox.flush(on: router)
            if let frames = try client.receive(wait: false) { last = Self.number(frames) }
        }
        #expect(last == 9_999)
    }

    @Test("a client gone with replies waiting pins no more than its budget, and a new client is served")
    func goneClient() throws {
        let context = try ZMQContext()
        let endpoint = "ipc:///tmp/logbook-outbox-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let router = try ServerSockets.router(context, at: endpoint, replies: .logPages)
        var outbox = ReplyOutbox(budgetBytes: Self.budget)
        do {
            let client = try ZMQSocket(context, .dealer)
            try client.set(.receiveHighWaterMark, 1)
            try client.connect(endpoint)
            try client.send([[], Array("hello".utf8)])
            let route = Array(try #require(try Self.receive(router)).dropLast())
            for number in 0..<400 where outbox.isEmpty {
                _ = try outbox.send(route + [Self.reply(number)], on: router)
            }
            #expect(!outbox.isEmpty)
        }
        // Its socket is closed. Whatever waits for it is dropped once libzmq says it is gone
        // (`flush` then forgets it); until then it stays within the budget, and others are
        // served. When libzmq says so varies (in full runs it kept the pipe past two minutes),
        // so the test turns as a serving loop does (reads the ROUTER, flushes) a hundred
        // times rather than wait for it: it runs on one of the pool's few threads.
        for _ in 0..<100 where !outbox.isEmpty {
            _ = try router.receive(wait: false)
            try outbox.flush(on: router)
            usleep(10_000)
        }
        #expect(outbox.waitingCount * Self.replyBytes <= Self.budget)
        let next = try ZMQSocket(context, .dealer)
        try next.connect(endpoint)
        try next.send([[], Array("again".utf8)])
        let route = Array(try #require(try Self.receive(router)).dropLast())
        #expect(try outbox.send(route + [Self.reply(7)], on: router) == .sent)
        let frames = try #require(try Self.receive(next))
        #expect(Self.number(frames) == 7)
    }

    /// A reply of `replyBytes` whose first eight bytes are its number.
    static func reply(_ number: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0x2E, count: replyBytes)
        withUnsafeBytes(of: UInt64(number).littleEndian) { bytes.replaceSubrange(0..<8, with: $0) }
        return bytes
    }

    static func number(_ frames: [[UInt8]]) -> Int {
        guard let body = frames.last, body.count >= 8 else { return -1 }
        return Int(body[0..<8].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) })
    }

    static func receive(_ socket: borrowing ZMQSocket) throws -> [[UInt8]]? {
        guard try ZMQPoll.wait([socket.readable], timeoutMilliseconds: 5_000)[0] else { return nil }
        return try socket.receive(wait: false)
    }
}
