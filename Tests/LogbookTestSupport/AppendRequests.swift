import Foundation
public import LogbookApplication

/// Builders for append requests, so that tests say what matters and nothing else.
public enum Requests {
    public static func event(_ stream: String, _ type: String = "Happened", data: String = #"{"n":1}"#) -> NewEvent {
        NewEvent(eventId: UUID().uuidString, stream: stream, type: type, data: data, recordedAt: 1_764_000_000_000)
    }

    public static func request(
        _ commandId: String, _ events: [NewEvent], expecting expectations: [String: ExpectedVersion] = [:],
        after dependencies: Set<String> = [], answer: String? = nil
    ) -> AppendRequest {
        AppendRequest(
            metadata: EventMetadata(commandId: commandId, correlationId: "corr-\(commandId)", causationId: commandId),
            events: events, expectations: expectations, dependencies: dependencies, answer: answer)
    }

    /// A request that records an answer for a command that appended nothing.
    public static func answer(
        _ commandId: String, _ answer: String = #"{"ok":true}"#,
        expecting expectations: [String: ExpectedVersion] = [:],
        after dependencies: Set<String> = []
    ) -> AppendRequest {
        request(commandId, [], expecting: expectations, after: dependencies, answer: answer)
    }

    /// A request appending `count` events to `stream` with no expectation.
    public static func simple(_ commandId: String, stream: String, count: Int = 1) -> AppendRequest {
        request(commandId, (0..<count).map { _ in event(stream) })
    }
}

extension AppendResult {
    /// The events a committed request appended.
    public var committed: CommittedCommand? {
        if case .committed(.appended(let committed)) = self { committed } else { nil }
    }

    public var duplicate: CommandRecord? {
        if case .duplicate(let record) = self { record } else { nil }
    }

    public var conflict: VersionConflict? {
        if case .conflict(let conflict) = self { conflict } else { nil }
    }

    public var abandonedFor: String? {
        if case .abandoned(let dependency) = self { dependency } else { nil }
    }
}
