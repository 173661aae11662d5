import LogbookApplication
import LogbookJSON
import LogbookWire

/// One message of the change feed, `[topic][envelope]`, read back: the event and the
/// envelope's `previous` marks (per topic, a position after which the topic had no event
/// before this one).
struct FeedMessage {
    let topic: FeedTopic
    let event: RecordedEvent
    let previous: [FeedTopic: Int64]

    /// Reads the frames of a feed message; nil when they are not one (the follower then
    /// trusts the log instead).
    init?(frames: [[UInt8]]) {
        guard frames.count == 2, let topic = FeedTopic(rawValue: String(decoding: frames[0], as: UTF8.self))
        else { return nil }
        // The publisher's exact layout is read in one pass; anything else is parsed in general.
        if let (event, marks) = LogPageReader.feedEnvelope(frames[1]) {
            guard FeedTopic(category: event.category) == topic else { return nil }
            var previous: [FeedTopic: Int64] = [:]
            for (name, mark) in zip(FeedTopic.allCases, marks) {
                guard mark >= 0, mark < event.position else { return nil }
                previous[name] = mark
            }
            self.init(topic: topic, event: event, previous: previous)
            return
        }
        guard case .object(let envelope)? = try? JSONParser.parse(frames[1]),
            case .object(let marks)? = envelope["previous"],
            let event = try? WireDecoding.recordedEvent(from: .object(envelope)),
            FeedTopic(category: event.category) == topic
        else { return nil }
        var previous: [FeedTopic: Int64] = [:]
        for name in FeedTopic.allCases {
            guard case .int(let mark)? = marks[name.rawValue], mark >= 0, mark < event.position else { return nil }
            previous[name] = Int64(mark)
        }
        self.init(topic: topic, event: event, previous: previous)
    }

    private init(topic: FeedTopic, event: RecordedEvent, previous: [FeedTopic: Int64]) {
        self.topic = topic
        self.event = event
        self.previous = previous
    }
}
