import Foundation
import LogbookJSON
import LogbookWire
import Testing

/// The worker's `Status` has one JSON form: what the worker wrote before it was typed,
/// byte for byte, read back into the same value; anything else is refused, naming the field.
@Suite("WorkerStatus: one JSON form")
struct WorkerStatusTests {
    /// Documents as the worker wrote them before `WorkerStatus` existed, and one with the
    /// optional `commands.decidedAgain` it writes now.
    static let samples = [
        #"{"role":"worker","head":7,"uptimeSeconds":12,"commands":{"accepted":5,"rejected":1,"retries":1},"batches":{"count":4,"largest":2,"last":1,"meanSize":1.25},"published":4}"#,
        #"{"role":"worker","head":9,"uptimeSeconds":3,"commands":{"accepted":5,"rejected":0,"retries":0,"decidedAgain":2},"batches":{"count":4,"largest":2,"last":1,"meanSize":1.25},"published":0}"#,
        #"{"role":"worker","head":null,"uptimeSeconds":0,"commands":{"accepted":0,"rejected":0,"retries":0},"batches":{"count":0,"largest":0,"last":0,"meanSize":0.0},"published":0}"#,
    ]

    static let value = WorkerStatus(
        head: 7, uptimeSeconds: 12, commands: WorkerStatus.Commands(accepted: 5, rejected: 1, retries: 1),
        batches: WorkerStatus.Batches(count: 4, largest: 2, last: 1, meanSize: 1.25), published: 4)

    @Test("today's documents parse, and write back byte for byte", arguments: samples)
    func samplesRoundTrip(_ sample: String) throws {
        let status = try WorkerStatus(json: try JSONParser.parse(sample))
        #expect(JSONWriter.string(status.json) == sample)
    }

    @Test("a value written and read back is the same value")
    func valueRoundTrips() throws {
        #expect(try WorkerStatus(json: Self.value.json) == Self.value)
        #expect(JSONWriter.string(Self.value.json) == Self.samples[0])
        var unknownHead = Self.value
        unknownHead.head = nil
        #expect(try WorkerStatus(json: unknownHead.json) == unknownHead)
        var counted = Self.value
        counted.commands.decidedAgain = 3
        #expect(try WorkerStatus(json: counted.json) == counted)
        #expect(JSONWriter.string(counted.json).contains(#""retries":1,"decidedAgain":3}"#))
    }

    @Test(
        "a document of another shape is refused, naming the field",
        arguments: [
            (#"{"role":"query"}"#, "result.role"),
            ("[]", "result"),
            (samples[0].replacingOccurrences(of: #""published":4"#, with: #""published":4,"extra":1"#), "result.extra"),
            (samples[0].replacingOccurrences(of: #","retries":1"#, with: ""), "result.commands.retries"),
            (
                samples[1].replacingOccurrences(of: #""decidedAgain":2"#, with: #""decidedAgain":-1.5"#),
                "result.commands.decidedAgain"
            ),
            (samples[0].replacingOccurrences(of: #""head":7"#, with: #""head":"7""#), "result.head"),
            (samples[0].replacingOccurrences(of: "1.25", with: #""1.25""#), "result.batches.meanSize"),
        ])
    func refused(_ document: String, _ field: String) throws {
        let value = try JSONParser.parse(document)
        #expect { try WorkerStatus(json: value) } throws: { ($0 as? StatusDocumentError)?.field == field }
    }
}
