import LogbookJSON
import LogbookZMQ

extension BenchSession {
    /// Section 3: feed latency. A subscriber on all topics and four clients sending paced
    /// commands live on one thread (one clock, no hand-off between threads); for every event
    /// of a reply, the time from the reply's arrival, and from the command's send, to the
    /// arrival of the event's feed message. Run at the asked rate and, when the throughput
    /// section found that rate beyond the service, once more at half its peak, where the
    /// figures show the feed rather than a queue of commands.
    mutating func measureFeed() throws(BenchError) {
        let service = try runningService()
        if facts.roundTrip == nil { facts.roundTrip = try bareRoundTrip(samples: options.latencySamples) }
        let tag = "f\(runTag)"
        let seeded = max(4, options.window)
        let clients = 4
        try seed(tag: tag, clients: clients, seeded: seeded)
        var rates = [(options.feedEventsPerSecond, "")]
        if let peak = facts.peakThroughput, peak * Self.feedEventsPerCommand < options.feedEventsPerSecond {
            rates.append((peak * Self.feedEventsPerCommand / 2, " (half the peak)"))
        }
        for (index, (rate, label)) in rates.enumerated() {
            progress("bench: feed latency at \(Int(rate)) events/s")
            let result = try load(
                LoadPlan(
                    endpoint: service.endpoints.commands, clients: clients, threads: 1,
                    pacing: .paced(perSecond: rate / Self.feedEventsPerCommand, maximumInFlight: 1_000),
                    length: .seconds(options.secondsPerRun),
                    requests: CommandMix(tag: "\(tag)\(index)", seedTag: tag, seeded: seeded),
                    feedEndpoint: service.endpoints.feed))
            try addFeedFigures(result, offered: rate, label: label)
        }
    }

    /// Feed messages per command of the mix: a registration's email claim is on no topic,
    /// a purchase has two (product and order): (1 + 1 + 2 + 1) / 4.
    static let feedEventsPerCommand = 1.25

    private mutating func addFeedFigures(_ result: LoadResult, offered: Double, label: String) throws(BenchError) {
        guard let delays = FeedDelays(result) else {
            throw BenchError("no event of a reply arrived on the feed (\(result.feedArrivals.count) feed messages)")
        }
        let (afterReply, afterSend, achieved) = (delays.afterReply, delays.afterSend, delays.perSecond)
        let details: JSONObject = [
            "offeredFeedEventsPerSecond": .double(offered), "feedEventsPerSecond": .double(achieved),
            "matched": .int(delays.matched), "replyEvents": .int(result.replyMarks.count),
            "feedMessages": .int(result.feedArrivals.count), "rejected": .int(result.rejected),
        ]
        let overloaded =
            achieved < offered * 0.95
            ? "the service took \(NumberFormat.grouped(achieved)) of the \(NumberFormat.grouped(offered)) events/s "
                + "offered: commands queued, and these times include the queue" : nil
        let at = " at \(NumberFormat.grouped(offered)) events/s\(label)"
        func bare(_ name: String, _ value: Double?) -> [BenchFigure.Baseline] {
            value.map { [.init("bare libzmq round trip \(name)", $0)] } ?? []
        }
        let roundTrip = facts.roundTrip
        figures.append(
            BenchFigure(
                section: "feed", name: "reply → feed message, p50\(at)", value: afterReply.p50, unit: .microseconds,
                baselines: bare("p50", roundTrip?.p50), note: overloaded, details: details))
        figures.append(
            BenchFigure(
                section: "feed", name: "reply → feed message, p99\(at)", value: afterReply.p99, unit: .microseconds,
                baselines: bare("p99", roundTrip?.p99), target: .init(.atMost, 2_000, "< 2 ms (commit → receipt)"),
                note: "the commit itself is not visible from outside: this starts when its reply arrived"))
        figures.append(
            BenchFigure(
                section: "feed", name: "send → feed message, p50\(at)", value: afterSend.p50, unit: .microseconds,
                baselines: bare("p50", roundTrip?.p50)))
        figures.append(
            BenchFigure(
                section: "feed", name: "send → feed message, p99\(at)", value: afterSend.p99, unit: .microseconds,
                baselines: bare("p99", roundTrip?.p99),
                note: "an upper bound of commit → receipt: it includes the command's own trip and fsync"))
    }
}
