import LogbookDomain
import Testing

// given events / when command / then events or error, on top of `AggregateStates(folding:)`
// and `CommandDecider.decide(_:given:buckets:)`. Failures are reported at the caller's line.

/// The log so far.
func given(_ events: [DomainEvent]) -> Scenario { Scenario(history: events) }

struct Scenario {
    let history: [DomainEvent]

    func when(_ command: Command) -> Decision {
        let states = AggregateStates(folding: history)
        let outcome = Result { () throws(DomainError) -> [DomainEvent] in
            try CommandDecider.decide(command, given: states, buckets: buckets)
        }
        return Decision(command: command, states: states, outcome: outcome)
    }
}

struct Decision {
    let command: Command
    let states: AggregateStates
    let outcome: Result<[DomainEvent], DomainError>

    /// Expects exactly `expected`, in order. Also checks that every stream written is one the
    /// command reads (so the append can carry an expected version for it).
    func then(_ expected: [DomainEvent], sourceLocation: SourceLocation = #_sourceLocation) {
        switch outcome {
        case .success(let events):
            #expect(events == expected, "\(command.typeName)", sourceLocation: sourceLocation)
            let read = streamsRead(by: command, in: states)
            for event in events {
                #expect(
                    read.contains(event.stream),
                    "\(command.typeName) writes \(event.stream) without reading it (reads \(read.sorted { $0.name < $1.name }))",
                    sourceLocation: sourceLocation)
            }
        case .failure(let error):
            Issue.record(
                "expected \(expected.map(\.typeName)), but \(command.typeName) was refused: \(error)",
                sourceLocation: sourceLocation)
        }
    }

    /// Expects the command to be accepted with nothing to record.
    func thenNothingHappens(sourceLocation: SourceLocation = #_sourceLocation) {
        then([], sourceLocation: sourceLocation)
    }

    /// Expects the command to be refused with exactly `expected`.
    func thenError(_ expected: DomainError, sourceLocation: SourceLocation = #_sourceLocation) {
        switch outcome {
        case .success(let events):
            Issue.record(
                "expected \(expected.code), but \(command.typeName) produced \(events.map(\.typeName))",
                sourceLocation: sourceLocation)
        case .failure(let error):
            #expect(error == expected, "\(command.typeName)", sourceLocation: sourceLocation)
        }
    }

    /// Expects `invalid_input` naming `field`, whatever the reason's wording.
    func thenInvalidInput(field: String, sourceLocation: SourceLocation = #_sourceLocation) {
        switch outcome {
        case .success(let events):
            Issue.record(
                "expected invalid_input, but \(command.typeName) produced \(events.map(\.typeName))",
                sourceLocation: sourceLocation)
        case .failure(let error):
            #expect(error.code == "invalid_input", "\(error)", sourceLocation: sourceLocation)
            #expect(error.invalidField == field, "\(error)", sourceLocation: sourceLocation)
        }
    }
}

/// The streams a command reads when the caller loads what `streamsRead(given:)` names
/// until it names nothing new, as the command use case does.
func streamsRead(by command: Command, in states: AggregateStates) -> Set<StreamId> {
    var loaded = AggregateStates()
    var read: Set<StreamId> = []
    while true {
        let named = Set(command.streamsRead(given: loaded, buckets: buckets))
        if named.isSubset(of: read) { return read }
        read.formUnion(named)
        for stream in named { loaded[stream] = states[stream] }
    }
}
