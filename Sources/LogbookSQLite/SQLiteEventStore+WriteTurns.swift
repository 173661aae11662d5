import CSQLite
public import LogbookApplication

/// The writer's turn: `BEGIN IMMEDIATE` with no busy wait. A connection of another process
/// (or of this one) that holds the write lock makes it answer false at once, where an
/// `append` would wait up to the store's busy timeout.
extension SQLiteEventStore: WriteTurns {
    public func takeTurnIfFree() throws(EventStoreError) -> Bool {
        if case .readsDurable = durability {
            throw .invalidRequest("this connection only reads (its horizon's writer appends)")
        }
        let wait = busyTimeoutMilliseconds
        return try withConnection { db in
            guard !db.isInTransaction else { return true }
            db.setBusyTimeout(milliseconds: 0)
            defer { db.setBusyTimeout(milliseconds: wait) }
            do {
                try db.statement("BEGIN IMMEDIATE").run([])
                return true
            } catch let error as SQLiteError where error.code & 0xFF == SQLITE_BUSY {
                return false
            }
        }
    }

    public func endTurn() {
        // A turn in which nothing was written. Should its rollback fail, the transaction
        // stays this connection's and the next append runs in it and ends it: nothing is lost
        // or half-written, so there is nothing to report.
        _ = try? withConnection { db in
            if db.isInTransaction { try db.execute("ROLLBACK") }
        }
    }
}
