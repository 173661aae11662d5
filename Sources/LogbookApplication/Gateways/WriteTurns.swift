/// A log writer whose write lock can be taken without waiting, for a caller that must not
/// block on another connection (the worker's command loop, which runs a small batch itself
/// only when nothing stands in its way, and hands it to the commit stage otherwise).
///
/// Promises: `takeTurnIfFree()` either returns true with this connection holding the log's
/// write lock, so that other writers now wait for it and the next `append` on this
/// connection runs in the turn and ends it (committed or rolled back), or returns false
/// having waited for nothing and holding nothing. Reads on the connection meanwhile see
/// the log as of the turn. Until `endTurn()` the connection waits for no other
/// connection's lock at all: a later append (a second round of deciding, after a conflict)
/// that finds the lock held is refused at once (`unavailable`, cause `busy`). `endTurn()`,
/// due after every turn taken, ends a turn that no append ended (nothing was written in
/// it) and lets the connection wait for locks again.
public protocol WriteTurns: Sendable {
    /// Takes the write lock if no other connection holds it now; false when one does. Throws
    /// what the store throws for another failure (the connection unusable).
    func takeTurnIfFree() throws(EventStoreError) -> Bool
    /// Ends the turn if an append did not, releasing the write lock, and waits for other
    /// connections' locks again from now on.
    func endTurn()
}
