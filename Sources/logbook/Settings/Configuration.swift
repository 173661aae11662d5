import Foundation
import LogbookClient
import LogbookCommandLine
import LogbookMetrics
import LogbookServer
import LogbookZMQ

/// Where a process keeps its files and which endpoints it uses, resolved as ARCHITECTURE §2
/// says: the flag first, then the environment, then the default, all three declared once
/// in `settings`.
struct Configuration {
    /// The settings every command that works with the service takes, in the order help lists them.
    static let settings: [OptionSpec] = [
        .dataDirectory, .commands, .feed, .queries, .log, .groups, .logLevel, .curveSecret, .clients, .curveKey,
        .serverKey,
    ]
    /// The settings of the event log's storage, which only `run` takes (see `StorageSettings`).
    static let storageSettings: [OptionSpec] = [.store, .readStore, .storeWait, .hints, .masterKey]
    /// Where a process serves its metrics, which only `run` and `up` take.
    static let metricsSettings: [OptionSpec] = [.metrics]
    /// How a query process follows the feed, which only `run` takes.
    static let followSettings: [OptionSpec] = [.idleCatchUp]

    let dataDirectory: String
    /// The endpoints as the settings give them; `commands` may list several workers, which
    /// only client commands use (`workerEndpoints`, `queryEndpoints` are the processes').
    let endpoints: ClientEndpoints
    let diagnosticsLevel: Diagnostics.Level
    /// The CURVE settings as given (paths; nil when not given), read by `SecuritySettings`.
    let curveSecret: String?
    let clients: String?
    let curveKey: String?
    let serverKey: String?
    /// Where the event log is kept (SQLite unless the command declares `--store` and it names PostgreSQL).
    let storage: StorageSettings
    /// Where to serve metrics over HTTP; nil (off) unless the command declares `--metrics` and it is set.
    let metrics: MetricsAddress?
    /// How long a query process lets the feed stay quiet before it reads the log anyway.
    let idleCatchUpMilliseconds: Int
    /// The master key file named by `--master-key` or `LOGBOOK_MASTER_KEY` (only `run` takes them).
    let masterKeyPath: String?

    init(arguments: Arguments, environment: [String: String]) throws(CLIError) {
        func setting(_ option: OptionSpec) -> String {
            arguments.setting(option, environment: environment) ?? ""
        }
        func optional(_ option: OptionSpec) -> String? {
            let value = setting(option)
            return value.isEmpty ? nil : value
        }
        curveSecret = optional(.curveSecret)
        clients = optional(.clients)
        curveKey = optional(.curveKey)
        serverKey = optional(.serverKey)
        dataDirectory = setting(.dataDirectory)
        let commands: EndpointList
        do {
            commands = try EndpointList(parsing: setting(.commands))
        } catch {
            throw .usage("\(OptionSpec.commands.flag) '\(setting(.commands))': \(error)")
        }
        endpoints = ClientEndpoints(
            commands: commands, feed: setting(.feed), queries: setting(.queries), log: setting(.log),
            groups: setting(.groups))
        let levelName = setting(.logLevel)
        guard let level = Diagnostics.Level(name: levelName) else {
            throw .usage("log level '\(levelName)' is not one of \(Self.levelNames)")
        }
        diagnosticsLevel = level
        storage = try StorageSettings(arguments: arguments, environment: environment)
        metrics = try Self.metricsAddress(arguments: arguments, environment: environment)
        idleCatchUpMilliseconds = try Self.idleCatchUp(arguments: arguments, environment: environment)
        masterKeyPath =
            arguments.declares(.masterKey)
            ? arguments.setting(.masterKey, environment: environment).flatMap { $0.isEmpty ? nil : $0 } : nil
    }

    private static func idleCatchUp(arguments: Arguments, environment: [String: String]) throws(CLIError) -> Int {
        let range = 1...86_400_000
        guard arguments.declares(.idleCatchUp), let text = arguments.setting(.idleCatchUp, environment: environment)
        else { return QueryService.defaultIdleCatchUpMilliseconds }
        guard let milliseconds = Int(text), range.contains(milliseconds) else {
            throw .usage(
                "\(OptionSpec.idleCatchUp.flag) must be a whole number of milliseconds from \(range.lowerBound) "
                    + "to \(range.upperBound)")
        }
        return milliseconds
    }

    private static func metricsAddress(arguments: Arguments, environment: [String: String]) throws(CLIError)
        -> MetricsAddress?
    {
        guard arguments.declares(.metrics), let text = arguments.setting(.metrics, environment: environment),
            !text.isEmpty
        else { return nil }
        do {
            return try MetricsAddress(parsing: text)
        } catch {
            throw .usage("\(OptionSpec.metrics.flag) '\(text)': \(error)")
        }
    }

    /// The endpoints a worker binds. It binds one commands endpoint, so a list (which is
    /// for client commands) is a usage error.
    func workerEndpoints() throws(CLIError) -> ServiceEndpoints {
        guard let commands = endpoints.commands.single else {
            throw .usage(
                "\(OptionSpec.commands.flag) lists \(endpoints.commands.endpoints.count) endpoints "
                    + "(\(endpoints.commands)), but a worker binds one; a list is for client commands")
        }
        return ServiceEndpoints(
            commands: commands, feed: endpoints.feed, queries: endpoints.queries, log: endpoints.log,
            groups: endpoints.groups)
    }

    /// The endpoints a query process binds and connects to. It never uses the commands
    /// endpoint, so a list there (a client setting shared with it) is no mistake: it gets
    /// the first.
    var queryEndpoints: ServiceEndpoints {
        ServiceEndpoints(
            commands: endpoints.commands.endpoints[0], feed: endpoints.feed, queries: endpoints.queries,
            log: endpoints.log, groups: endpoints.groups)
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
        var values: [(OptionSpec, String)] = [
            (.dataDirectory, dataDirectory), (.commands, endpoints.commands.description), (.feed, endpoints.feed),
            (.queries, endpoints.queries), (.log, endpoints.log), (.groups, endpoints.groups),
            (.logLevel, diagnosticsLevel.name),
        ]
        let security: [(OptionSpec, String?)] = [
            (.curveSecret, curveSecret), (.clients, clients), (.curveKey, curveKey), (.serverKey, serverKey),
        ]
        for case (let option, let value?) in security { values.append((option, value)) }
        return values.flatMap { option, value in [option.flag, value] }
    }
}

extension OptionSpec {
    static let dataDirectory = OptionSpec.option(
        "data-dir", "DIR", "where the processes keep their files",
        default: "./.logbook", environment: "LOGBOOK_DATA_DIR")
    static let commands = OptionSpec.option(
        "commands", "EP",
        "the worker's commands and Status; client commands may list several workers, comma-separated "
            + "(each request goes to one that is up)",
        default: ServiceEndpoints.defaults.commands, environment: "LOGBOOK_COMMANDS")
    static let feed = OptionSpec.option(
        "feed", "EP", "the worker's change feed", default: ServiceEndpoints.defaults.feed, environment: "LOGBOOK_FEED")
    static let queries = OptionSpec.option(
        "queries", "EP", "the query process's requests", default: ServiceEndpoints.defaults.queries,
        environment: "LOGBOOK_QUERIES")
    static let log = OptionSpec.option(
        "log", "EP", "the worker's log reads (ReadLog)", default: ServiceEndpoints.defaults.log,
        environment: "LOGBOOK_LOG")
    static let groups = OptionSpec.option(
        "groups", "EP", "the groups process's requests (consumer groups)", default: ServiceEndpoints.defaults.groups,
        environment: "LOGBOOK_GROUPS")
    static let store = OptionSpec.option(
        "store", "S",
        "the event log: sqlite (DIR/events.sqlite3) or a postgresql:// connection string (run worker, run feed)",
        default: "sqlite", environment: "LOGBOOK_STORE")
    static let masterKey = OptionSpec.option(
        "master-key", "FILE",
        "the master key that seals people's data keys (logbook keygen --master FILE); default DIR/master.key, "
            + "made on a new log's first start",
        environment: "LOGBOOK_MASTER_KEY")
    static let readStore = OptionSpec.option(
        "read-store", "URL", "a streaming replica of --store that run feed reads the log from (default: --store)",
        environment: "LOGBOOK_READ_STORE")
    static let storeWait = OptionSpec.option(
        "store-wait", "S",
        "on PostgreSQL: how long run waits at its start for a store it cannot reach (no server, no primary "
            + "yet), trying again; 0 stops at once with exit status 3",
        default: "0", environment: "LOGBOOK_STORE_WAIT")
    static let hints = OptionSpec.option(
        "hints", "EP[,EP…]", "on PostgreSQL: where run feed takes commit hints; run worker sends them to each",
        default: "tcp://127.0.0.1:5559", environment: "LOGBOOK_HINTS")
    static let metrics = OptionSpec.option(
        "metrics", "HOST:PORT",
        "serve Prometheus metrics at http://HOST:PORT/metrics (run; up gives the worker PORT, the query process "
            + "PORT+1, the groups process PORT+2); default off",
        environment: "LOGBOOK_METRICS")
    static let idleCatchUp = OptionSpec.option(
        "idle-catch-up-ms", "MS",
        "run query: how long the feed may stay quiet before the process reads the log anyway, so that a lost "
            + "last message is found",
        default: "\(QueryService.defaultIdleCatchUpMilliseconds)", environment: "LOGBOOK_IDLE_CATCH_UP_MS")
    static let logLevel = OptionSpec.option(
        "log-level", "L", Configuration.levelNames, default: Diagnostics.Level.info.name,
        environment: "LOGBOOK_LOG_LEVEL")
    static let curveSecret = OptionSpec.option(
        "curve-secret", "F",
        "servers: their secret certificate; turns CURVE on for every server socket (needs --clients; default off)",
        environment: "LOGBOOK_CURVE_SECRET")
    static let clients = OptionSpec.option(
        "clients", "DIR", "servers: the allow-list, a folder of client public certificates, each with a role",
        environment: "LOGBOOK_CLIENTS")
    static let curveKey = OptionSpec.option(
        "curve-key", "F",
        "clients (and a query process towards the worker): their secret certificate (needs --server-key)",
        environment: "LOGBOOK_CURVE_KEY")
    static let serverKey = OptionSpec.option(
        "server-key", "F", "clients: the servers' public certificate", environment: "LOGBOOK_SERVER_KEY")
}
