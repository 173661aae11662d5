import Foundation
import LogbookCommandLine

/// Where the event log is kept, from `--store`, `--read-store`, `--store-wait` and `--hints`
/// (flag, else environment, else default), which only `run` declares: every other command,
/// and `up`'s children unless told otherwise, keep the log in SQLite.
struct StorageSettings {
    /// One event log.
    enum Location: Equatable {
        /// The data directory's `events.sqlite3`.
        case sqlite
        /// A PostgreSQL database, by its libpq connection string (which may hold a password).
        case postgres(String)
    }

    let store: Location
    /// Where `run feed` reads the log (a streaming replica); nil: from `store`.
    let readStore: String?
    /// The hints endpoints: the one `run feed` binds, those `run worker` sends to.
    let hints: [String]
    /// How long `run` waits for a PostgreSQL store it cannot reach at its start.
    let wait: StoreWait

    init(arguments: Arguments, environment: [String: String]) throws(CLIError) {
        func setting(_ option: OptionSpec) -> String? {
            arguments.declares(option) ? arguments.setting(option, environment: environment) : nil
        }
        store = try setting(.store).map { text throws(CLIError) in try Self.location(text, option: .store) } ?? .sqlite
        switch try setting(.readStore).map({ text throws(CLIError) in try Self.location(text, option: .readStore) }) {
        case .postgres(let connectionString)?: readStore = connectionString
        case .sqlite?: throw .usage("--read-store must be a postgresql:// connection string")
        case nil: readStore = nil
        }
        let waitText = setting(.storeWait) ?? "0"
        guard let seconds = Int(waitText), (0...86_400).contains(seconds) else {
            throw .usage("\(OptionSpec.storeWait.flag) must be a whole number of seconds from 0 to 86400")
        }
        wait = StoreWait(seconds: seconds)
        hints = (setting(.hints) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
    }

    /// `sqlite`, or a `postgresql://` / `postgres://` connection string. Anything else is a
    /// usage error that does not repeat the value (it might hold a password).
    static func location(_ text: String, option: OptionSpec) throws(CLIError) -> Location {
        if text == "sqlite" { return .sqlite }
        if text.hasPrefix("postgresql://") || text.hasPrefix("postgres://") { return .postgres(text) }
        throw .usage("\(option.flag) must be sqlite or a postgresql:// connection string")
    }

    /// `text` with the password of `connectionString` replaced by `***`, wherever it appears
    /// (libpq repeats parts of a connection string it cannot parse).
    static func redacting(_ connectionString: String, in text: String) -> String {
        var redacted = text
        for password in passwords(in: connectionString) where !password.isEmpty {
            redacted = redacted.replacingOccurrences(of: password, with: "***")
        }
        return redacted
    }

    /// The passwords a connection string holds: the URI's `user:password@` and any
    /// `password=` parameter, as written (percent-encoded or not).
    static func passwords(in connectionString: String) -> [String] {
        var found: [String] = []
        if let scheme = connectionString.range(of: "://") {
            let rest = connectionString[scheme.upperBound...]
            let authority = rest.prefix { $0 != "/" && $0 != "?" }
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                found.append(String(authority[authority.index(after: colon)..<at]))
            }
        }
        var remaining = Substring(connectionString)
        while let key = remaining.range(of: "password=") {
            let value = remaining[key.upperBound...].prefix { $0 != "&" && $0 != " " }
            found.append(String(value))
            remaining = remaining[key.upperBound...]
        }
        return found
    }
}
