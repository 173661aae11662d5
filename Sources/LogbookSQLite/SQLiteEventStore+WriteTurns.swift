public import LogbookApplication

/// The writer's turn: `BEGIN IMMEDIATE` with no busy wait, and none until the turn ends. A
/// connection of another process (or of this one) that holds the write lock makes it
/// answer false at once, where an `append` would wait up to the store's busy timeout.
extension SQLiteEventStore: WriteTurns {
    public func takeTurnIfFree() throws(EventStoreError) -> Bool {
        try refuseWritesIfReader()
        let wait = busyTimeoutMilliseconds
        return try withConnection { db in
            db.setBusyTimeout(milliseconds: 0)
            guard !db.isInTransaction else { return true }
            do {
                try db.statement("BEGIN IMMEDIATE").run([])
                return true
            } catch {
                // No turn: the connection waits for locks again, as it does outside turns.
                db.setBusyTimeout(milliseconds: wait)
                guard let error = error as? SQLiteError, error.isBusy else { throw error }
                return false
            }
        }
    }

    public func endTurn() {
        let wait = busyTimeoutMilliseconds
        // Should the rollback of a turn in which nothing was written fail, the transaction
        // stays this connection's and the next append runs in it and ends it: nothing is lost
        // or half-written, so there is nothing to report.
        _ = try? withConnection { db in
            db.setBusyTimeout(milliseconds: wait)
            if db.isInTransaction { try db.execute("ROLLBACK") }
        }
    }
}
