import LogbookJSON
import LogbookZMQ

/// A raw SUB socket of the test thread on a feed, keeping each message's bytes, for what a
/// feed follower would hide: exactly which messages were published, in which order and with
/// which `previous` marks.
struct FeedTap: ~Copyable {
    /// One feed message as it came.
    struct Message {
        let topic: String
        let position: Int64
        let previous: [String: Int64]
        /// The envelope frame, byte for byte.
        let envelope: [UInt8]
    }

    enum Failure: Error { case unreadable([[UInt8]]) }

    private let socket: ZMQSocket
    private(set) var messages: [Message] = []

    init(_ context: ZMQContext, feed: String) throws {
        let socket = try ZMQSocket(context, .subscriber)
        try socket.subscribe("")
        try socket.connect(feed)
        self.socket = socket
    }

    /// Takes messages until `done` holds of all taken so far, or `milliseconds` passed.
    mutating func take(within milliseconds: Int = patienceMilliseconds, until done: ([Message]) -> Bool) throws {
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        while !done(messages) {
            let left = deadline - .now
            guard left > .zero else { return }
            guard try ZMQPoll.wait([socket.readable], timeoutMilliseconds: Int(left / .milliseconds(1)) + 1)[0]
            else { continue }
            while let frames = try socket.receive(wait: false) { messages.append(try Self.message(frames)) }
        }
    }

    private static func message(_ frames: [[UInt8]]) throws -> Message {
        guard frames.count == 2, case .object(let envelope) = try JSONParser.parse(frames[1]),
            let position = envelope["position"]?.intValue, let previous = envelope["previous"]?.objectValue
        else { throw Failure.unreadable(frames) }
        var marks: [String: Int64] = [:]
        for (topic, mark) in previous { marks[topic] = mark.intValue.map(Int64.init) }
        return Message(
            topic: String(decoding: frames[0], as: UTF8.self), position: Int64(position), previous: marks,
            envelope: frames[1])
    }

    /// What is wrong with the messages taken, as a feed of a log with no hole must be: from
    /// the first one on, positions only grow and every message's marks say exactly where each
    /// topic's last message was (so none was skipped in between). Nil when nothing is wrong.
    var problem: String? {
        guard let first = messages.first else { return "no message" }
        var marks = first.previous
        var last: Int64 = 0
        for message in messages {
            if message.position <= last { return "position \(message.position) after \(last)" }
            if message.previous != marks { return "at \(message.position): previous \(message.previous), not \(marks)" }
            marks[message.topic] = message.position
            last = message.position
        }
        return nil
    }
}
