import LogbookApplication
import LogbookJSON
import LogbookWire

/// The query thread's reader of the read models: one generation at a time. `follow` moves
/// it to the generation the projection thread publishes (and deletes the older ones'
/// files); until that succeeds it stays on the old one and says so (`isOn`), so nothing it
/// reads is taken for the new generation's. It answers queries and counts rows, reusing a
/// count while the read models stay at the position it was taken at.
struct GenerationReader {
    private(set) var generation: Int
    private var reader: any ReadModelReader
    private let generations: any ReadModelGenerations
    private let diagnostics: Diagnostics
    /// Counting rows scans the tables, so `Status` reuses the count while the read models
    /// stay at the position it was taken at (a rebuild polls `Status` ten times a second).
    private var counted: (checkpoint: Int64, counts: ReadModelCounts)?

    /// Opens a reader of `generation`.
    init(generation: Int, generations: any ReadModelGenerations, diagnostics: Diagnostics)
        throws(ReadModelStoreError)
    {
        reader = try generations.openReader(generation: generation)
        self.generation = generation
        self.generations = generations
        self.diagnostics = diagnostics
    }

    /// Whether answers read now belong to `generation`.
    func isOn(_ generation: Int) -> Bool { self.generation == generation }

    /// Moves to `newGeneration` unless already on it; on failure stays where it is and says why.
    mutating func follow(_ newGeneration: Int) {
        guard newGeneration != generation else { return }
        do {
            reader = try generations.openReader(generation: newGeneration)
            counted = nil
            let old = generation
            generation = newGeneration
            generations.removeOlder(than: newGeneration)
            diagnostics.info(
                "queries now answered from rebuilt read models", ["generation": "\(newGeneration)", "old": "\(old)"])
        } catch {
            diagnostics.error(
                "cannot open the rebuilt read models", ["generation": "\(newGeneration)", "error": "\(error)"])
        }
    }

    /// The reply to `request`: its answer with the reader's position, or the failure.
    func answer(_ request: QueryRequest) -> JSONValue {
        do {
            let position = try checkpoint()
            return QueryRequest.reply(
                id: request.id, position: position, result: try QueryHandler.answer(request.query, from: reader))
        } catch {
            if let detail = error.serverDetail {
                diagnostics.warning("query failed: the read models cannot be read", ["error": detail])
            }
            return WireEncoding.failure(id: request.id, error)
        }
    }

    /// The live rows per read model, or nil when they cannot be counted.
    mutating func counts() -> ReadModelCounts? {
        guard let checkpoint = try? reader.checkpoint() else { return nil }
        if let counted, counted.checkpoint == checkpoint { return counted.counts }
        guard let counts = try? reader.counts() else { return nil }
        counted = (checkpoint, counts)
        return counts
    }

    private func checkpoint() throws(ServiceError) -> Int64 {
        do {
            return try reader.checkpoint()
        } catch {
            throw ServiceError(error)
        }
    }
}
