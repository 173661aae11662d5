import LogbookZMQ

/// Runs a `LoadPlan`: starts its threads (dedicated ones, never Swift's cooperative pool),
/// lets every client connect, starts them together and returns what they observed.
enum LoadDriver {
    /// Time given to the connections (and a feed subscription) to be made before the start.
    static let connectMilliseconds = 300

    static func run(_ plan: LoadPlan, context: ZMQContext) throws(BenchError) -> LoadResult {
        let threadCount = max(1, min(plan.threads, plan.clients))
        let outcomes = StartLine.runTogether(
            count: threadCount, name: "bench-load", settleMilliseconds: connectMilliseconds
        ) { index, startLine in
            var thread = LoadThread(index: index, threadCount: threadCount, plan: plan)
            return thread.run(context: context, startLine: startLine)
        }
        var total = LoadResult()
        for result in outcomes { total.merge(result) }
        if let error = total.errors.first { throw BenchError("load client: \(error)") }
        return total
    }
}

/// A socket held by reference, so one thread can keep several in an array.
private final class SocketBox {
    let socket: ZMQSocket

    init(_ socket: consuming ZMQSocket) {
        self.socket = socket
    }
}

/// One load thread: owns the DEALER sockets of its share of the clients (and, for the
/// first thread of a feed run, a SUB socket), sends on them and reads every reply.
private struct LoadThread {
    let index: Int
    let threadCount: Int
    let plan: LoadPlan

    private struct Client {
        let number: Int
        var next = 0
        var inFlight: [Int: UInt64] = [:]
        var dueAt: UInt64 = 0
    }

    private var result = LoadResult()

    init(index: Int, threadCount: Int, plan: LoadPlan) {
        self.index = index
        self.threadCount = threadCount
        self.plan = plan
    }

    mutating func run(context: ZMQContext, startLine: StartLine) -> LoadResult {
        var sockets: [SocketBox] = []
        var clients: [Client] = []
        var feed: SocketBox?
        do {
            for number in stride(from: index, to: plan.clients, by: threadCount) {
                let socket = try ZMQSocket(context, .dealer)
                try socket.set(.sendHighWaterMark, 0)
                try socket.set(.receiveHighWaterMark, 0)
                if !plan.otherEndpoints.isEmpty { try socket.set(.immediate, 1) }
                try socket.secure(plan.curve)
                for endpoint in [plan.endpoint] + plan.otherEndpoints { try socket.connect(endpoint) }
                sockets.append(SocketBox(socket))
                clients.append(Client(number: number))
            }
            if index == 0, let endpoint = plan.feedEndpoint {
                let socket = try ZMQSocket(context, .subscriber)
                try socket.set(.receiveHighWaterMark, 0)
                try socket.subscribe("")
                try socket.secure(plan.curve)
                try socket.connect(endpoint)
                feed = SocketBox(socket)
            }
        } catch {
            result.errors.append("cannot set up a load socket: \(error)")
        }
        let start = startLine.arriveAndWait()
        result.startedAt = start
        guard result.errors.isEmpty else { return result }
        do {
            try serve(sockets: sockets, clients: &clients, feed: feed, start: start)
        } catch {
            result.errors.append("\(error)")
        }
        return result
    }

    private mutating func serve(sockets: [SocketBox], clients: inout [Client], feed: SocketBox?, start: UInt64)
        throws(ZMQError)
    {
        var stopAt = UInt64.max
        var perClientLimit = Int.max
        switch plan.length {
        case .seconds(let seconds): stopAt = start + UInt64(seconds * 1e9)
        case .requestsPerClient(let count): perClientLimit = count
        }
        var interval: UInt64 = 0
        if case .paced(let perSecond, _) = plan.pacing {
            interval = UInt64(1e9 * Double(plan.clients) / perSecond)
            // Spread the clients' schedules over one interval.
            for slot in clients.indices {
                clients[slot].dueAt = start + interval * UInt64(clients[slot].number) / UInt64(plan.clients)
            }
        }
        var items = sockets.map { $0.socket.readable }
        if let feed { items.append(feed.socket.readable) }
        var drainUntil = UInt64.max

        while true {
            var now = BenchClock.nanoseconds()
            let sending = now < stopAt
            var anyInFlight = false
            var nextDue = UInt64.max
            for slot in clients.indices {
                sendLoop: while sending && clients[slot].next < perClientLimit {
                    switch plan.pacing {
                    case .closedLoop(let window):
                        guard clients[slot].inFlight.count < window else { break sendLoop }
                    case .paced(_, let maximumInFlight):
                        guard clients[slot].dueAt <= now, clients[slot].inFlight.count < maximumInFlight else {
                            break sendLoop
                        }
                        clients[slot].dueAt += interval
                    }
                    guard try send(sockets[slot].socket, &clients[slot]) else { break sendLoop }
                    now = BenchClock.nanoseconds()
                }
                anyInFlight = anyInFlight || !clients[slot].inFlight.isEmpty
                if sending && clients[slot].next < perClientLimit { nextDue = min(nextDue, clients[slot].dueAt) }
            }
            let doneSending = !sending || clients.allSatisfy { $0.next >= perClientLimit }
            if doneSending {
                if !anyInFlight { break }
                if drainUntil == .max { drainUntil = now + UInt64(plan.drainSeconds * 1e9) }
                if now >= drainUntil { break }
            }

            var timeout = 100
            if case .paced = plan.pacing, !doneSending {
                // zmq_poll waits whole milliseconds: a send due within the next one waits
                // at most that long and goes out with the others due by then.
                // A send already due could not go (too many in flight): wait for replies.
                timeout = nextDue <= now ? 1 : max(1, Int((nextDue - now) / 1_000_000))
            }
            if stopAt != .max && !doneSending {
                timeout = min(timeout, max(1, Int((stopAt - min(stopAt, now)) / 1_000_000) + 1))
            }
            let ready = try ZMQPoll.wait(items, timeoutMilliseconds: timeout)
            for slot in clients.indices where ready[slot] {
                while let frames = try sockets[slot].socket.receive(wait: false) {
                    handleReply(frames, &clients[slot])
                }
            }
            if let feed, ready[sockets.count] {
                while let frames = try feed.socket.receive(wait: false) {
                    let arrived = BenchClock.nanoseconds()
                    if frames.count == 2, let position = ReplyScanner.firstPosition(frames[1]),
                        result.feedArrivals[position] == nil
                    {
                        result.feedArrivals[position] = arrived
                    }
                }
            }
        }
    }

    /// Sends the client's next request; false when libzmq cannot take it now.
    private mutating func send(_ socket: borrowing ZMQSocket, _ client: inout Client) throws(ZMQError) -> Bool {
        let body = plan.requests.request(client: client.number, sequence: client.next)
        let sentAt = BenchClock.nanoseconds()
        guard try socket.send([[], body], wait: false) else { return false }
        client.inFlight[client.next] = sentAt
        client.next += 1
        result.sent += 1
        result.requestBytes += body.count
        return true
    }

    private mutating func handleReply(_ frames: [[UInt8]], _ client: inout Client) {
        let arrived = BenchClock.nanoseconds()
        guard let body = frames.last else { return }
        result.replyBytes += body.count
        guard let sequence = ReplyScanner.sequence(in: body),
            let sentAt = client.inFlight.removeValue(forKey: sequence)
        else {
            result.unmatched += 1
            return
        }
        result.completed += 1
        result.endedAt = max(result.endedAt, arrived)
        result.latencies.append(Int64(arrived - sentAt))
        if ReplyScanner.isOK(body) == true {
            if plan.feedEndpoint != nil {
                for position in ReplyScanner.eventPositions(body) {
                    result.replyMarks.append(ReplyMark(position: position, sentAt: sentAt, repliedAt: arrived))
                }
            }
        } else {
            result.rejected += 1
            result.rejections[ReplyScanner.errorCode(body) ?? "unreadable reply", default: 0] += 1
        }
    }
}
