import Foundation
import Glibc
import LogbookApplication
import LogbookCommandLine
import LogbookCrypto
import LogbookJSON
import LogbookPostgres
import LogbookSQLite

/// `logbook migrate SRC DEST`: copies a log written before personal data was sealed (the
/// SQLite log of data directory SRC, or the PostgreSQL database SRC names) into DEST (a new
/// data directory, or an empty PostgreSQL database) with every personal value sealed and
/// the email claims on their buckets' streams (`LogMigration`), then prints
/// `{"source","destination","events","commands","answers","claimsMoved","head","masterKey"}`.
/// SRC is only read (a PostgreSQL one may have its schema brought forward, as any newer
/// process does); a new data directory that fails is removed, a database is left as it is.
struct MigrateCommand: ConfiguredCommand {
    static let spec = CommandSpec(
        name: "migrate", usage: "SRC DEST [--master-key FILE]",
        listings: [.init("migrate SRC DEST", "copy a log written before personal data was sealed into a sealed one")],
        section: .workerFiles,
        description: """
            Copies the event log SRC, written by a Logbook that kept personal values in clear
            and email addresses in stream names, into DEST: every event at the same position
            with the same id, metadata and time, every recorded answer at its place, the name,
            email, gender and birthday of every user sealed with a key of the user's own, and
            the email claims moved to their bucket's stream. SRC and DEST are each a data
            directory (SQLite; DEST must not exist, and its keys go to DEST/keys.sqlite3) or a
            postgresql:// database (DEST empty, its keys in its own tables). The master key is
            --master-key (for a PostgreSQL DEST it is required, and made there if the file
            does not exist), else a new DEST/master.key. Stop SRC's workers first. Then check
            the copy with `logbook verify`, serve it, and destroy SRC (and its backups)
            yourself: until then the values it holds in clear cannot be forgotten.
            """,
        settings: Configuration.settings + [.masterKey])

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    /// A log `migrate` reads or writes: a data directory's SQLite log, or a PostgreSQL database.
    private enum Place {
        case directory(String)
        case database(String)

        init(_ text: String) {
            self = text.hasPrefix("postgresql://") || text.hasPrefix("postgres://") ? .database(text) : .directory(text)
        }

        /// For messages: the directory, or the database's URL with its password hidden.
        var name: String {
            switch self {
            case .directory(let path): path
            case .database(let url): StorageSettings.redacting(url, in: url)
            }
        }
    }

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.count == 2 else {
            throw .usage(
                "expected the old and the new log (data directories or postgresql:// URLs): logbook migrate SRC DEST")
        }
        let source = Place(arguments.positionals[0])
        let destination = Place(arguments.positionals[1])
        let (store, answered) = try open(source)
        if case .directory(let path) = destination {
            guard mkdir(path, 0o750) == 0 else {
                let error = errno
                if error == EEXIST { throw .unavailable("\(path) exists; migrate writes a new data directory") }
                throw .unavailable("cannot create \(path): \(String(cString: strerror(error)))")
            }
        }
        do {
            var report: JSONObject = ["source": .string(source.name), "destination": .string(destination.name)]
            for (key, value) in try copy(store, answered, into: destination) { report[key] = value }
            output.out(JSONWriter.string(.object(report)))
            return .success
        } catch {
            if case .directory(let path) = destination { try? FileManager.default.removeItem(atPath: path) }
            throw error
        }
    }

    /// The source log and its answered commands; refuses a log that seals already.
    private func open(_ source: Place) throws(CLIError) -> (any EventStore, [CommandRecord]) {
        switch source {
        case .directory(let directory):
            let log = (directory as NSString).appendingPathComponent("events.sqlite3")
            guard FileManager.default.fileExists(atPath: log) else { throw .unavailable("no event log at \(log)") }
            let keys = (directory as NSString).appendingPathComponent("keys.sqlite3")
            guard !FileManager.default.fileExists(atPath: keys) else {
                throw .unavailable("\(directory) has a key store: its log seals personal data already")
            }
            do {
                let store = try SQLiteEventStore(path: log, evolution: .standard)
                return (store, try store.answeredCommands())
            } catch {
                throw .unavailable("cannot read \(log): \(error)")
            }
        case .database(let url):
            do {
                guard try !PostgresPersonKeyStore.exists(url: url) else {
                    throw CLIError.unavailable("\(source.name) has a key store: its log seals personal data already")
                }
                let store = try PostgresEventStore(connectionString: url, evolution: .standard)
                return (store, try store.answeredCommands())
            } catch let error as CLIError {
                throw error
            } catch {
                throw .unavailable(StorageSettings.redacting(url, in: "cannot read \(source.name): \(error)"))
            }
        }
    }

    private func copy(_ source: any EventStore, _ answered: [CommandRecord], into destination: Place)
        throws(CLIError) -> JSONObject
    {
        let (master, masterPath) = try masterKey(for: destination)
        let vault: PersonalDataVault
        let target: ProtectedEventStore
        do {
            switch destination {
            case .directory(let directory):
                let keyFile = (directory as NSString).appendingPathComponent("keys.sqlite3")
                vault = try PersonalDataVault(master: master, keyStore: try SQLitePersonKeyStore(path: keyFile))
                target = ProtectedEventStore(
                    try SQLiteEventStore(path: (directory as NSString).appendingPathComponent("events.sqlite3")),
                    vault: vault)
            case .database(let url):
                // The log first: the key tables go only beside a Logbook log.
                let log = try PostgresEventStore(connectionString: url, evolution: .standard)
                vault = try PersonalDataVault(master: master, keyStore: try PostgresPersonKeyStore(url: url))
                target = ProtectedEventStore(log, vault: vault)
            }
        } catch {
            throw .unavailable(
                redacted("cannot create the new log in \(destination.name): \(error)", destination))
        }
        let summary: LogMigration.Summary
        do {
            summary = try LogMigration(source: source, answered: answered, destination: target, buckets: vault.buckets)
                .run()
        } catch {
            throw .unavailable(redacted(error.description, destination))
        }
        return [
            "events": .int(summary.events), "commands": .int(summary.commands), "answers": .int(summary.answers),
            "claimsMoved": .int(summary.claimsMoved), "head": .int(Int(summary.head)), "masterKey": .string(masterPath),
        ]
    }

    /// The master key the copy is sealed under, and its file: --master-key (made when a
    /// PostgreSQL destination's does not exist yet), else a new one in the new data directory.
    private func masterKey(for destination: Place) throws(CLIError) -> (MasterKey, String) {
        do {
            switch (destination, configuration.masterKeyPath) {
            case (.directory(let directory), nil):
                let path = (directory as NSString).appendingPathComponent("master.key")
                let master = MasterKey.generate()
                try master.write(to: path)
                return (master, path)
            case (.database, nil):
                throw CLIError.usage("a PostgreSQL destination needs --master-key FILE (made there if missing)")
            case (.database, let path?) where !FileManager.default.fileExists(atPath: path):
                let master = MasterKey.generate()
                try master.write(to: path)
                return (master, path)
            case (_, let path?):
                return (try MasterKey.read(path: path), path)
            }
        } catch let error as CLIError {
            throw error
        } catch {
            throw .unavailable("cannot use the master key: \(error)")
        }
    }

    private func redacted(_ text: String, _ place: Place) -> String {
        guard case .database(let url) = place else { return text }
        return StorageSettings.redacting(url, in: text)
    }
}
