import Foundation
import LogbookApplication

/// How a read-model file is written while it is bulk loaded: without a journal and without
/// syncs (`journal_mode=OFF`, `synchronous=OFF`), so each page is written once, into the
/// file, instead of into the WAL and then again by its checkpoint. No one reads the file
/// before it is complete, so a rollback journal would protect nothing anyone sees; what a
/// crash can leave is a file with half-written pages, and a marker beside it
/// (`marker(of:)`) tells the next start to delete that file without opening it.
///
/// `end` makes every page durable with one `fsync`, returns the file to the WAL with
/// `synchronous=NORMAL` and only then removes the marker: a file without a marker is
/// always whole. Leaving the WAL needs the file to be open nowhere else; when it is, the
/// bulk load stays on the WAL (`begin` returns false) and `end` checkpoints it.
///
/// Without a journal SQLite cannot roll a transaction back: after a failed write the file
/// may hold part of it. A failed write already ends the bulk load (the store reports it to
/// every later call), so such a file is never completed, and its marker has it deleted.
enum SQLiteBulkLoadJournal {
    /// The file that exists beside `path` while a bulk load writes it without a journal.
    static func marker(of path: String) -> String { path + "-bulkload" }

    /// Leaves the marker (durably: its directory is synced before any page is written
    /// without a journal), then turns the journal and the syncs off. False, with the file
    /// still on the WAL and no marker, when another connection has the file open.
    static func begin(_ tables: SQLiteReadModelTables) throws(ReadModelStoreError) -> Bool {
        let marker = marker(of: tables.path)
        guard FileManager.default.createFile(atPath: marker, contents: nil) else {
            throw .unavailable("\(marker): cannot create the bulk-load marker")
        }
        try sync(directoryOf: tables.path)
        do throws(SQLiteError) {
            if try tables.db.text("PRAGMA journal_mode = off")?.lowercased() == "off" {
                try tables.db.execute("PRAGMA synchronous = OFF")
                return true
            }
        } catch let error where error.isBusy {
            // Another connection holds the file open: the load goes on in the WAL.
        } catch {
            throw SQLiteReadModelTables.storeError(error, path: tables.path)
        }
        try removeMarker(of: tables.path)
        return false
    }

    /// The end of a bulk load `begin` started: without a journal (`withoutJournal`, what
    /// `begin` returned), syncs the file, returns it to the WAL and removes the marker; on
    /// the WAL, a checkpoint, which with `synchronous=NORMAL` syncs the WAL and the file.
    static func end(_ tables: SQLiteReadModelTables, withoutJournal: Bool) throws(ReadModelStoreError) {
        guard withoutJournal else {
            try tables.sql { () throws(SQLiteError) in try tables.db.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
            return
        }
        if let failure = FileSync.sync(path: tables.path, missingIsFine: false) { throw .unavailable(failure) }
        let reported = try tables.sql { () throws(SQLiteError) in
            try tables.db.execute("PRAGMA synchronous = NORMAL")
            return try tables.db.text("PRAGMA journal_mode = wal")?.lowercased()
        }
        guard reported == "wal" else {
            throw .unavailable(
                "\(tables.path): cannot return to the WAL (SQLite reports \(reported ?? "no journal mode"))")
        }
        try removeMarker(of: tables.path)
    }

    private static func removeMarker(of path: String) throws(ReadModelStoreError) {
        let marker = marker(of: path)
        do {
            try FileManager.default.removeItem(atPath: marker)
        } catch {
            throw .unavailable("\(marker): cannot remove the bulk-load marker: \(error)")
        }
        try sync(directoryOf: path)
    }

    private static func sync(directoryOf path: String) throws(ReadModelStoreError) {
        if let failure = FileSync.syncDirectory(containing: path) { throw .unavailable(failure) }
    }
}
