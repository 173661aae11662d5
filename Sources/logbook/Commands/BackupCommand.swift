import Foundation
import Glibc
import LogbookCommandLine
import LogbookCrypto
import LogbookJSON
import LogbookSQLite

/// `logbook backup DEST`: a consistent copy of the SQLite event log, taken while the worker
/// serves, as a new data directory DEST holding `events.sqlite3` (`SQLiteEventLogBackup`),
/// then the key store `keys.sqlite3` (copied after the log, so it holds every key the copied
/// log needs; a key destroyed in between leaves its user forgotten in the copy too) and the
/// data directory's own `master.key` when it has one,
/// so that `logbook verify --data-dir DEST` checks it and `logbook run worker --data-dir DEST`
/// serves from where it ends. Never overwrites: DEST must not exist. Prints
/// `{"backup":DEST,"head":N,"events":N,"bytes":N}`. A PostgreSQL log is refused (exit 2)
/// with a pointer to PostgreSQL's own tools.
struct BackupCommand: ConfiguredCommand {
    static let spec = CommandSpec(
        name: "backup", usage: "DEST [--data-dir DIR]",
        listings: [.init("backup DEST", "copy the event log while the worker serves, into a new data directory")],
        section: .workerFiles,
        description: """
            Copies DIR/events.sqlite3 into DEST/events.sqlite3, DEST a new directory (never
            overwritten), while the worker goes on serving: the copy is the log as of one commit
            (SQLite's online backup API), with every command acknowledged before it began. It is
            written under a temporary name, passes SQLite's integrity check and is synced before
            it takes its name. Prints {"backup":DEST,"head":N,"events":N,"bytes":N}.
            Restore: stop the worker, then run it with --data-dir DEST (or move DEST/events.sqlite3
            into its data directory, leaving no old events.sqlite3-wal or -shm beside it);
            `logbook verify --data-dir DEST` re-checks the copy. The key store (DIR/keys.sqlite3)
            is copied after the log, and DIR/master.key with it when the data directory holds
            the master key; a master key kept elsewhere must be given to the restored worker.
            A backup taken before a user was forgotten still holds their key: it forgets them
            only when it is destroyed, so keep backups no longer than your policy allows.
            With --store postgresql://… it refuses: back up PostgreSQL with pg_basebackup or pg_dump.
            """,
        settings: Configuration.settings + [.store])

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.count == 1, let destination = arguments.positionals.first else {
            throw .usage("expected where to put the backup: logbook backup DEST")
        }
        if case .postgres = configuration.storage.store {
            throw .usage(
                "backup copies a SQLite log; a PostgreSQL log is backed up with PostgreSQL's own tools: "
                    + "pg_basebackup (the whole server, for point-in-time recovery) or pg_dump (the database, "
                    + "with the schema's triggers and functions); see \"Backups\" in docs/operations.md")
        }
        let source = configuration.eventLogPath
        guard FileManager.default.fileExists(atPath: source) else {
            throw .unavailable("no event log at \(source) (set --data-dir or LOGBOOK_DATA_DIR)")
        }
        try makeDirectory(destination)
        let log = (destination as NSString).appendingPathComponent("events.sqlite3")
        let summary: SQLiteEventLogBackup.Summary
        do {
            summary = try SQLiteEventLogBackup.copy(from: source, to: log)
        } catch {
            rmdir(destination)
            throw .unavailable(error.description)
        }
        let keys = try copyKeys(to: destination)
        var report: JSONObject = [
            "backup": .string(destination), "head": .int(Int(summary.head)), "events": .int(Int(summary.events)),
            "bytes": .int(Int(summary.bytes)),
        ]
        report["keyStore"] = keys.keyStore.map(JSONValue.string)
        report["masterKey"] = keys.masterKey.map(JSONValue.string)
        output.out(JSONWriter.string(.object(report)))
        return .success
    }

    /// Copies the key store, and the data directory's master key file, into `destination`;
    /// answers the copies made (none for a log without a key store).
    private func copyKeys(to destination: String) throws(CLIError) -> (keyStore: String?, masterKey: String?) {
        let source = configuration.path(VaultOpening.keyStoreFile)
        guard FileManager.default.fileExists(atPath: source) else { return (nil, nil) }
        let keyStore = (destination as NSString).appendingPathComponent(VaultOpening.keyStoreFile)
        do {
            try SQLitePersonKeyStore(path: source).copy(to: keyStore)
        } catch {
            throw .unavailable("the log was copied, but not its key store: \(error)")
        }
        let master = configuration.path(VaultOpening.defaultMasterKeyFile)
        guard FileManager.default.fileExists(atPath: master) else { return (keyStore, nil) }
        let copy = (destination as NSString).appendingPathComponent(VaultOpening.defaultMasterKeyFile)
        do {
            try MasterKey.read(path: master).write(to: copy)
        } catch {
            throw .unavailable("the log and its key store were copied, but not the master key: \(error)")
        }
        return (keyStore, copy)
    }

    /// Creates `path` (and any missing parent), refusing one that exists: `mkdir` says so atomically.
    private func makeDirectory(_ path: String) throws(CLIError) {
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty {
            do {
                try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            } catch {
                throw .unavailable("cannot create \(parent): \(error.localizedDescription)")
            }
        }
        guard mkdir(path, 0o750) == 0 else {
            let error = errno
            if error == EEXIST { throw .unavailable("\(path) exists; a backup never overwrites: choose a new name") }
            throw .unavailable("cannot create \(path): \(String(cString: strerror(error)))")
        }
    }
}
