import LogbookApplication
import LogbookLocks
import LogbookMemory

/// A group store in memory, shared by the groups process's threads, whose next commit can
/// be held until the test releases it; it says when a commit is held.
final class HeldCommitStore: GroupStore, @unchecked Sendable {
    private struct State {
        let inner = InMemoryGroupStore()
        var holdNext = false
        var holding = false
        var released = false
    }

    /// Every call to the inner store is made with this lock held.
    private let state = ConditionLock(State())

    func groups() throws(GroupStoreError) -> [GroupRecord] {
        try state.withLock { (state) throws(GroupStoreError) in try state.inner.groups() }
    }

    func outcomes(of group: GroupName, after: Int64, limit: Int) throws(GroupStoreError) -> [EventOutcome] {
        try state.withLock { (state) throws(GroupStoreError) in
            try state.inner.outcomes(of: group, after: after, limit: limit)
        }
    }

    func commit(_ changes: GroupChanges) throws(GroupStoreError) {
        let hold = state.withLock { state in
            defer { state.holdNext = false }
            state.holding = state.holdNext
            return state.holdNext
        }
        if hold {
            state.broadcast()
            state.wait(until: \.released)
        }
        try state.withLock { (state) throws(GroupStoreError) in
            state.holding = false
            try state.inner.commit(changes)
        }
    }

    /// The next commit waits for `release()` before it writes anything.
    func holdNextCommit() {
        state.withLock { state in
            state.holdNext = true
            state.released = false
        }
    }

    /// Waits until a commit is held.
    func waitUntilHeld() { state.wait(until: \.holding) }

    /// Whether a commit is held now.
    var isHolding: Bool { state.withLock { $0.holding } }

    /// Lets the held commit write.
    func release() {
        state.withLock { $0.released = true }
        state.broadcast()
    }
}
