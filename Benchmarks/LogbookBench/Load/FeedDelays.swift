/// What a feed run observed, per event of a reply: the time from the reply's arrival, and
/// from its command's send, to the arrival of the event's feed message (one clock: the
/// subscriber and the clients live on one thread), and the feed events a second matched.
struct FeedDelays {
    let afterReply: LatencySummary
    let afterSend: LatencySummary
    /// Reply events whose feed message arrived.
    let matched: Int
    let perSecond: Double

    /// Nil when no event of a reply arrived on the feed.
    init?(_ result: LoadResult) {
        var fromReply: [Int64] = []
        var fromSend: [Int64] = []
        for mark in result.replyMarks {
            guard let arrived = result.feedArrivals[mark.position] else { continue }
            fromReply.append(Int64(bitPattern: arrived &- mark.repliedAt))
            fromSend.append(Int64(bitPattern: arrived &- mark.sentAt))
        }
        guard let afterReply = LatencySummary(nanoseconds: fromReply),
            let afterSend = LatencySummary(nanoseconds: fromSend)
        else { return nil }
        self.afterReply = afterReply
        self.afterSend = afterSend
        matched = fromReply.count
        perSecond = result.seconds > 0 ? Double(fromReply.count) / result.seconds : 0
    }
}
