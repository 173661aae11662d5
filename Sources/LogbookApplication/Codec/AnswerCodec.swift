import LogbookDomain
import LogbookJSON

/// Writes and reads the answer the log keeps for a command that appended nothing (a
/// refusal or a no-op), so that a retry of its id gets the same answer back.
/// The document is `{"ok":true}` or `{"ok":false,"error":{"code","message","details"?}}`.
public enum AnswerCodec {
    /// The document to record; nil for an outcome with events (those are recorded as events).
    public static func encode(_ outcome: CommandOutcome) -> String? {
        switch outcome {
        case .accepted(let accepted):
            accepted.events.isEmpty ? JSONWriter.string(["ok": true]) : nil
        case .rejected(let error):
            JSONWriter.string(["ok": false, "error": error.json])
        }
    }

    /// The outcome a recorded answer stands for; `position` is where the log stood then.
    public static func decode(_ answer: String, position: Int64, wasRetry: Bool) -> CommandOutcome {
        guard let document = try? JSONParser.parse(answer).objectValue else {
            return .rejected(ServiceError(.internal, "the recorded answer is not JSON: \(answer.prefix(80))"))
        }
        if document["ok"] == .bool(true) {
            return .accepted(CommandAccepted(position: position, events: [], wasRetry: wasRetry))
        }
        guard let error = document["error"]?.objectValue, let code = error["code"]?.stringValue.flatMap(ErrorCode.init),
            let message = error["message"]?.stringValue
        else {
            return .rejected(ServiceError(.internal, "the recorded answer has no valid error: \(answer.prefix(80))"))
        }
        var details: [(key: String, value: ErrorDetail)] = []
        for (key, value) in error["details"]?.objectValue ?? JSONObject() {
            switch value {
            case .string(let text): details.append((key, .string(text)))
            case .int(let number): details.append((key, .int(number)))
            default: continue
            }
        }
        return .rejected(ServiceError(code, message, details: details))
    }

    /// What a command record tells a client: its events, or its recorded answer.
    public static func outcome(of record: CommandRecord, wasRetry: Bool) -> CommandOutcome {
        switch record {
        case .appended(let committed):
            .accepted(CommandAccepted(position: committed.lastPosition, events: committed.events, wasRetry: wasRetry))
        case .answered(_, let position, let answer):
            decode(answer, position: position, wasRetry: wasRetry)
        }
    }
}
