import Synchronization

/// The one connection a store makes its calls on, behind a mutex (one caller at a time): made
/// again before a call when there is none or the server dropped it, and given up after a call
/// under which it broke, or whose error the caller says leaves it unusable. What fails (the
/// connecting or the call) comes back as it was thrown, for the store to name in its own errors.
final class PostgresConnectionSlot: Sendable {
    private let connection: Mutex<PostgresConnection?>
    private let connect: @Sendable () throws -> PostgresConnection

    /// A slot holding `connection` (nil: none yet), which makes its next ones with `connect`.
    init(_ connection: sending PostgresConnection?, connect: @escaping @Sendable () throws -> PostgresConnection) {
        self.connection = Mutex(connection)
        self.connect = connect
    }

    /// `body`'s value on the connection, or what failed. After a failure of `body`, the
    /// connection is given up when it broke or when `discards` says so of the error.
    func withConnection<T: Sendable>(
        discarding discards: (any Error) -> Bool = { _ in false }, _ body: (PostgresConnection) throws -> T
    ) -> Result<T, any Error> {
        connection.withLock { slot in
            let current: PostgresConnection
            if let kept = slot, !kept.isBroken {
                current = kept
            } else {
                slot = nil
                do {
                    current = try connect()
                } catch {
                    return .failure(error)
                }
                slot = current
            }
            do {
                return .success(try body(current))
            } catch {
                if current.isBroken || discards(error) { slot = nil }
                return .failure(error)
            }
        }
    }
}
