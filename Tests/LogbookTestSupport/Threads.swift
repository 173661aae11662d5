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
