import LogbookApplication
import LogbookFeed
import LogbookJSON
import LogbookWire
import LogbookZMQ

extension BenchSession {
    /// Section: consumer groups. A `logbook run groups` beside the service follows the
    /// generated log. Baseline: a raw feed subscriber (`FeedFollower`, what `subscribe`
    /// runs) reading the log from position 1: events a second over the first `groupEvents`
    /// events. Then, for each member count, a group created at position 1 with that many
    /// members acknowledging what they get: events a second until the group has counted
    /// `groupEvents` acknowledgements (each durable before it was confirmed). Last, one
    /// group created at position 1 with no member, so the whole log is behind it, and the
    /// groups process's peak memory.
    mutating func measureGroups() throws(BenchError) {
        let service = try runningService()
        let head = try status(of: service.endpoints.commands)["head"]?.intValue ?? 0
        let events = min(head / 2, options.groupEvents)
        guard events > 0 else { throw BenchError("the log is empty: the groups section reads the generated log") }
        let groups = try startGroupsProcess(service)
        defer { _ = children.stop(groups.pid) }
        var admin = try ControlClient(context, endpoint: groups.endpoint)

        progress("bench: groups: the raw feed, \(events) events")
        let raw = try rawFeedRate(service.endpoints, events: events)
        let baseline = BenchFigure.Baseline("raw feed subscriber, events/s", raw)
        for count in options.groupMembers {
            progress("bench: groups: \(count) member\(count == 1 ? "" : "s"), \(events) events acknowledged")
            let name = "bench-\(count)"
            try createGroup(name, &admin)
            let members = GroupMembers(count: count, context: context, endpoint: groups.endpoint, group: name)
            let started = members.go()
            let shown = try waitForAcks(name, atLeast: events, &admin)
            let seconds = BenchClock.seconds(since: started)
            let handled = try members.finish()
            let acked = shown["acked"]?.intValue ?? 0
            _ = try admin.request(.deleteGroup, ["group": .string(name)], timeoutMilliseconds: 30_000)
            figures.append(
                BenchFigure(
                    section: "groups", name: "\(count) member\(count == 1 ? "" : "s"): events delivered and acked/s",
                    value: Double(acked) / seconds, unit: .perSecond, baselines: [baseline],
                    target: count == 4 ? .init(.atLeast, raw * 0.5, "≥ 0.5 × the raw feed") : nil,
                    details: [
                        "acked": .int(acked), "seconds": .double(seconds),
                        "checkpoint": shown["checkpoint"] ?? .null,
                        "handledPerMember": .array(handled.map(JSONValue.int)),
                        "delivered": shown["delivered"] ?? .null, "redelivered": shown["redelivered"] ?? .null,
                    ]))
        }

        progress("bench: groups: one group \(head) positions behind, no member")
        try createGroup("bench-behind", &admin)
        let held = try waitForSteadyPending("bench-behind", &admin)
        guard let memory = ProcessMemory.of(groups.pid) else { throw BenchError("cannot read /proc/\(groups.pid)") }
        figures.append(
            BenchFigure(
                section: "groups", name: "groups process peak RSS (VmHWM), a group the whole log behind",
                value: Double(memory.peakKilobytes) / 1024, unit: .megabytes,
                target: .init(.atMost, 100, "< 100 MB, whatever the lag"),
                note: "the peak over the whole section, the runs above included",
                details: [
                    "behind": .int(head), "pendingHeld": .int(held),
                    "currentMB": .double(Double(memory.currentKilobytes) / 1024),
                ]))
    }

    private func startGroupsProcess(_ service: LogbookService) throws(BenchError) -> (pid: Int32, endpoint: String) {
        let endpoint = "tcp://127.0.0.1:\(try FreePorts.take(1)[0])"
        let pid = try children.spawn(
            name: "the groups process", executable: run.executable,
            arguments: [
                "run", "groups", "--data-dir", serviceDirectory, "--groups", endpoint, "--feed", service.endpoints.feed,
                "--log", service.endpoints.log, "--log-level", "warning",
            ],
            logPath: logDirectory + "/groups.log")
        var client = try ControlClient(context, endpoint: endpoint)
        let deadline = BenchClock.nanoseconds() + UInt64(LogbookService.startupMilliseconds) * 1_000_000
        while BenchClock.nanoseconds() < deadline {
            guard children.isRunning(pid) else {
                throw BenchError("the groups process ended:\n\(children.logTail(pid))")
            }
            if try client.request(.listGroups, [:], timeoutMilliseconds: 200) != nil { return (pid, endpoint) }
        }
        throw BenchError("the groups process did not answer within \(LogbookService.startupMilliseconds / 1000) s")
    }

    /// Reads the log with a feed subscriber from position 1 until it has handed out
    /// `events` events; events a second.
    private func rawFeedRate(_ endpoints: ServiceEndpoints, events wanted: Int) throws(BenchError) -> Double {
        do {
            var follower = try FeedFollower(
                context, feed: endpoints.feed, log: endpoints.log, topics: FeedTopic.allCases, cursor: 0)
            let started = BenchClock.nanoseconds()
            var events = 0
            while events < wanted {
                events += try follower.waitForNext(timeoutMilliseconds: 1_000).batch.events.count
            }
            return Double(events) / BenchClock.seconds(since: started)
        } catch let error as BenchError {
            throw error
        } catch {
            throw BenchError("the raw feed subscriber failed: \(error)")
        }
    }

    /// Deliveries each member of a measured group holds at most: a member that acknowledges
    /// every batch at once, as these do, keeps that many in flight.
    static let groupMaxInFlight = 256

    private func createGroup(_ name: String, _ admin: inout ControlClient) throws(BenchError) {
        let reply = try admin.request(
            .createGroup,
            [
                "group": .string(name), "topics": .array(FeedTopic.allCases.map { .string($0.rawValue) }), "from": 1,
                "maxInFlight": .int(Self.groupMaxInFlight),
            ],
            timeoutMilliseconds: 30_000)
        guard reply?["ok"] == .bool(true) else {
            throw BenchError("CreateGroup \(name): \(reply.map { JSONWriter.string(.object($0)) } ?? "no reply")")
        }
    }

    private func showGroup(_ name: String, _ admin: inout ControlClient) throws(BenchError) -> JSONObject {
        let reply = try admin.request(.showGroup, ["group": .string(name)], timeoutMilliseconds: 30_000)
        guard let result = reply?["result"]?.objectValue else {
            throw BenchError("ShowGroup \(name): \(reply.map { JSONWriter.string(.object($0)) } ?? "no reply")")
        }
        return result
    }

    /// Polls the group until it has counted at least `events` acknowledgements; returns
    /// the group document that showed it.
    private func waitForAcks(_ name: String, atLeast events: Int, _ admin: inout ControlClient)
        throws(BenchError) -> JSONObject
    {
        let deadline = BenchClock.nanoseconds() + 1_200_000_000_000
        while BenchClock.nanoseconds() < deadline {
            let shown = try showGroup(name, &admin)
            if (shown["acked"]?.intValue ?? 0) >= events { return shown }
            BenchClock.sleep(milliseconds: options.quick ? 5 : 20)
        }
        throw BenchError("group \(name) did not count \(events) acknowledgements within 20 minutes")
    }

    /// Polls the member-less group until the events it holds stop growing (it took what
    /// its window allows); returns how many it holds.
    private func waitForSteadyPending(_ name: String, _ admin: inout ControlClient) throws(BenchError) -> Int {
        var last = -1
        for _ in 0..<600 {
            let pending = try showGroup(name, &admin)["pending"]?.intValue ?? 0
            if pending > 0 && pending == last { return pending }
            last = pending
            BenchClock.sleep(milliseconds: 500)
        }
        throw BenchError("group \(name) kept taking events for 5 minutes")
    }
}
