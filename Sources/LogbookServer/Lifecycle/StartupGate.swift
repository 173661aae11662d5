import LogbookLocks

/// How a server thread tells the thread that started it that its sockets are bound (or
/// why they could not be), so a process fails at once and clearly on a taken port. The
/// first word is final: a later `open` or `fail` changes nothing.
public final class StartupGate: Sendable {
    /// The thread's word, once it gave it.
    private let outcome = ConditionLock<Result<Void, ServiceStartError>?>(nil)

    public init() {}

    public func open() { settle(.success(())) }

    public func fail(_ error: ServiceStartError) { settle(.failure(error)) }

    /// Waits for the thread's word.
    public func wait() throws(ServiceStartError) {
        if case .failure(let error)? = outcome.withLock(when: { $0 != nil }, do: { $0 }) { throw error }
    }

    private func settle(_ result: Result<Void, ServiceStartError>) {
        outcome.withLock { if $0 == nil { $0 = result } }
        outcome.broadcast()
    }
}
