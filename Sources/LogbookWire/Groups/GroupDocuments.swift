public import LogbookApplication
import LogbookDomain
public import LogbookJSON

/// The documents of the groups socket other than requests: the `Deliver` message a member
/// receives, and the `result` of each reply. Written here only, read by the client and the
/// command line through the same names.
public enum GroupDocuments {
    /// `{"type":"Deliver","group","position","attempt","event":envelope}`, with the
    /// envelope's bytes (as `EnvelopeWriter` wrote them) placed as they are.
    public static func deliver(_ delivery: GroupDelivery) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(delivery.payload.count + 96)
        output.append(contentsOf: #"{"type":"Deliver","group":"#.utf8)
        output.append(contentsOf: JSONWriter.bytes(.string(delivery.group.rawValue)))
        output.append(contentsOf: #","position":"#.utf8)
        output.append(contentsOf: String(delivery.position).utf8)
        output.append(contentsOf: #","attempt":"#.utf8)
        output.append(contentsOf: String(delivery.attempt).utf8)
        output.append(contentsOf: #","event":"#.utf8)
        output.append(contentsOf: delivery.payload)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// A group as `ShowGroup`, `ListGroups` and `CreateGroup` answer it: settings, progress
    /// (`lag` is how many positions of the log lie after the checkpoint), members and what
    /// they hold, and the counters since the groups process started.
    public static func group(_ summary: GroupSummary, head: Int64) -> JSONValue {
        let record = summary.record
        let topics = record.categories.compactMap { FeedTopic(category: $0)?.rawValue }
        return [
            "group": .string(record.name.rawValue),
            "topics": .array(topics.map(JSONValue.string)),
            "ackWaitMs": .int(record.settings.ackWaitMilliseconds),
            "maxDeliver": .int(record.settings.maxDeliver),
            "maxInFlight": .int(record.settings.maxInFlight),
            "createdAt": .string(Timestamp(millisecondsSinceEpoch: record.createdAt).rfc3339),
            "checkpoint": .int(Int(record.checkpoint)),
            "head": .int(Int(max(head, record.checkpoint))),
            "lag": .int(Int(max(0, head - record.checkpoint))),
            "members": .int(summary.members),
            "inFlight": .int(summary.inFlight),
            "pending": .int(summary.pending),
            "parked": .int(summary.parked),
            "delivered": .int(summary.counters.delivered),
            "redelivered": .int(summary.counters.redelivered),
            "acked": .int(summary.counters.acked),
            "nacked": .int(summary.counters.nacked),
            "expired": .int(summary.counters.expired),
        ]
    }

    /// A parked event as `ListParked` answers it: position, stream, deliveries made, why the
    /// last one failed, and the event's envelope.
    public static func parked(_ event: PendingEvent) throws(ServiceError) -> JSONValue {
        let envelope: JSONValue
        do {
            envelope = try JSONParser.parse(event.payload)
        } catch {
            throw ServiceError(.internal, "the parked event at \(event.position) is not stored as JSON")
        }
        return [
            "position": .int(Int(event.position)),
            "stream": .string(event.stream),
            "attempts": .int(event.attempts),
            "lastFailure": event.lastFailure.map(JSONValue.string) ?? .null,
            "event": envelope,
        ]
    }
}
