import CPostgres
import Foundation

/// The PostgreSQL server the tests may use: `LOGBOOK_TEST_POSTGRES` holds its URL
/// (`scripts/test-postgres.sh start` prints it). Without it the PostgreSQL cases are left
/// out, unless `LOGBOOK_REQUIRE_POSTGRES=1` says they must run (CI), in which case they fail.
public enum PostgresTestServer {
    public static var url: String? {
        ProcessInfo.processInfo.environment["LOGBOOK_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
    }

    public static var isRequired: Bool { ProcessInfo.processInfo.environment["LOGBOOK_REQUIRE_POSTGRES"] == "1" }

    /// Whether the PostgreSQL cases run (and fail without a server when they are required).
    public static var isEnabled: Bool { url != nil || isRequired }

    public static let skipReason =
        "PostgreSQL tests skipped: set LOGBOOK_TEST_POSTGRES to a server's URL (scripts/test-postgres.sh start prints it)"
}

/// A database of its own for one test: created with a unique name on the test server,
/// dropped (with any connection still open to it) when the last reference goes.
public final class PostgresTestDatabase: Sendable {
    public let name: String
    /// The connection string of this database (the server's settings, this database's name).
    public let connectionString: String
    private let adminURL: String

    public init() throws {
        guard let url = PostgresTestServer.url else {
            throw PostgresTestError(
                "LOGBOOK_REQUIRE_POSTGRES=1 but LOGBOOK_TEST_POSTGRES is not set: start a server with "
                    + "scripts/test-postgres.sh start")
        }
        adminURL = url
        name = "logbook_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        connectionString = try Self.connectionString(url, database: name)
        try RawPostgres(url).run("CREATE DATABASE \(name)")
    }

    deinit {
        _ = try? RawPostgres(adminURL).run("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// `url`'s settings as `key=value` pairs, with `dbname` replaced by `database`.
    public static func connectionString(_ url: String, database: String) throws -> String {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(url, &error) else {
            defer { PQfreemem(error) }
            throw PostgresTestError("LOGBOOK_TEST_POSTGRES: \(error.map { String(cString: $0) } ?? "malformed")")
        }
        defer { PQconninfoFree(options) }
        var pairs: [String] = []
        var option = options
        while let keyword = option.pointee.keyword {
            let key = String(cString: keyword)
            if key != "dbname", let value = option.pointee.val {
                pairs.append("\(key)=\(quoted(String(cString: value)))")
            }
            option += 1
        }
        return (pairs + ["dbname=\(quoted(database))"]).joined(separator: " ")
    }

    private static func quoted(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}

public struct PostgresTestError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}

/// A libpq connection of a test's own, beside whatever store uses the database: how tests
/// tamper with a log, hold its locks, end a store's connection and read what is stored.
public final class RawPostgres {
    private let handle: OpaquePointer

    public init(_ connectionString: String) throws {
        guard let handle = PQconnectdb(connectionString) else { throw PostgresTestError("libpq: no memory") }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(handle))
            PQfinish(handle)
            throw PostgresTestError("cannot connect to the test server: \(message)")
        }
        self.handle = handle
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
    }

    deinit { PQfinish(handle) }

    /// Runs `sql` (one or more statements) and returns the rows of the last one as text
    /// (NULL as ""); throws the server's message when it fails.
    @discardableResult
    public func run(_ sql: String) throws -> [[String]] {
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw PostgresTestError(String(cString: PQerrorMessage(handle)))
        }
        return (0..<PQntuples(result)).map { row in
            (0..<PQnfields(result)).map { column in
                PQgetvalue(result, row, column).map { String(cString: $0) } ?? ""
            }
        }
    }

    /// The server process serving this connection.
    public var backendPID: Int32 { PQbackendPID(handle) }
}

extension RawSQLResult {
    /// Runs `sql` through a connection of its own to the database `connectionString` names
    /// and keeps whether it succeeded (`code` 0) and the server's error message.
    public init(postgres connectionString: String, sql: String) {
        do {
            try RawPostgres(connectionString).run(sql)
            self.init(code: 0, message: "")
        } catch {
            self.init(code: 1, message: "\(error)")
        }
    }

    /// The first row of a query's result on the database `connectionString` names, as text
    /// (empty when there is none or the query fails).
    public static func firstRow(postgres connectionString: String, sql: String) -> [String] {
        (try? RawPostgres(connectionString).run(sql).first) ?? []
    }
}

extension RawPostgres {
    /// `sql`'s rows on the server `url` names, on a fresh connection, off Swift concurrency's pool.
    public static func rows(_ url: String, _ sql: String) async throws -> [[String]] {
        try await offThePool { try RawPostgres(url).run(sql) }
    }

    /// Runs `alter` (an `ALTER SYSTEM`, which runs alone) on the server `url` names, and has
    /// the server reload its configuration.
    public static func configure(_ url: String, _ alter: String) async throws {
        try await offThePool {
            let server = try RawPostgres(url)
            try server.run(alter)
            try server.run("SELECT pg_reload_conf()")
        }
    }

    /// `sql`'s rows on the server `url` names once they are `expected`, asked every 50 ms at
    /// most `tries` times (a server's state catching up with a change); the last rows read,
    /// whatever they are, after that.
    public static func rows(_ url: String, _ sql: String, once expected: [[String]], tries: Int = 600) async throws
        -> [[String]]
    {
        var rows = try await Self.rows(url, sql)
        for _ in 1..<tries where rows != expected {
            try await Task.sleep(for: .milliseconds(50))
            rows = try await Self.rows(url, sql)
        }
        return rows
    }
}
