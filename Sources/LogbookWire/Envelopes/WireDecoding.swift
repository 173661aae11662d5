public import LogbookApplication
import LogbookDomain
public import LogbookJSON

/// Reads back what `WireEncoding` writes: event envelopes received from a feed or a log
/// read become `RecordedEvent`s again, so a subscriber can project them like the log's own.
public enum WireDecoding {
    /// An envelope `{"eventId","position","stream","version","type","data","metadata","recordedAt"}`.
    /// Extra fields (the feed's `previous`) are ignored; a missing or mistyped one is
    /// `malformed_request`, naming it.
    public static func recordedEvent(from value: JSONValue) throws(ServiceError) -> RecordedEvent {
        guard case .object(let object) = value else { throw problem("envelope", "must be an object") }
        guard case .object(let metadata)? = object["metadata"] else { throw problem("metadata", "must be an object") }
        guard case .string(let recordedAt)? = object["recordedAt"],
            let instant = Timestamp(rfc3339: recordedAt)
        else { throw problem("recordedAt", "must be an RFC 3339 UTC time with milliseconds") }
        guard let data = object["data"], case .object = data else { throw problem("data", "must be an object") }
        return RecordedEvent(
            position: Int64(try integer(object, "position")), eventId: try string(object, "eventId"),
            stream: try string(object, "stream"), version: try integer(object, "version"),
            type: try string(object, "type"), data: JSONWriter.string(data),
            metadata: EventMetadata(
                commandId: try string(metadata, "commandId"), correlationId: try string(metadata, "correlationId"),
                causationId: try string(metadata, "causationId")),
            recordedAt: instant.millisecondsSinceEpoch)
    }

    /// A reply's list of envelopes (`events` of a command or `ReadLog` reply); a problem
    /// names the envelope's index.
    public static func recordedEvents(from value: JSONValue?, field: String = "events") throws(ServiceError)
        -> [RecordedEvent]
    {
        guard case .array(let envelopes)? = value else {
            throw ServiceError(.malformedRequest, "\(field) must be an array", details: [("field", .string(field))])
        }
        var events: [RecordedEvent] = []
        events.reserveCapacity(envelopes.count)
        for (index, envelope) in envelopes.enumerated() {
            do {
                events.append(try recordedEvent(from: envelope))
            } catch {
                throw ServiceError(.malformedRequest, "\(field)[\(index)]: \(error.message)", details: error.details)
            }
        }
        return events
    }

    /// The page a successful `ReadLog` reply carries: `{"events","next","head"}`.
    public static func logPage(from reply: JSONObject) throws(ServiceError) -> LogPage {
        guard case .int(let next)? = reply["next"] else { throw notAnInteger("next") }
        guard case .int(let head)? = reply["head"] else { throw notAnInteger("head") }
        return LogPage(events: try recordedEvents(from: reply["events"]), next: Int64(next), head: Int64(head))
    }

    private static func notAnInteger(_ field: String) -> ServiceError {
        ServiceError(
            .malformedRequest, "ReadLog reply: \(field) must be an integer", details: [("field", .string(field))])
    }

    private static func string(_ object: JSONObject, _ key: String) throws(ServiceError) -> String {
        guard case .string(let text)? = object[key] else { throw problem(key, "must be a string") }
        return text
    }

    private static func integer(_ object: JSONObject, _ key: String) throws(ServiceError) -> Int {
        guard case .int(let number)? = object[key], number >= 1 else { throw problem(key, "must be an integer ≥ 1") }
        return number
    }

    private static func problem(_ field: String, _ reason: String) -> ServiceError {
        ServiceError(.malformedRequest, "event envelope: \(field) \(reason)", details: [("field", .string(field))])
    }
}
