import Foundation
public import LogbookApplication

/// Read-model generations as files in one directory: `readmodels-<n>.sqlite3`, each a
/// `SQLiteReadModelStore`. The current generation is the highest-numbered complete one.
/// Files of other generations (older ones, or a rebuild a crash interrupted) are deleted
/// by `openCurrent()` at start; older ones by `removeOlder(than:)` after a switch. A file
/// with a bulk-load marker beside it (`SQLiteBulkLoadJournal`) was being written without a
/// journal when the process stopped: it is deleted without being opened.
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
        for generation in existing().reversed() where !isBeingBulkLoaded(generation) {
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
        // A marker left by a crash between deleting a file and deleting its marker.
        try? FileManager.default.removeItem(atPath: SQLiteBulkLoadJournal.marker(of: path(of: generation)))
        return (generation, try SQLiteReadModelStore(path: path(of: generation)))
    }

    public func removeOlder(than kept: Int) {
        remove(existing().filter { $0 < kept })
    }

    private func isBeingBulkLoaded(_ generation: Int) -> Bool {
        FileManager.default.fileExists(atPath: SQLiteBulkLoadJournal.marker(of: path(of: generation)))
    }

    /// Deletes each generation's files, its bulk-load marker last: a file is never left
    /// without its marker while it may still be half-written.
    private func remove(_ generations: [Int]) {
        for generation in generations {
            let path = path(of: generation)
            for file in ["", "-wal", "-shm", "-journal"].map({ path + $0 }) + [SQLiteBulkLoadJournal.marker(of: path)] {
                try? FileManager.default.removeItem(atPath: file)
            }
        }
    }
}
