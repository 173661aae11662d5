/// The head and stream versions one connection learned in its own committed appends, so
/// that the next append need not ask the database again. Trusted only while no other
/// connection has committed to the file since: each append shows the `PRAGMA data_version`
/// it read inside its write transaction, and a different one than at the last commit
/// forgets everything. Memory stays bounded: streams live in two generations of at most
/// `capacity` each, the older dropped whole when the newer fills up; a stream an append
/// touches moves to the newer one.
struct SQLiteKnownVersions {
    /// Streams per generation: enough for a busy log's recent streams, small enough that two
    /// generations of typical stream names stay a small part of the worker's memory.
    static let defaultCapacity = 8_192

    private(set) var head: Int64?
    private var recent: [String: Int] = [:]
    private var older: [String: Int] = [:]
    /// The data version seen inside the last transaction whose commit this knowledge
    /// reflects; nil when nothing is known.
    private var dataVersion: Int64?
    let capacity: Int

    init(capacity: Int = defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    /// Called inside a write transaction with the data version read there: forgets
    /// everything if another connection committed since the knowledge was learned.
    mutating func trust(onlyAt dataVersion: Int64) {
        if self.dataVersion != dataVersion { forget() }
    }

    /// The committed version of `stream`, when known.
    func version(of stream: String) -> Int? {
        recent[stream] ?? older[stream]
    }

    /// Learns what a transaction that read `dataVersion` left once it committed: its head and
    /// the version of every stream it read or wrote.
    mutating func learn(head: Int64, versions: [String: Int], dataVersion: Int64) {
        self.head = head
        self.dataVersion = dataVersion
        for (stream, version) in versions where recent.updateValue(version, forKey: stream) == nil {
            if recent.count >= capacity {
                older = recent
                recent = [:]
            }
        }
    }

    /// Drops everything: after a rollback, a failed commit, or another connection's commit.
    mutating func forget() {
        head = nil
        dataVersion = nil
        recent = [:]
        older = [:]
    }

    /// How many streams are known (both generations, a stream in both counted twice).
    var count: Int { recent.count + older.count }
}
