import Foundation
import LogbookApplication
import LogbookSQLite
import Testing

/// Read-model generations on disk: which one is current, what a start and a switch delete.
@Suite("SQLite read-model generations")
struct GenerationsTests {
    final class Folder {
        let path: String

        init() throws {
            path =
                FileManager.default.temporaryDirectory.appendingPathComponent("logbook-gen-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    @Test("a first start creates generation 1, complete; a restart keeps it")
    func firstStart() throws {
        let folder = try Folder()
        let generations = SQLiteReadModelGenerations(directory: folder.path)
        let (first, store) = try generations.openCurrent()
        #expect(first == 1)
        #expect(try store.isComplete)
        #expect(try generations.openCurrent().generation == 1)
        #expect(generations.existing() == [1])
    }

    @Test("an unfinished rebuild is dropped at start; a finished one becomes current and the old one goes")
    func startAfterRebuilds() throws {
        let folder = try Folder()
        let generations = SQLiteReadModelGenerations(directory: folder.path)
        _ = try generations.openCurrent()
        let (second, _) = try generations.createNext()
        #expect(second == 2)
        #expect(generations.existing() == [1, 2])
        // A crash before `markComplete`: the next start throws generation 2 away.
        #expect(try generations.openCurrent().generation == 1)
        #expect(generations.existing() == [1])

        let (third, rebuilt) = try generations.createNext()
        #expect(third == 2)
        try rebuilt.markComplete()
        #expect(try generations.openCurrent().generation == 2)
        #expect(generations.existing() == [2])
    }

    @Test("after a switch only older generations are removed, never a rebuild that just started")
    func removeOlderKeepsNewer() throws {
        let folder = try Folder()
        let generations = SQLiteReadModelGenerations(directory: folder.path)
        _ = try generations.openCurrent()
        let (second, store) = try generations.createNext()
        try store.markComplete()
        let (third, _) = try generations.createNext()
        #expect(second == 2 && third == 3)
        generations.removeOlder(than: second)
        #expect(generations.existing() == [2, 3])
        #expect(!FileManager.default.fileExists(atPath: generations.path(of: 1)))
        #expect(FileManager.default.fileExists(atPath: generations.path(of: 3)))
    }

    @Test("a rebuild stopped in its bulk load is deleted at start without being opened")
    func startAfterABulkLoadStopped() throws {
        let folder = try Folder()
        let generations = SQLiteReadModelGenerations(directory: folder.path)
        _ = try generations.openCurrent()
        let (second, store) = try generations.createNext()
        try store.beginBulkLoad()
        let path = generations.path(of: second)
        #expect(FileManager.default.fileExists(atPath: path + "-bulkload"))
        // What a crash can leave of pages written without a journal: everything after the
        // first page torn. Opening such a file to ask whether it is complete would fail.
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        let size = try file.seekToEnd()
        try file.seek(toOffset: 4096)
        try file.write(contentsOf: Data(repeating: 0xA5, count: Int(max(size, 16_384)) - 4096))
        try file.close()

        #expect(try generations.openCurrent().generation == 1)
        #expect(generations.existing() == [1])
        #expect(!FileManager.default.fileExists(atPath: path + "-bulkload"))
        // The next rebuild takes the number again, with a fresh file and no marker.
        let (again, fresh) = try generations.createNext()
        #expect(again == second)
        #expect(try fresh.checkpoint() == 0)
        #expect(!FileManager.default.fileExists(atPath: path + "-bulkload"))
    }
}
