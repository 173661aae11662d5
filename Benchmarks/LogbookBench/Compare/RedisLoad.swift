import Glibc
import LogbookZMQ

/// Drives `XADD` into one Redis stream from `clients` connections, each keeping `window`
/// commands in flight (pipelined), on `threads` threads that poll their connections, for
/// `seconds`: the same shape of load the Logbook clients make.
enum RedisLoad {
    typealias Outcome = ComparisonOutcome

    static func run(port: Int, clients: Int, threads: Int, window: Int, seconds: Double, payloadBytes: Int)
        throws(BenchError) -> Outcome
    {
        let threadCount = max(1, min(threads, clients))
        let command = RESP.command(["XADD", "logbook-bench", "*", "data", String(repeating: "x", count: payloadBytes)])
        let outcomes = StartLine.runTogether(count: threadCount, name: "bench-redis", settleMilliseconds: 100) {
            index, startLine in
            let share = (clients - index + threadCount - 1) / threadCount
            return drive(
                port: port, connections: share, window: window, seconds: seconds, command: command,
                startLine: startLine)
        }
        let total = Outcome.total(of: outcomes)
        if let failure = total.failure { throw BenchError("Redis load: \(failure)") }
        return total
    }

    private struct Connection {
        let tcp: TCPConnection
        var inFlight = 0
        var inbox: [UInt8] = []
        var outbox: [UInt8] = []
    }

    private static func drive(
        port: Int, connections count: Int, window: Int, seconds: Double, command: [UInt8], startLine: StartLine
    ) -> Outcome {
        var outcome = Outcome()
        var connections: [Connection] = []
        do throws(BenchError) {
            for _ in 0..<count {
                let tcp = try TCPConnection(port: port)
                tcp.makeNonBlocking()
                connections.append(Connection(tcp: tcp))
            }
        } catch {
            outcome.failure = error.message
        }
        let start = startLine.arriveAndWait()
        outcome.startedAt = start
        guard outcome.failure == nil else { return outcome }
        let stopAt = start + UInt64(seconds * 1e9)
        let drainUntil = stopAt + 30_000_000_000
        do throws(BenchError) {
            while true {
                let now = BenchClock.nanoseconds()
                let sending = now < stopAt
                for slot in connections.indices {
                    while sending && connections[slot].inFlight < window {
                        connections[slot].outbox += command
                        connections[slot].inFlight += 1
                    }
                    if !connections[slot].outbox.isEmpty {
                        let written = try connections[slot].tcp.write(connections[slot].outbox[...])
                        connections[slot].outbox.removeFirst(written)
                    }
                }
                if !sending && (connections.allSatisfy { $0.inFlight == 0 } || now > drainUntil) { break }
                var descriptors = connections.map { connection in
                    pollfd(
                        fd: connection.tcp.descriptor,
                        events: Int16(POLLIN) | (connection.outbox.isEmpty ? 0 : Int16(POLLOUT)), revents: 0)
                }
                let timeout = sending ? Int32(max(1, min(100, (stopAt - now) / 1_000_000 + 1))) : 100
                guard poll(&descriptors, nfds_t(descriptors.count), timeout) >= 0 || errno == EINTR else {
                    throw BenchError("poll failed: \(String(cString: strerror(errno)))")
                }
                for slot in connections.indices where descriptors[slot].revents & Int16(POLLIN) != 0 {
                    connections[slot].inbox += try connections[slot].tcp.read()
                    var consumed = 0
                    while case .reply(let length, let isError) = RESP.scan(connections[slot].inbox, from: consumed) {
                        consumed += length
                        connections[slot].inFlight -= 1
                        outcome.completed += 1
                        if isError { outcome.errors += 1 }
                    }
                    if case .malformed = RESP.scan(connections[slot].inbox, from: consumed) {
                        throw BenchError("a reply from Redis is not RESP")
                    }
                    connections[slot].inbox.removeFirst(consumed)
                    outcome.endedAt = BenchClock.nanoseconds()
                }
            }
        } catch {
            outcome.failure = error.message
        }
        return outcome
    }
}
