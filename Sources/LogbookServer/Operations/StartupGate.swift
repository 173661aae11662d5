import Foundation

/// How a server thread tells the thread that started it that its sockets are bound (or
/// why they could not be), so a process fails at once and clearly on a taken port.
public final class StartupGate: @unchecked Sendable {
    // `outcome` is only read or written with `condition` locked.
    private let condition = NSCondition()
    private var outcome: Result<Void, ServiceStartError>?

    public init() {}

    public func open() { settle(.success(())) }

    public func fail(_ error: ServiceStartError) { settle(.failure(error)) }

    /// Waits for the thread's word.
    public func wait() throws(ServiceStartError) {
        condition.lock()
        while outcome == nil { condition.wait() }
        let result = outcome
        condition.unlock()
        if case .failure(let error)? = result { throw error }
    }

    private func settle(_ result: Result<Void, ServiceStartError>) {
        condition.lock()
        if outcome == nil { outcome = result }
        condition.broadcast()
        condition.unlock()
    }
}
