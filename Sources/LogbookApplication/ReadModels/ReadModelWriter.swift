/// The rows of one store inside its write transaction. Each store implements it; the
/// `Projector` alone decides what to write, so every store projects the same way.
public protocol ReadModelWriter {
    /// Carries out `change` exactly as `ReadModelChange` describes it.
    mutating func write(_ change: ReadModelChange) throws(ReadModelStoreError)
}
