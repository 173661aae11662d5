import LogbookJSON
import LogbookZMQ

extension BenchSession {
    /// Section 3: feed latency. A subscriber on all topics and four clients sending paced
    /// commands live on one thread (one clock, no hand-off between threads); for every event
    /// of a reply, the time from the reply's arrival, and from the command's send, to the
    /// arrival of the event's feed message.
    mutating func measureFeed() throws(BenchError) {
        let service = try runningService()
        let tag = "f\(runTag)"
        let seeded = max(4, options.window)
        let clients = 4
        try seed(tag: tag, clients: clients, seeded: seeded)
        // Feed messages per command of the mix: a registration's email claim is on no topic,
        // a purchase has two (product and order): (1 + 1 + 2 + 1) / 4.
        let feedEventsPerCommand = 1.25
        let commandRate = options.feedEventsPerSecond / feedEventsPerCommand
        progress("bench: feed latency at \(Int(options.feedEventsPerSecond)) events/s")
        let result = try load(
            LoadPlan(
                endpoint: service.endpoints.commands, clients: clients, threads: 1,
                pacing: .paced(perSecond: commandRate, maximumInFlight: 1_000), length: .seconds(options.secondsPerRun),
                requests: CommandMix(tag: tag, seeded: seeded), feedEndpoint: service.endpoints.feed))
        var fromReply: [Int64] = []
        var fromSend: [Int64] = []
        for mark in result.replyMarks {
            guard let arrived = result.feedArrivals[mark.position] else { continue }
            fromReply.append(Int64(bitPattern: arrived &- mark.repliedAt))
            fromSend.append(Int64(bitPattern: arrived &- mark.sentAt))
        }
        guard let afterReply = LatencySummary(nanoseconds: fromReply),
            let afterSend = LatencySummary(nanoseconds: fromSend)
        else {
            throw BenchError("no event of a reply arrived on the feed (\(result.feedArrivals.count) feed messages)")
        }
        let achieved = result.seconds > 0 ? Double(fromReply.count) / result.seconds : 0
        let details: JSONObject = [
            "feedEventsPerSecond": .double(achieved), "matched": .int(fromReply.count),
            "replyEvents": .int(result.replyMarks.count), "feedMessages": .int(result.feedArrivals.count),
            "rejected": .int(result.rejected),
        ]
        if facts.roundTrip == nil { facts.roundTrip = try bareRoundTrip(samples: options.latencySamples) }
        let roundTrip = facts.roundTrip
        func bare(_ name: String, _ value: Double?) -> [BenchFigure.Baseline] {
            value.map { [.init("bare libzmq round trip \(name)", $0)] } ?? []
        }
        figures.append(
            BenchFigure(
                section: "feed", name: "reply → feed message, p50", value: afterReply.p50, unit: .microseconds,
                baselines: bare("p50", roundTrip?.p50), details: details))
        figures.append(
            BenchFigure(
                section: "feed", name: "reply → feed message, p99", value: afterReply.p99, unit: .microseconds,
                baselines: bare("p99", roundTrip?.p99), target: .init(.atMost, 2_000, "< 2 ms (commit → receipt)"),
                note: "the commit itself is not visible from outside: this starts when its reply arrived"))
        figures.append(
            BenchFigure(
                section: "feed", name: "send → feed message, p50", value: afterSend.p50, unit: .microseconds,
                baselines: bare("p50", roundTrip?.p50)))
        figures.append(
            BenchFigure(
                section: "feed", name: "send → feed message, p99", value: afterSend.p99, unit: .microseconds,
                baselines: bare("p99", roundTrip?.p99),
                note: "an upper bound of commit → receipt: it includes the command's own trip and fsync"))
    }
}
