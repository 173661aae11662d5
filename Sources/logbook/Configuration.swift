import Foundation
import LogbookServer
import LogbookZMQ

/// Where a process keeps its files and which endpoints it uses, resolved as ARCHITECTURE §2
/// says: the flag first, then the environment, then the default.
struct Configuration {
    static let defaultDataDirectory = "./.logbook"
    /// The options every command takes.
    static let sharedOptions: Set<String> = ["data-dir", "commands", "feed", "queries", "log", "log-level"]

    let dataDirectory: String
    let endpoints: ServiceEndpoints
    let diagnosticsLevel: Diagnostics.Level

    init(arguments: Arguments, environment: [String: String]) throws(CLIError) {
        func setting(_ option: String, _ variable: String, _ fallback: String) -> String {
            arguments.options[option] ?? environment[variable] ?? fallback
        }
        dataDirectory = setting("data-dir", "LOGBOOK_DATA_DIR", Self.defaultDataDirectory)
        let defaults = ServiceEndpoints.defaults
        endpoints = ServiceEndpoints(
            commands: setting("commands", "LOGBOOK_COMMANDS", defaults.commands),
            feed: setting("feed", "LOGBOOK_FEED", defaults.feed),
            queries: setting("queries", "LOGBOOK_QUERIES", defaults.queries),
            log: setting("log", "LOGBOOK_LOG", defaults.log))
        let levelName = setting("log-level", "LOGBOOK_LOG_LEVEL", "info")
        guard let level = Diagnostics.Level(name: levelName) else {
            let known = Diagnostics.Level.allCases.map(\.name).joined(separator: ", ")
            throw .usage("log level '\(levelName)' is not one of \(known)")
        }
        diagnosticsLevel = level
    }

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
        [
            "--data-dir", dataDirectory, "--commands", endpoints.commands, "--feed", endpoints.feed, "--queries",
            endpoints.queries, "--log", endpoints.log, "--log-level", diagnosticsLevel.name,
        ]
    }
}
