import Foundation
public import LogbookApplication

/// Read-model generations as files in one directory: `readmodels-<n>.sqlite3`, each a
/// `SQLiteReadModelStore`. The current generation is the highest-numbered complete one.
/// Files of other generations (older ones, or a rebuild a crash interrupted) are deleted
/// by `openCurrent()` at start; older ones by `removeOlder(than:)` after a switch.
public struct SQLiteReadModelGenerations: ReadModelGenerations {
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    public func path(of generation: Int) -> String {
        (directory as NSString).appendingPathComponent("readmodels-\(generation).sqlite3")
    }

    /// The generations that have a file, in increasing order.
    public func existing() -> [Int] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { name -> Int? in
            guard name.hasPrefix("readmodels-"), name.hasSuffix(".sqlite3") else { return nil }
            return Int(name.dropFirst("readmodels-".count).dropLast(".sqlite3".count)).flatMap { $0 > 0 ? $0 : nil }
        }.sorted()
    }

    public func openCurrent() throws(ReadModelStoreError) -> (generation: Int, store: any ReadModelStore) {
        for generation in existing().reversed() {
            let store = try SQLiteReadModelStore(path: path(of: generation))
            if try store.isComplete {
                remove(existing().filter { $0 != generation })
                return (generation, store)
            }
        }
        remove(existing())
        let store = try SQLiteReadModelStore(path: path(of: 1))
        try store.markComplete()
        return (1, store)
    }

    public func openReader(generation: Int) throws(ReadModelStoreError) -> any ReadModelReader {
        try SQLiteReadModelReader(path: path(of: generation))
    }

    public func createNext() throws(ReadModelStoreError) -> (generation: Int, store: any ReadModelStore) {
        let generation = (existing().last ?? 0) + 1
        return (generation, try SQLiteReadModelStore(path: path(of: generation)))
    }

    public func removeOlder(than kept: Int) {
        remove(existing().filter { $0 < kept })
    }

    private func remove(_ generations: [Int]) {
        for generation in generations {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                try? FileManager.default.removeItem(atPath: path(of: generation) + suffix)
            }
        }
    }
}
