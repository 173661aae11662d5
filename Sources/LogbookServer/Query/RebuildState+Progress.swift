import LogbookWire

extension RebuildState {
    /// How `Status` shows a rebuild's progress (a finished one is being switched to).
    init(_ progress: QueryProcessState.RebuildProgress) {
        switch progress {
        case .idle: self = .idle
        case .running(let generation, let position, let head, _):
            self = .running(generation: generation, position: position, head: head)
        case .finished(let generation, _, _): self = .switching(generation: generation)
        case .failed(let reason): self = .failed(reason: reason)
        }
    }
}
