import LogbookFeed
import LogbookZMQ

/// Members of one consumer group, each on a dedicated thread with its own DEALER
/// (`GroupMemberChannel`): they join together at `go`, and each takes what is delivered to
/// it, acknowledging every batch the socket holds at once, as a fast consumer does, until
/// `finish()`.
final class GroupMembers: Sendable {
    private let threads: [OwnedThread]
    private let startLine: StartLine
    private let finished = Shared(false)
    private let handled = Shared<[Int]>([])
    private let failures = Shared<[String]>([])

    init(count: Int, context: ZMQContext, endpoint: String, group: String) {
        let startLine = StartLine(expected: count)
        self.startLine = startLine
        var threads: [OwnedThread] = []
        for index in 0..<count {
            threads.append(
                OwnedThread(name: "bench-member-\(index)") { [finished, handled, failures] in
                    do throws(GroupMemberError) {
                        var member: GroupMemberChannel
                        do {
                            member = try GroupMemberChannel(context, endpoint: endpoint, group: group)
                        } catch {
                            throw .transport("\(error)")
                        }
                        _ = startLine.arriveAndWait()
                        var count = 0
                        while !finished.value {
                            guard let first = try member.next(timeoutMilliseconds: 50) else { continue }
                            var batch = [first.position]
                            while let more = try member.next(timeoutMilliseconds: 0) { batch.append(more.position) }
                            try member.ack(batch)
                            count += batch.count
                        }
                        _ = try member.leave(timeoutMilliseconds: 5_000)
                        handled.update { $0.append(count) }
                    } catch {
                        failures.update { $0.append("member \(index): \(error)") }
                        _ = startLine.arriveAndWait()
                    }
                })
        }
        self.threads = threads
        startLine.waitForAll()
    }

    /// Starts every member at once; returns the start time.
    func go() -> UInt64 { startLine.go() }

    /// Stops the members (each leaves the group) and returns the deliveries each handled.
    func finish() throws(BenchError) -> [Int] {
        finished.update { $0 = true }
        for thread in threads { thread.join() }
        if let failure = failures.value.first { throw BenchError(failure) }
        return handled.value
    }
}
