import Foundation
import LogbookApplication
import LogbookCommandLine
import LogbookJSON
import LogbookSQLite

/// `logbook verify`: reads the whole log through `LogAudit` and prints one JSON document:
/// `{"ok":true,"events":N}` or `{"ok":false,"events":N,"violations":[{"position","problem"}…]}`
/// (the first 100). Exits 1 when the log breaks a promise, so scripts can check a log.
struct VerifyCommand: ConfiguredCommand {
    static let spec = CommandSpec(
        name: "verify", usage: "[--data-dir DIR]",
        listings: [.init("verify", "re-check the whole log: positions, versions, stock, totals, emails")],
        section: .workerFiles,
        description: """
            Reads the whole log and re-checks, independently of the code that wrote it, what
            the service promises: positions and versions without holes, every event readable,
            stock figures that follow from the ones before, exact order totals, and no email
            held by two live users. Prints {"ok":true,"events":N}, or "ok":false with the
            first 100 violations (position and problem) and exits 1. Personal values are
            opened with the key store beside the log and the master key (--master-key, else
            DIR/master.key); those of forgotten users read as forgotten.
            """,
        settings: Configuration.settings + [.masterKey])
    static let pageSize = 10_000
    static let violationsShown = 100

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.isEmpty else { throw .usage("verify takes no positional arguments") }
        let store = try openEventLog()
        var audit = LogAudit()
        do throws(PagedReadError<Never>) {
            try store.forEachPage(pageSize: Self.pageSize) { page in
                for event in page { audit.check(event) }
                return true
            }
            audit.finish()
        } catch {
            switch error {
            case .store(let failure): throw .unavailable(failure.description)
            }
        }
        var report: JSONObject = ["ok": .bool(audit.violations.isEmpty), "events": .int(audit.eventsChecked)]
        if !audit.violations.isEmpty {
            report["violationCount"] = .int(audit.violationCount)
            report["violations"] = .array(
                audit.violations.prefix(Self.violationsShown).map { violation in
                    ["position": .int(Int(violation.position)), "problem": .string(violation.problem)]
                })
        }
        output.out(JSONWriter.string(.object(report)))
        return audit.violations.isEmpty ? .success : .errorReply
    }

    /// Opens the event log in the data directory (it must be there already), through its
    /// vault when it has a key store.
    private func openEventLog() throws(CLIError) -> any EventStore {
        let path = configuration.eventLogPath
        guard FileManager.default.fileExists(atPath: path) else {
            throw .unavailable("no event log at \(path) (set --data-dir or LOGBOOK_DATA_DIR)")
        }
        let store: SQLiteEventStore
        do {
            store = try SQLiteEventStore(path: path, evolution: .standard)
        } catch {
            throw .unavailable(error.description)
        }
        guard let vault = try VaultOpening.openForReading(configuration: configuration) else { return store }
        return ProtectedEventStore(store, vault: vault)
    }
}
