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

    /// The connection itself, taken out of the slot for a call that outlasts one
    /// `withConnection` (a statement sent now and answered later): made first when there is
    /// none or it broke. Calls meanwhile make a connection of their own in the slot. Hand it
    /// back with `giveBack` once the call is over.
    func lend() -> Result<PostgresConnection, any Error> {
        connection.withLock { slot in
            let current = connected(&slot)
            slot = nil
            return current
        }
    }

    /// Puts back a lent connection, unless it broke or the slot made another meanwhile (then
    /// it is closed).
    func giveBack(_ lent: PostgresConnection) {
        guard !lent.isBroken else { return }
        connection.withLock { slot in
            if slot == nil { slot = lent }
        }
    }

    /// `body`'s value on the connection, or what failed. After a failure of `body`, the
    /// connection is given up when it broke or when `discards` says so of the error.
    func withConnection<T: Sendable>(
        discarding discards: (any Error) -> Bool = { _ in false }, _ body: (PostgresConnection) throws -> T
    ) -> Result<T, any Error> {
        connection.withLock { slot in
            let current: PostgresConnection
            switch connected(&slot) {
            case .success(let connection): current = connection
            case .failure(let error): return .failure(error)
            }
            do {
                return .success(try body(current))
            } catch {
                if current.isBroken || discards(error) { slot = nil }
                return .failure(error)
            }
        }
    }

    /// The slot's connection, made first (and kept in the slot) when there is none or it broke.
    private func connected(_ slot: inout PostgresConnection?) -> Result<PostgresConnection, any Error> {
        if let kept = slot, !kept.isBroken { return .success(kept) }
        slot = nil
        do {
            let made = try connect()
            slot = made
            return .success(made)
        } catch {
            return .failure(error)
        }
    }
}
