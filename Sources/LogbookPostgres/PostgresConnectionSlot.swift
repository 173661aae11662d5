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
            if let kept = slot.take(), !kept.isBroken { return .success(kept) }
            do {
                return .success(try connect())
            } catch {
                return .failure(error)
            }
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
