import Foundation

/// Where a process keeps its files, resolved as ARCHITECTURE §2 says: the flag first,
/// then the environment, then the default.
struct Configuration {
    static let defaultDataDirectory = "./.logbook"

    let dataDirectory: String

    init(arguments: Arguments, environment: [String: String]) {
        dataDirectory = arguments.options["data-dir"] ?? environment["LOGBOOK_DATA_DIR"] ?? Self.defaultDataDirectory
    }

    /// The event log's file inside the data directory.
    var eventLogPath: String { (dataDirectory as NSString).appendingPathComponent("events.sqlite3") }

    /// Creates the data directory if it is missing.
    func ensureDataDirectory() throws {
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
    }
}
