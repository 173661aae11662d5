import Foundation
import LogbookCommandLine
import LogbookServer
import LogbookZMQ

/// Where a process keeps its files and which endpoints it uses, resolved as ARCHITECTURE §2
/// says: the flag first, then the environment, then the default, all three declared once
/// in `settings`.
struct Configuration {
    /// The settings every command that works with the service takes, in the order help lists them.
    static let settings: [OptionSpec] = [.dataDirectory, .commands, .feed, .queries, .log, .logLevel]
    /// The settings of the event log's storage, which only `run` takes (see `StorageSettings`).
    static let storageSettings: [OptionSpec] = [.store, .readStore, .hints]

    let dataDirectory: String
    let endpoints: ServiceEndpoints
    let diagnosticsLevel: Diagnostics.Level
    /// Where the event log is kept (SQLite unless the command declares `--store` and it names PostgreSQL).
    let storage: StorageSettings

    init(arguments: Arguments, environment: [String: String]) throws(CLIError) {
        func setting(_ option: OptionSpec) -> String {
            arguments.setting(option, environment: environment) ?? ""
        }
        dataDirectory = setting(.dataDirectory)
        endpoints = ServiceEndpoints(
            commands: setting(.commands), feed: setting(.feed), queries: setting(.queries), log: setting(.log))
        let levelName = setting(.logLevel)
        guard let level = Diagnostics.Level(name: levelName) else {
            throw .usage("log level '\(levelName)' is not one of \(Self.levelNames)")
        }
        diagnosticsLevel = level
        storage = try StorageSettings(arguments: arguments, environment: environment)
    }

    static let levelNames = Diagnostics.Level.allCases.map(\.name).joined(separator: ", ")

    /// The event log's file inside the data directory.
    var eventLogPath: String { path("events.sqlite3") }

    /// A file inside the data directory.
    func path(_ name: String) -> String { (dataDirectory as NSString).appendingPathComponent(name) }

    /// Creates the data directory if it is missing.
    func ensureDataDirectory() throws(CLIError) {
        do {
            try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw .unavailable("cannot create the data directory \(dataDirectory): \(error.localizedDescription)")
        }
    }

    /// The settings a child process of `logbook up` must be given to match this one.
    var childArguments: [String] {
        let values: [(OptionSpec, String)] = [
            (.dataDirectory, dataDirectory), (.commands, endpoints.commands), (.feed, endpoints.feed),
            (.queries, endpoints.queries), (.log, endpoints.log), (.logLevel, diagnosticsLevel.name),
        ]
        return values.flatMap { option, value in [option.flag, value] }
    }
}

extension OptionSpec {
    static let dataDirectory = OptionSpec.option(
        "data-dir", "DIR", "where the processes keep their files",
        default: "./.logbook", environment: "LOGBOOK_DATA_DIR")
    static let commands = OptionSpec.option(
        "commands", "EP", "the worker's commands and Status", default: ServiceEndpoints.defaults.commands,
        environment: "LOGBOOK_COMMANDS")
    static let feed = OptionSpec.option(
        "feed", "EP", "the worker's change feed", default: ServiceEndpoints.defaults.feed, environment: "LOGBOOK_FEED")
    static let queries = OptionSpec.option(
        "queries", "EP", "the query process's requests", default: ServiceEndpoints.defaults.queries,
        environment: "LOGBOOK_QUERIES")
    static let log = OptionSpec.option(
        "log", "EP", "the worker's log reads (ReadLog)", default: ServiceEndpoints.defaults.log,
        environment: "LOGBOOK_LOG")
    static let store = OptionSpec.option(
        "store", "S",
        "the event log: sqlite (DIR/events.sqlite3) or a postgresql:// connection string (run worker, run feed)",
        default: "sqlite", environment: "LOGBOOK_STORE")
    static let readStore = OptionSpec.option(
        "read-store", "URL", "a streaming replica of --store that run feed reads the log from (default: --store)",
        environment: "LOGBOOK_READ_STORE")
    static let hints = OptionSpec.option(
        "hints", "EP[,EP…]", "on PostgreSQL: where run feed takes commit hints; run worker sends them to each",
        default: "tcp://127.0.0.1:5559", environment: "LOGBOOK_HINTS")
    static let logLevel = OptionSpec.option(
        "log-level", "L", Configuration.levelNames, default: Diagnostics.Level.info.name,
        environment: "LOGBOOK_LOG_LEVEL")
}
