import LogbookApplication
import LogbookLocks
import LogbookZMQ

/// The groups process's commit thread: it writes the groups' changes (`GroupCommit`) to a
/// group store connection of its own, opened on this thread by `openStore` (again at the
/// next commit after it could not be), one commit at a time, while the groups loop goes on
/// with its turns. It touches no socket. `finished` (a pipe in the loop's poll) becomes
/// readable once a submitted commit is durable or failed; `takeFinished()` hands its
/// outcome back. `submit`, `takeFinished`, `waitForFinished` and `stop` are called from one
/// thread (the groups loop's); `stop()` lets the commit in hand finish and joins the thread.
/// The thread checks in with its own heartbeat between commits and while idle, so a commit
/// that hangs stops the supervisor's watchdog pings.
final class GroupCommitThread: Sendable {
    /// What became of a submitted commit: nil `failure` once it is durable.
    struct Finished: Sendable, Equatable {
        let commit: GroupCommit
        let failure: GroupStoreError?
    }

    private struct State: Sendable {
        var submitted: GroupCommit?
        var finished: Finished?
        var stopping = false
    }

    /// Readable once a submitted commit finished (drained by `takeFinished()`).
    let finished: WakeUpPipe
    private let state = ConditionLock(State())
    private let thread: OwnedThread

    /// Starts the thread, which opens its store with `openStore` before its first commit.
    init(openStore: @escaping @Sendable () throws(GroupStoreError) -> any GroupStore, heartbeat: Heartbeat)
        throws(ZMQError)
    {
        let finished = try WakeUpPipe()
        self.finished = finished
        thread = OwnedThread(name: "logbook-gcommit") { [state] in
            Self.serve(state, finished, openStore: openStore, heartbeat: heartbeat)
        }
    }

    /// Hands `commit` to the thread; the caller submits no other until this one finished.
    func submit(_ commit: GroupCommit) {
        state.withLock { $0.submitted = commit }
        state.broadcast()
    }

    /// The outcome of the commit submitted last, once; nil while it is under way.
    func takeFinished() -> Finished? {
        finished.drain()
        return state.withLock(Self.takeOutcome)
    }

    /// Waits up to `milliseconds` for the commit under way to finish, then takes its outcome.
    func waitForFinished(milliseconds: Int) -> Finished? {
        state.withLock(when: { $0.finished != nil }, before: .now + .milliseconds(milliseconds), do: Self.takeOutcome)
            ?? nil
    }

    /// The outcome the state holds, taken out of it.
    private static func takeOutcome(_ state: inout State) -> Finished? {
        defer { state.finished = nil }
        return state.finished
    }

    /// Ends the thread once the commit in hand, if any, finished; waits for it.
    func stop() {
        state.withLock { $0.stopping = true }
        state.broadcast()
        thread.join()
    }

    private static func serve(
        _ state: ConditionLock<State>, _ finished: WakeUpPipe,
        openStore: @Sendable () throws(GroupStoreError) -> any GroupStore, heartbeat: Heartbeat
    ) {
        var store: (any GroupStore)?
        while true {
            heartbeat.beat()
            let ready: (State) -> Bool = { $0.submitted != nil || $0.stopping }
            let take: (inout State) -> GroupCommit? = { state in
                defer { state.submitted = nil }
                return state.submitted
            }
            let timeout = heartbeat.pollTimeout(-1)
            let taken: GroupCommit??
            if timeout < 0 {
                taken = state.withLock(when: ready, do: take)
            } else {
                taken = state.withLock(when: ready, before: .now + .milliseconds(timeout), do: take)
            }
            guard let taken else { continue }
            guard let commit = taken else { return }
            var failure: GroupStoreError?
            do throws(GroupStoreError) {
                let opened: any GroupStore
                if let store {
                    opened = store
                } else {
                    opened = try openStore()
                }
                store = opened
                try opened.commit(commit.changes)
            } catch {
                failure = error
            }
            state.withLock { $0.finished = Finished(commit: commit, failure: failure) }
            state.broadcast()
            finished.wake()
        }
    }
}
