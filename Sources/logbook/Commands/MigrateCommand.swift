import Foundation
import Glibc
import LogbookApplication
import LogbookCommandLine
import LogbookCrypto
import LogbookJSON
import LogbookSQLite

/// `logbook migrate SRC DEST`: copies the SQLite log of data directory SRC, written before
/// personal data was sealed, into the new data directory DEST with every personal value
/// sealed and the email claims on their buckets' streams (`LogMigration`), then prints
/// `{"source","destination","events","commands","answers","claimsMoved","head","masterKey"}`.
/// SRC is only read; DEST must not exist, and a failed copy removes what it wrote.
struct MigrateCommand: ConfiguredCommand {
    static let spec = CommandSpec(
        name: "migrate", usage: "SRC DEST [--master-key FILE]",
        listings: [.init("migrate SRC DEST", "copy a log written before personal data was sealed into a sealed one")],
        section: .workerFiles,
        description: """
            Copies the event log of the data directory SRC, written by a Logbook that kept
            personal values in clear and email addresses in stream names, into DEST, a new
            data directory: every event at the same position with the same id, metadata and
            time, every recorded answer at its place, the name, email, gender and birthday of
            every user sealed with a key of the user's own (DEST/keys.sqlite3), and the email
            claims moved to their bucket's stream. The master key is --master-key, else a new
            DEST/master.key. Stop SRC's worker first. Then check the copy with
            `logbook verify --data-dir DEST`, run the worker on DEST, and destroy SRC (and its
            backups) yourself: until then the values it holds in clear cannot be forgotten.
            """,
        settings: Configuration.settings + [.masterKey])

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.count == 2 else {
            throw .usage("expected the old and the new data directory: logbook migrate SRC DEST")
        }
        let source = arguments.positionals[0]
        let destination = arguments.positionals[1]
        let sourceLog = (source as NSString).appendingPathComponent("events.sqlite3")
        guard FileManager.default.fileExists(atPath: sourceLog) else {
            throw .unavailable("no event log at \(sourceLog)")
        }
        guard !FileManager.default.fileExists(atPath: (source as NSString).appendingPathComponent("keys.sqlite3"))
        else {
            throw .unavailable("\(source) has a key store: its log seals personal data already")
        }
        guard mkdir(destination, 0o750) == 0 else {
            let error = errno
            if error == EEXIST { throw .unavailable("\(destination) exists; migrate writes a new data directory") }
            throw .unavailable("cannot create \(destination): \(String(cString: strerror(error)))")
        }
        do {
            var report: JSONObject = ["source": .string(source), "destination": .string(destination)]
            for (key, value) in try copy(from: sourceLog, into: destination) { report[key] = value }
            output.out(JSONWriter.string(.object(report)))
            return .success
        } catch {
            try? FileManager.default.removeItem(atPath: destination)
            throw error
        }
    }

    private func copy(from sourceLog: String, into destination: String) throws(CLIError) -> JSONObject {
        let masterPath = configuration.masterKeyPath ?? (destination as NSString).appendingPathComponent("master.key")
        let master: MasterKey
        do {
            if configuration.masterKeyPath == nil {
                master = MasterKey.generate()
                try master.write(to: masterPath)
            } else {
                master = try MasterKey.read(path: masterPath)
            }
        } catch {
            throw .unavailable("cannot use the master key: \(error)")
        }
        let source: SQLiteEventStore
        let answered: [CommandRecord]
        do {
            source = try SQLiteEventStore(path: sourceLog, evolution: .standard)
            answered = try source.answeredCommands()
        } catch {
            throw .unavailable("cannot read \(sourceLog): \(error)")
        }
        let vault: PersonalDataVault
        let target: ProtectedEventStore
        do {
            let keys = try SQLitePersonKeyStore(path: (destination as NSString).appendingPathComponent("keys.sqlite3"))
            vault = try PersonalDataVault(master: master, keyStore: keys)
            target = ProtectedEventStore(
                try SQLiteEventStore(path: (destination as NSString).appendingPathComponent("events.sqlite3")),
                vault: vault)
        } catch {
            throw .unavailable("cannot create the new log in \(destination): \(error)")
        }
        let summary: LogMigration.Summary
        do {
            summary = try LogMigration(source: source, answered: answered, destination: target, buckets: vault.buckets)
                .run()
        } catch {
            throw .unavailable(error.description)
        }
        return [
            "events": .int(summary.events), "commands": .int(summary.commands), "answers": .int(summary.answers),
            "claimsMoved": .int(summary.claimsMoved), "head": .int(Int(summary.head)), "masterKey": .string(masterPath),
        ]
    }
}
