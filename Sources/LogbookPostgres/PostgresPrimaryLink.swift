import LogbookApplication

/// A connection to the primary that a store reading a streaming replica belongs to, used
/// only to ask how far the primary's synchronous standbys have flushed
/// (`PostgresStandbyFence`). Connects on first use and again after the server dropped it,
/// trying the hosts of its connection string (`target_session_attrs=read-write` finds the
/// primary after a failover); one caller at a time.
final class PostgresPrimaryLink: Sendable {
    /// The primary's database, host and port, for messages.
    let target: String
    private let connection: PostgresConnectionSlot

    init(connectionString: String) throws(EventStoreError) {
        if let problem = PostgresConnection.malformation(of: connectionString) { throw .invalidRequest(problem) }
        target = PostgresConnection.target(of: connectionString)
        connection = PostgresConnectionSlot(nil) { () throws in
            try PostgresConnection(connectionString: connectionString)
        }
    }

    /// `body`'s value on the primary's connection, made first when there is none or the
    /// server dropped it; libpq's errors become `EventStoreError`s naming the primary.
    func withConnection<T: Sendable>(_ body: (PostgresConnection) throws -> T) throws(EventStoreError) -> T {
        let result = connection.withConnection(body)
        switch result {
        case .success(let value): return value
        case .failure(let error as EventStoreError): throw error
        case .failure(let error as PostgresError): throw PostgresEventStore.storeError(error, target: target)
        case .failure(let error): throw .failed("\(target): \(error)")
        }
    }
}
