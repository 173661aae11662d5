import LogbookApplication
import LogbookJSON
import LogbookSQLite

/// `logbook verify`: reads the whole log through `LogAudit` and prints one JSON document:
/// `{"ok":true,"events":N}` or `{"ok":false,"events":N,"violations":[{"position","problem"}…]}`
/// (the first 100). Exits 1 when the log breaks a promise, so scripts can check a log.
struct VerifyCommand {
    static let options: Set<String> = []
    static let pageSize = 10_000
    static let violationsShown = 100

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.isEmpty else { throw .usage("verify takes no positional arguments") }
        let store = try configuration.openEventLog(create: false)
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
}
