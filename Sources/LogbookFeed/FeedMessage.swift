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
        guard frames.count == 2, let topic = FeedTopic(rawValue: String(decoding: frames[0], as: UTF8.self)),
            let (event, marks) = Self.envelope(frames[1]), FeedTopic(category: event.category) == topic
        else { return nil }
        var previous: [FeedTopic: Int64] = [:]
        for (name, mark) in zip(FeedTopic.allCases, marks) {
            guard mark >= 0, mark < event.position else { return nil }
            previous[name] = mark
        }
        self.init(topic: topic, event: event, previous: previous)
    }

    /// The event and its marks in `FeedTopic.allCases` order: the publisher's exact layout
    /// read in one pass, anything else parsed in general; nil when a mark is missing or not
    /// an integer, or the rest is not an envelope.
    private static func envelope(_ bytes: [UInt8]) -> (event: RecordedEvent, marks: [Int64])? {
        if let read = LogPageReader.feedEnvelope(bytes) { return (read.event, read.previous) }
        guard case .object(let envelope)? = try? JSONParser.parse(bytes),
            case .object(let marks)? = envelope["previous"],
            let event = try? WireDecoding.recordedEvent(from: .object(envelope))
        else { return nil }
        var ordered: [Int64] = []
        for name in FeedTopic.allCases {
            guard case .int(let mark)? = marks[name.rawValue] else { return nil }
            ordered.append(Int64(mark))
        }
        return (event, ordered)
    }

    private init(topic: FeedTopic, event: RecordedEvent, previous: [FeedTopic: Int64]) {
        self.topic = topic
        self.event = event
        self.previous = previous
    }
}
