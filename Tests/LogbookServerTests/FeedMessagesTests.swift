import Foundation
import Glibc
import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookTestSupport
import LogbookWire
import LogbookZMQ
import Testing

@testable import LogbookServer

/// The feed messages the worker publishes: `[topic][envelope + "previous"]`, byte for byte
/// what writing the envelope's `JSONValue` with the `previous` member added gives.
@Suite("Feed messages")
struct FeedMessagesTests {
    @Test("each message is its envelope with every topic's previous mark as its last member")
    func messagesMatchTheValuePath() throws {
        let context = try ZMQContext()
        let endpoint = "ipc:///tmp/logbook-feed-messages-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let head: Int64 = 41
        var publisher = try FeedPublisher(context, at: endpoint, head: head)
        var events: [RecordedEvent] = []
        for (offset, sample) in SampleEvents.all.enumerated() {
            events.append(
                RecordedEvent(
                    position: head + 1 + Int64(offset), eventId: "e\(offset)", stream: sample.stream.name,
                    version: offset + 1, type: sample.typeName, data: EventCodec.encodedText(sample),
                    metadata: EventMetadata(commandId: "c\(offset)", correlationId: "r", causationId: "s\"\\"),
                    recordedAt: 1_767_225_600_123 + Int64(offset)))
        }
        var envelopes: [Int64: [UInt8]] = [:]
        for event in events { envelopes[event.position] = try EnvelopeWriter.bytes(event) }
        // One event without an envelope: no message, but its topic's mark still moves past it.
        let unwritten = try #require(events.first { FeedTopic(stream: $0.stream) == .products })
        envelopes[unwritten.position] = nil

        let messages = publisher.messages(for: events, envelopes: envelopes)

        var marks = Dictionary(uniqueKeysWithValues: FeedTopic.allCases.map { ($0, head) })
        var expected: [[[UInt8]]] = []
        for event in events {
            guard let topic = FeedTopic(category: event.category) else { continue }
            defer { marks[topic] = event.position }
            guard event.position != unwritten.position else { continue }
            guard case .object(var object) = try WireEncoding.envelope(event) else {
                Issue.record("an envelope that is not an object")
                continue
            }
            object["previous"] = .object(
                JSONObject(FeedTopic.allCases.map { ($0.rawValue, JSONValue.int(Int(marks[$0] ?? 0))) }))
            expected.append([Array(topic.rawValue.utf8), JSONWriter.bytes(.object(object))])
        }
        #expect(messages.count == expected.count)
        for (message, wanted) in zip(messages, expected) {
            #expect(message == wanted, "\(String(decoding: message[1], as: UTF8.self))")
        }
        // The next batch starts from the marks this one left.
        let later = events[0]
        let next = publisher.messages(
            for: [later], envelopes: [later.position: try EnvelopeWriter.bytes(later)])
        let text = String(decoding: try #require(next.first?.last), as: UTF8.self)
        let previous = FeedTopic.allCases.map { "\"\($0.rawValue)\":\(marks[$0] ?? 0)" }.joined(separator: ",")
        #expect(text.hasSuffix(",\"previous\":{\(previous)}}"), "\(text)")
    }

    @Test("a subscriber reads every message the publisher writes in one pass, as the general parse reads it")
    func messagesReadInOnePass() throws {
        let context = try ZMQContext()
        let endpoint = "ipc:///tmp/logbook-feed-read-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        var publisher = try FeedPublisher(context, at: endpoint, head: 7)
        var events: [RecordedEvent] = []
        for (offset, sample) in SampleEvents.all.enumerated() {
            events.append(
                RecordedEvent(
                    position: 8 + Int64(offset), eventId: "e\(offset) \u{1}", stream: sample.stream.name,
                    version: offset + 1, type: sample.typeName, data: EventCodec.encodedText(sample),
                    metadata: EventMetadata(commandId: "c\(offset)", correlationId: "r✓", causationId: "s\"\\"),
                    recordedAt: 1_767_225_600_123 + Int64(offset) * 86_399_999))
        }
        var envelopes: [Int64: [UInt8]] = [:]
        for event in events { envelopes[event.position] = try EnvelopeWriter.bytes(event) }
        let messages = publisher.messages(for: events, envelopes: envelopes)
        #expect(!messages.isEmpty)
        for message in messages {
            let text = String(decoding: message[1], as: UTF8.self)
            let fast = try #require(LogPageReader.feedEnvelope(message[1]), "not read in one pass: \(text)")
            guard case .object(let object) = try JSONParser.parse(message[1]),
                case .object(let marks)? = object["previous"]
            else {
                Issue.record("not an envelope with marks: \(text)")
                continue
            }
            #expect(fast.event == (try WireDecoding.recordedEvent(from: .object(object))), "\(text)")
            let wanted = FeedTopic.allCases.map { topic in marks[topic.rawValue]?.intValue.map(Int64.init) ?? -1 }
            #expect(fast.previous == wanted)
            let read = try #require(FeedMessage(frames: message), "not read back: \(text)")
            #expect(read.event == fast.event)
            #expect(FeedTopic.allCases.map { read.previous[$0] ?? -1 } == wanted)
        }
        // Anything else is left to the general parse: another member order, spaces, a missing mark.
        let sample = try #require(messages.first?.last)
        let text = String(decoding: sample, as: UTF8.self)
        let variants = [
            text.replacingOccurrences(of: #","previous":{"#, with: #", "previous":{"#),
            text.replacingOccurrences(of: #""users":"#, with: #""people":"#),
            text.replacingOccurrences(of: #"}}"#, with: #"} }"#),
            String(text.dropLast()),
        ]
        for variant in variants {
            #expect(LogPageReader.feedEnvelope(Array(variant.utf8)) == nil, "\(variant)")
        }
        // The general parse reads a message in another layout to the same event and marks.
        let topicFrame = try #require(messages.first?.first)
        let fast = try #require(FeedMessage(frames: [topicFrame, sample]))
        for variant in [variants[0], variants[2]] {
            let slow = try #require(FeedMessage(frames: [topicFrame, Array(variant.utf8)]))
            #expect(slow.event == fast.event && slow.previous == fast.previous, "\(variant)")
        }
    }
}
