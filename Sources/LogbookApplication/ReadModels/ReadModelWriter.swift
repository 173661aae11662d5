public import LogbookDomain

/// What the `Projector` may read while it projects: the current rows, including those
/// written earlier in the same batch.
public protocol ReadModelLookup {
    func user(_ id: UserId) throws(ReadModelStoreError) -> UserView?
    func post(_ id: PostId) throws(ReadModelStoreError) -> PostView?
    func product(_ id: ProductId) throws(ReadModelStoreError) -> ProductView?
    func containsOrder(_ id: OrderId) throws(ReadModelStoreError) -> Bool
}

/// The rows of one store inside its write transaction. Each store implements it; the
/// `Projector` alone decides what to write, so every store projects the same way.
public protocol ReadModelWriter: ReadModelLookup {
    /// Carries out `change` exactly as `ReadModelChange` describes it.
    mutating func write(_ change: ReadModelChange) throws(ReadModelStoreError)
}
