import Foundation
import LogbookApplication
import LogbookCommandLine
import LogbookSQLite
import LogbookServer
import LogbookTestSupport
import Testing

@testable import logbook

/// How `run worker` opens a SQLite log: its writer with a page cache of its own, large
/// enough for a batch's random pages; its readers with SQLite's default.
@Suite("StoreOpening: the SQLite worker's connections")
struct StoreOpeningTests {
    @Test("the writer gets an 8 MiB page cache; readers keep SQLite's default")
    func writerPageCache() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "logbook-store-opening-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = try Configuration(
            arguments: try Arguments(["--data-dir", directory.path], for: RunCommand.spec), environment: [:])
        let opening = try StoreOpening(
            .sqlite, configuration: configuration,
            diagnostics: Diagnostics(process: "test", threshold: .error, clock: StepClock()),
            vault: .forTests())
        let writer = try #require(
            (try opening.worker.openWriter().store as? ProtectedEventStore)?.base as? SQLiteEventStore)
        let reader = try #require((try opening.open() as? ProtectedEventStore)?.base as? SQLiteEventStore)
        #expect(StoreOpening.writerPageCacheKibibytes == 8 * 1_024)
        #expect(try writer.pageCacheKibibytes == StoreOpening.writerPageCacheKibibytes)
        let plain = try SQLiteEventStore(path: directory.appendingPathComponent("plain.sqlite3").path)
        #expect(try reader.pageCacheKibibytes == plain.pageCacheKibibytes)
        #expect(try plain.pageCacheKibibytes < StoreOpening.writerPageCacheKibibytes)
    }
}
