public import LogbookApplication
import LogbookDomain
public import LogbookJSON

/// The JSON shapes of wire contract version 1 (ARCHITECTURE §5, `schemas/`): event
/// envelopes, command replies and error objects. One place writes them, so every
/// adapter (CLI, sockets) prints the same documents.
public enum WireEncoding {
    /// `{"eventId","position","stream","version","type","data","metadata","recordedAt"}`.
    /// Throws when the stored `data` is not JSON (a damaged log), rather than inventing a payload.
    public static func envelope(_ event: RecordedEvent) throws(EventDecodingError) -> JSONValue {
        let data: JSONValue
        do {
            data = try JSONParser.parse(event.data)
        } catch {
            throw EventDecodingError(type: event.type, reason: "payload is not JSON: \(error)")
        }
        return [
            "eventId": .string(event.eventId),
            "position": .int(Int(event.position)),
            "stream": .string(event.stream),
            "version": .int(event.version),
            "type": .string(event.type),
            "data": data,
            "metadata": [
                "commandId": .string(event.metadata.commandId),
                "correlationId": .string(event.metadata.correlationId),
                "causationId": .string(event.metadata.causationId),
            ],
            "recordedAt": .string(Timestamp(millisecondsSinceEpoch: event.recordedAt).rfc3339),
        ]
    }

    /// `{"code","message","details"?}`: the error object, as `ServiceError.json` writes it.
    public static func error(_ error: ServiceError) -> JSONValue {
        error.json
    }

    /// `{"id","ok":false,"error":{…}}`; `id` is null when the request carried no readable id.
    public static func failure(id: String?, _ error: ServiceError) -> JSONValue {
        ["id": id.map(JSONValue.string) ?? .null, "ok": false, "error": WireEncoding.error(error)]
    }

    /// `{"id","ok":true, …fields}` for replies other than a command's.
    public static func success(id: String, _ fields: JSONObject) -> JSONValue {
        var object: JSONObject = ["id": .string(id), "ok": true]
        for (key, value) in fields { object[key] = value }
        return .object(object)
    }

    /// The bytes `JSONWriter` writes for `commandReply(id:outcome:)`, taking envelopes already
    /// written as bytes (by position, as `EnvelopeWriter` writes them) instead of writing
    /// them again, and building no `JSONValue` for an accepted command.
    public static func commandReplyBytes(id: String, _ outcome: CommandOutcome, envelopes written: [Int64: [UInt8]])
        -> [UInt8]
    {
        guard case .accepted(let accepted) = outcome else { return JSONWriter.bytes(commandReply(id: id, outcome)) }
        var output: [UInt8] = []
        output.reserveCapacity(64 + accepted.events.count * 512)
        output.append(contentsOf: #"{"id":"#.utf8)
        JSONWriter.writeString(id, into: &output)
        output.append(contentsOf: #","ok":true,"position":"#.utf8)
        JSONWriter.writeInteger(Int(accepted.position), into: &output)
        output.append(contentsOf: #","events":["#.utf8)
        for (offset, event) in accepted.events.enumerated() {
            if offset > 0 { output.append(UInt8(ascii: ",")) }
            if let ready = written[event.position] {
                output.append(contentsOf: ready)
                continue
            }
            do {
                try EnvelopeWriter.write(event, into: &output)
            } catch {
                return JSONWriter.bytes(failure(id: id, .unreadable(error)))
            }
        }
        output.append(contentsOf: "]}".utf8)
        return output
    }

    /// `{"id","ok":true,"position","events":[…]}` or the failure reply.
    public static func commandReply(id: String, _ outcome: CommandOutcome) -> JSONValue {
        commandReply(id: id, outcome, envelopes: [:])
    }

    /// The same, taking envelopes already written (by position) instead of writing them again.
    public static func commandReply(id: String, _ outcome: CommandOutcome, envelopes written: [Int64: JSONValue])
        -> JSONValue
    {
        switch outcome {
        case .rejected(let error):
            return failure(id: id, error)
        case .accepted(let accepted):
            var envelopes: [JSONValue] = []
            for event in accepted.events {
                if let ready = written[event.position] {
                    envelopes.append(ready)
                    continue
                }
                do {
                    envelopes.append(try envelope(event))
                } catch {
                    return failure(id: id, .unreadable(error))
                }
            }
            return [
                "id": .string(id), "ok": true, "position": .int(Int(accepted.position)), "events": .array(envelopes),
            ]
        }
    }
}
