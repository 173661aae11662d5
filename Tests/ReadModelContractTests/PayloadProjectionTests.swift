import LogbookDomain
import LogbookTestSupport
import Testing

@testable import LogbookApplication

/// The projector's fast path (payload bytes straight to row changes, trusting the log) gives
/// exactly the changes of the slow path (`EventCodec` into domain events, then `change(for:)`),
/// and a payload it cannot read still ends in the slow path's typed error.
@Suite("Projecting straight from payloads")
struct PayloadProjectionTests {
    /// The slow path, event by event.
    private static func reference(_ events: [RecordedEvent]) throws -> [ReadModelChange] {
        try events.compactMap { event in try Projector.decode(event).flatMap(Projector.change(for:)) }
    }

    @Test(arguments: [3, 11, 2025, 0xFEED] as [UInt64])
    func randomLogsGiveTheSlowPathsChanges(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let log = try RandomLog.make(steps: 1_500, using: &random)
        #expect(try Projector.changes(log.all[...]) == Self.reference(log.all))
        // Every payload the codec wrote is read by the fast path itself.
        for event in log.all where Projector.isProjected(event.stream) {
            #expect(PayloadProjection.change(event) != .unsupported, "\(event.type): \(event.data)")
        }
    }

    @Test func everyEventTypeGivesTheSlowPathsChange() throws {
        let log = try Log.everyEventType()
        let changes = try Projector.changes(log.all[...])
        #expect(changes == (try Self.reference(log.all)))
        #expect(changes.count == log.all.count - 1)
    }

    /// Payloads in another layout than the codec's (keys reordered, whitespace, an explicit
    /// null) are valid JSON the slow path reads: the same change comes out.
    @Test func otherLayoutsTakeTheSlowPath() throws {
        var log = Log()
        let payloads = [
            #"{"name":"Ann","userId":"u1","email":"a@b.example","gender":"male","subscription":"free"}"#,
            #"{ "userId": "u2", "name": "Bo", "email": "b@b.example", "gender": "other", "subscription": "free" }"#,
            #"{"userId":"u3","name":"Cy","email":"c@b.example","gender":"male","birthday":null,"subscription":"free"}"#,
        ]
        for (index, data) in payloads.enumerated() {
            log.record(type: "UserRegistered", stream: "user-u\(index + 1)", data: data)
        }
        let changes = try Projector.changes(log.all[...])
        #expect(changes.count == 3)
        #expect(changes == (try Self.reference(log.all)))
    }

    /// A payload that does not decode is refused with the position and the slow path's reason.
    @Test(arguments: [
        ("UserRegistered", "user-u1", "{not json"),
        ("UserRegistered", "user-u1", #"{"userId":"u1","name":"Ann"}"#),
        ("UserDeleted", "user-u1", #"{"userId":7}"#),
        ("UserDeleted", "user-u1", #"{"userId":"u1","extra":1}"#),
        ("UserDeleted", "user-u2", #"{"userId":"u1"}"#),
        ("UserExploded", "user-u1", #"{"userId":"u1"}"#),
        ("ProductRestocked", "product-x1", #"{"productId":"x1","quantity":0,"stock":5}"#),
        ("ProductAdded", "product-x1", #"{"productId":"x1","name":"L","price":"1.234","category":"food","stock":1}"#),
        ("ProductAdded", "product-x1", #"{"productId":"x1","name":"L","price":"1.23","category":"toys","stock":1}"#),
        (
            "OrderPlaced", "order-o1",
            #"{"orderId":"o 1","userId":"u1","productId":"x1","quantity":1,"unitPrice":"1.00","totalPrice":"1.00","status":"pending"}"#
        ),
    ])
    func undecodablePayloadsAreRefused(type: String, stream: String, data: String) {
        var log = Log()
        log.record(try! Events.registered("u0"))
        let bad = log.record(type: type, stream: stream, data: data)
        #expect {
            try Projector.changes(log.all[...])
        } throws: { error in
            guard case .unreadableEvent(let position, let reason)? = error as? ReadModelStoreError else { return false }
            return position == bad.position && !reason.isEmpty
        }
    }
}
