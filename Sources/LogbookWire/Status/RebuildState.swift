public import LogbookJSON

/// Where a query process's rebuild stands, as its `Status` says (`rebuild` of
/// `query-status-reply.schema.json`): none under way, filling a new generation, switching
/// to a filled one, or failed. `json` is its one JSON form; `init(json:)` reads it back.
public enum RebuildState: Sendable, Equatable {
    case idle
    /// Filling `generation` (0 until its file exists), applied through `position` of a log
    /// whose head is `head`.
    case running(generation: Int, position: Int64, head: Int64)
    /// Filled: the projection thread is bringing `generation` up to date and switching to it.
    case switching(generation: Int)
    case failed(reason: String)

    /// `{"state":"idle"}`, `{"state":"running","generation","position","head"}`,
    /// `{"state":"switching","generation"}` or `{"state":"failed","reason"}`.
    public var json: JSONValue {
        switch self {
        case .idle: ["state": "idle"]
        case .running(let generation, let position, let head):
            [
                "state": "running", "generation": .int(generation), "position": .int(Int(position)),
                "head": .int(Int(head)),
            ]
        case .switching(let generation): ["state": "switching", "generation": .int(generation)]
        case .failed(let reason): ["state": "failed", "reason": .string(reason)]
        }
    }

    /// Reads what `json` writes; `path` names the object in errors.
    public init(json: JSONValue, at path: String = "rebuild") throws(StatusDocumentError) {
        let state = try StatusFields(json, at: path, allowed: ["state", "generation", "position", "head", "reason"])
            .string("state")
        switch state {
        case "idle":
            _ = try StatusFields(json, at: path, allowed: ["state"])
            self = .idle
        case "running":
            let fields = try StatusFields(json, at: path, allowed: ["state", "generation", "position", "head"])
            self = .running(
                generation: try fields.int("generation"), position: Int64(try fields.int("position")),
                head: Int64(try fields.int("head")))
        case "switching":
            let fields = try StatusFields(json, at: path, allowed: ["state", "generation"])
            self = .switching(generation: try fields.int("generation"))
        case "failed":
            let fields = try StatusFields(json, at: path, allowed: ["state", "reason"])
            self = .failed(reason: try fields.string("reason"))
        default:
            throw StatusDocumentError(
                field: "\(path).state", "must be idle, running, switching or failed, got \"\(state)\"")
        }
    }
}
