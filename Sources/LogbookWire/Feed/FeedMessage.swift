public import LogbookApplication
import LogbookJSON

/// One message of the change feed, `[topic][envelope]`: the event and the envelope's
/// `previous` marks (per topic, a position after which the topic had no event before this
/// one). The one owner of the message's bytes: the worker writes them with
/// `frames(topic:envelope:previous:)` and every subscriber reads them with `init?(frames:)`,
/// which reads the writer's exact layout in one pass (`LogPageReader.feedEnvelope`) and
/// anything else through the general parser, to the same message.
public struct FeedMessage: Sendable {
    public let topic: FeedTopic
    public let event: RecordedEvent
    public let previous: [FeedTopic: Int64]

    /// The frames of the message for an event of `topic` whose envelope is `envelope` (as
    /// `EnvelopeWriter` writes it, ending in its closing brace): that envelope with
    /// `"previous":{…}` as its last member, every topic's mark in `FeedTopic.allCases` order
    /// (0 for a topic `previous` lacks).
    public static func frames(topic: FeedTopic, envelope: [UInt8], previous: [FeedTopic: Int64]) -> [[UInt8]] {
        var message: [UInt8] = []
        message.reserveCapacity(envelope.count + previousMemberSize)
        message.append(contentsOf: envelope[..<(envelope.count - 1)])
        message.append(contentsOf: #","previous":{"#.utf8)
        for (offset, name) in FeedTopic.allCases.enumerated() {
            if offset > 0 { message.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(name.rawValue, into: &message)
            message.append(UInt8(ascii: ":"))
            JSONWriter.writeInteger(Int(previous[name] ?? 0), into: &message)
        }
        message.append(contentsOf: "}}".utf8)
        return [topicFrames[topic] ?? Array(topic.rawValue.utf8), message]
    }

    /// Room for `,"previous":{…}}`: every topic's name and a position of up to 19 digits.
    private static let previousMemberSize = 16 + FeedTopic.allCases.reduce(0) { $0 + $1.rawValue.utf8.count + 23 }

    /// Each topic's name as the first frame of its messages, made once.
    private static let topicFrames = Dictionary(
        uniqueKeysWithValues: FeedTopic.allCases.map { ($0, Array($0.rawValue.utf8)) })

    /// Reads the frames of a feed message; nil when they are not one (a follower then
    /// trusts the log instead).
    public init?(frames: [[UInt8]]) {
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
