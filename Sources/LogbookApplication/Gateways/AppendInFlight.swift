/// An append handed to its store and not yet answered (`EventStore.send`): `results()`
/// waits for the answer and returns it once, as `append` would have. Between the two the
/// caller may work on, but makes no other call on the store's writing connection: the
/// store's reads for decisions (`readStream`, `readWholeStreams`, `commandRecord`) stay
/// free to call.
public struct AppendInFlight: ~Copyable {
    private let answer: () throws(EventStoreError) -> [AppendResult]
    /// A file descriptor that becomes readable once the answer begins to arrive (to poll
    /// beside others); nil when the answer is in already.
    public let descriptor: Int32?
    /// When `results()` stops waiting for an answer that has not begun to arrive (the store
    /// then asks the server to cancel the append): a caller that polls `descriptor` polls no
    /// longer than this, then calls `results()`. Nil: no limit.
    public let deadline: ContinuousClock.Instant?

    /// An append whose answer `answer` waits for (called once), arriving on `descriptor`,
    /// given up on at `deadline`.
    public init(
        descriptor: Int32?, deadline: ContinuousClock.Instant? = nil,
        answer: @escaping () throws(EventStoreError) -> [AppendResult]
    ) {
        self.descriptor = descriptor
        self.deadline = deadline
        self.answer = answer
    }

    /// An append made at once by `append`, already answered (a store that does not send ahead).
    public static func appended(by append: () throws(EventStoreError) -> [AppendResult]) -> AppendInFlight {
        do {
            return .answered(.success(try append()))
        } catch {
            return .answered(.failure(error))
        }
    }

    /// An append already answered.
    public static func answered(_ results: Result<[AppendResult], EventStoreError>) -> AppendInFlight {
        AppendInFlight(descriptor: nil) { () throws(EventStoreError) in try results.get() }
    }

    /// This append, its answer passed through `next` (which is handed the wait for it), for
    /// a store that wraps another.
    public consuming func then(
        _ next: @escaping (() throws(EventStoreError) -> [AppendResult]) throws(EventStoreError) -> [AppendResult]
    ) -> AppendInFlight {
        let answer = self.answer
        return AppendInFlight(descriptor: descriptor, deadline: deadline) { () throws(EventStoreError) in
            try next(answer)
        }
    }

    /// Waits for the answer: the results in request order, or why the append failed (its
    /// outcome then as `append` documents for the error).
    public consuming func results() throws(EventStoreError) -> [AppendResult] {
        try answer()
    }
}
