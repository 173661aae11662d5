import Foundation
import Synchronization

/// Runs `body` on `count` threads of their own at once and waits for all of them; the
/// store's calls block, so they get real threads rather than Swift concurrency's pool.
/// Returns the errors the threads threw.
public func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) -> [any Error] {
    let group = DispatchGroup()
    let errors = ErrorBox()
    for index in 0..<count {
        group.enter()
        Thread {
            defer { group.leave() }
            do { try body(index) } catch { errors.append(error) }
        }.start()
    }
    group.wait()
    return errors.all
}

/// Collects errors from several threads.
public final class ErrorBox: Sendable {
    private let errors = Mutex<[any Error]>([])

    public init() {}

    public func append(_ error: any Error) { errors.withLock { $0.append(error) } }

    public var all: [any Error] { errors.withLock { $0 } }
}

/// Runs blocking work (a server started or stopped, a store's call, a wait on another
/// process) on a thread of its own and awaits its value, so that it never holds one of
/// Swift concurrency's pool threads (two on a two-core machine), which every async test
/// running meanwhile needs to go on. Expectations stay in the awaiting test.
/// Sockets the body uses must be made inside it: the thread is their only one.
public func offThePool<T: Sendable>(
    _ name: String = "test-blocking", _ body: @escaping @Sendable () throws -> T
) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = name
        thread.start()
    }
}
