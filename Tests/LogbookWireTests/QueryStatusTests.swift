import Foundation
import LogbookApplication
import LogbookJSON
import LogbookWire
import Testing

/// A query process's `Status` has one JSON form: what the query thread wrote before it was
/// typed, byte for byte (each rebuild state, with and without row counts), read back into
/// the same value; anything else is refused, naming the field.
@Suite("QueryStatus: one JSON form")
struct QueryStatusTests {
    /// Documents as the query thread wrote them before `QueryStatus` existed.
    static let samples = [
        #"{"role":"query","checkpoint":7,"head":9,"lag":2,"generation":1,"uptimeSeconds":3,"eventsApplied":5,"holesDetected":1,"queriesAnswered":10,"queriesWaiting":1,"readModels":{"users":1,"posts":2,"products":3,"orders":4},"rebuild":{"state":"idle"}}"#,
        #"{"role":"query","checkpoint":9,"head":9,"lag":0,"generation":1,"uptimeSeconds":3,"eventsApplied":5,"holesDetected":0,"queriesAnswered":0,"queriesWaiting":0,"readModels":{"users":1,"posts":0,"products":1,"orders":0},"rebuild":{"state":"running","generation":2,"position":3,"head":9}}"#,
        #"{"role":"query","checkpoint":9,"head":9,"lag":0,"generation":1,"uptimeSeconds":4,"eventsApplied":5,"holesDetected":0,"queriesAnswered":0,"queriesWaiting":0,"rebuild":{"state":"switching","generation":2}}"#,
        #"{"role":"query","checkpoint":0,"head":0,"lag":0,"generation":3,"uptimeSeconds":0,"eventsApplied":0,"holesDetected":0,"queriesAnswered":0,"queriesWaiting":0,"readModels":{"users":0,"posts":0,"products":0,"orders":0},"rebuild":{"state":"failed","reason":"log: \"gone\""}}"#,
    ]

    static let value = QueryStatus(
        checkpoint: 7, head: 9, generation: 1, uptimeSeconds: 3, eventsApplied: 5, holesDetected: 1,
        queriesAnswered: 10, queriesWaiting: 1, readModels: ReadModelCounts(users: 1, posts: 2, products: 3, orders: 4),
        rebuild: .idle)

    @Test("today's documents parse, and write back byte for byte", arguments: samples)
    func samplesRoundTrip(_ sample: String) throws {
        let status = try QueryStatus(json: try JSONParser.parse(sample))
        #expect(JSONWriter.string(status.json) == sample)
    }

    @Test(
        "a value written and read back is the same value, in every rebuild state",
        arguments: [
            RebuildState.idle, .running(generation: 0, position: 0, head: 12),
            .running(generation: 2, position: 5, head: 9), .switching(generation: 2),
            .failed(reason: "the process stopped"),
        ])
    func valueRoundTrips(_ rebuild: RebuildState) throws {
        var status = Self.value
        status.rebuild = rebuild
        #expect(try QueryStatus(json: status.json) == status)
        status.readModels = nil
        #expect(try QueryStatus(json: status.json) == status)
        #expect(try RebuildState(json: rebuild.json) == rebuild)
    }

    @Test("the lag is the head's distance from the checkpoint, never negative")
    func lag() {
        var status = Self.value
        #expect(status.lag == 2)
        status.checkpoint = 12
        #expect(status.lag == 0)
        #expect(JSONWriter.string(Self.value.json) == Self.samples[0])
    }

    /// Sample 0 with `text` put in place of `original`.
    static func edited(_ original: String, _ text: String, sample: Int = 0) -> String {
        samples[sample].replacingOccurrences(of: original, with: text)
    }

    @Test(
        "a document of another shape is refused, naming the field",
        arguments: [
            (#"{"role":"worker"}"#, "result.role"),
            (edited(#""lag":2"#, #""lag":1"#), "result.lag"),
            (edited(#""queriesWaiting":1,"#, ""), "result.queriesWaiting"),
            (edited(#""orders":4"#, #""orders":4,"rows":1"#), "result.readModels.rows"),
            (edited(#"{"state":"idle"}"#, #"{"state":"resting"}"#), "result.rebuild.state"),
            (edited(#"{"state":"idle"}"#, #"{"state":"idle","generation":2}"#), "result.rebuild.generation"),
            (edited(#","head":9}"#, "}", sample: 1), "result.rebuild.head"),
            (edited(#","rebuild":{"state":"idle"}"#, ""), "result.rebuild"),
        ])
    func refused(_ document: String, _ field: String) throws {
        let value = try JSONParser.parse(document)
        #expect { try QueryStatus(json: value) } throws: { ($0 as? StatusDocumentError)?.field == field }
    }
}
