import CPostgres
import Glibc

/// A failed libpq call: the server's SQLSTATE when it answered with an error, and one line
/// of text (libpq's messages span lines; they are joined, and never contain a password).
struct PostgresError: Error, CustomStringConvertible {
    /// The five-character SQLSTATE, or nil when the server did not answer (connection trouble).
    let sqlState: String?
    let message: String
    /// The connection is gone (the server closed it, restarted or cannot be reached).
    let connectionLost: Bool

    var description: String { sqlState.map { "\(message) (SQLSTATE \($0))" } ?? message }

    /// Connection trouble, shutdown, lack of resources, a serialisation failure or a deadlock:
    /// worth retrying later.
    var isTransient: Bool {
        guard !connectionLost, let sqlState else { return true }
        return ["08", "53", "57", "58", "40"].contains(String(sqlState.prefix(2)))
    }

    /// libpq's text on one line.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingSpaces }.filter { !$0.isEmpty }.joined(separator: " ")
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}

/// One libpq connection, closed with the object. Not thread-safe, but used by one thread at
/// a time, which may change (Sendable on that promise): the one holding its slot's mutex
/// (`PostgresConnectionSlot`), or the one it was lent to for an append sent ahead. Every
/// statement is sent with text parameters and read back as text; a statement outside an
/// explicit transaction is its own transaction, committed before the call returns. A
/// `PostgresStatement` is prepared once per connection and run by name after that.
final class PostgresConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    /// The warnings the server sent on this connection, counted by libpq's notice receiver.
    private let notices = NoticeCount()
    /// The name each `PostgresStatement` prepared on this connection has there, by its text.
    private var prepared: [String: String] = [:]
    /// How many statements have been prepared on this connection, for the next one's name.
    private var preparations = 0
    /// Whether what `send` sent was a prepared statement, until `answer` takes its answer.
    private var sentPrepared = false
    /// Whether a prepared statement was found gone or no longer fitting: the session was
    /// reset under the connection (`DISCARD ALL`, a pooler) or its tables changed shape.
    private var sessionLost = false

    /// How many warnings the server has sent on this connection so far. A statement that
    /// raises this warned while it ran: a commit whose wait for a synchronous standby was
    /// cancelled, for one, returns success after a warning.
    var warningCount: Int { notices.warnings }

    /// Connects with `connectionString` (a `postgresql://` URI or `key=value` pairs). Unless
    /// the string says otherwise, gives up on connecting after 10 seconds, and a connection
    /// whose server stops answering (a primary cut off by the network, which sends no reset)
    /// fails within about 10 seconds instead of the kernel's many minutes: TCP keepalives probe
    /// an idle connection, and `tcp_user_timeout` bounds how long sent data may go
    /// unacknowledged. The client encoding is always UTF-8, so text goes in and out byte for byte.
    /// The session never compiles a query with the server's JIT: Logbook's statements are
    /// short, and a compile (milliseconds, when the planner's estimate passes `jit_above_cost`)
    /// would cost more than the statement.
    init(connectionString: String) throws(PostgresError) {
        if let problem = Self.malformation(of: connectionString) {
            throw PostgresError(sqlState: nil, message: problem, connectionLost: false)
        }
        // Later entries override earlier ones: the string's own settings override the
        // defaults before it, and nothing overrides the client encoding.
        let keywords = [
            "connect_timeout", "fallback_application_name", "keepalives", "keepalives_idle", "keepalives_interval",
            "keepalives_count", "tcp_user_timeout", "dbname", "client_encoding",
        ]
        let values = ["10", "logbook", "1", "5", "2", "3", "10000", connectionString, "UTF8"]
        let connection = Self.withCStrings(keywords) { keywords in
            Self.withCStrings(values) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let connection else {
            throw PostgresError(sqlState: nil, message: "libpq could not allocate a connection", connectionLost: true)
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = PostgresError.oneLine(String(cString: PQerrorMessage(connection)))
            PQfinish(connection)
            throw PostgresError(sqlState: nil, message: message, connectionLost: true)
        }
        handle = connection
        // Notices would go to stderr; the store has nothing to tell the user, but counts warnings.
        PQsetNoticeReceiver(
            handle,
            { context, result in
                guard let context, let result, let severity = PQresultErrorField(result, Int32(UInt8(ascii: "V")))
                else { return }
                if String(cString: severity) == "WARNING" {
                    Unmanaged<NoticeCount>.fromOpaque(context).takeUnretainedValue().warnings += 1
                }
            }, Unmanaged.passUnretained(notices).toOpaque())
        try execute("SET jit = off")
    }

    deinit {
        PQfinish(handle)
    }

    /// The warnings counted on one connection; written by libpq's notice receiver on the
    /// thread that uses the connection, read there too.
    private final class NoticeCount {
        var warnings = 0
    }

    /// Why libpq cannot parse `connectionString`, or nil when it can.
    static func malformation(of connectionString: String) -> String? {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connectionString, &error) else {
            let message = error.map { PostgresError.oneLine(String(cString: $0)) } ?? "cannot be parsed"
            PQfreemem(error)
            return "malformed connection string: \(message)"
        }
        PQconninfoFree(options)
        return nil
    }

    /// The connection's settings that `connectionString` names, without a password: the
    /// database, host and port a message about it should mention.
    static func target(of connectionString: String) -> String {
        guard let options = PQconninfoParse(connectionString, nil) else { return "PostgreSQL (unparsable address)" }
        defer { PQconninfoFree(options) }
        var settings: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { settings[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        let host = settings["hostaddr"] ?? settings["host"] ?? "the default socket"
        let port = settings["port"].map { ":\($0)" } ?? ""
        let database = settings["dbname"] ?? settings["user"] ?? "the default database"
        return "PostgreSQL database \"\(database)\" at \(host)\(port)"
    }

    /// The connection no longer works (the server closed it, or the session under it is no
    /// longer the one it set up); a new one must be made. Reads what the server sent
    /// meanwhile, without waiting, so a connection it closed while idle (a restart, a
    /// terminated backend) is found broken before a call is sent on it.
    var isBroken: Bool {
        if sessionLost { return true }
        // A closing server's last message and the end of the stream may take two reads.
        for _ in 0..<2 where PQstatus(handle) == CONNECTION_OK {
            guard PQconsumeInput(handle) != 0 else { return true }
        }
        return PQstatus(handle) != CONNECTION_OK
    }

    /// The connection's socket, readable when the server's answer begins to arrive.
    var socket: Int32 { PQsocket(handle) }

    /// A setting the server reports at connection time (`server_encoding`, `server_version`, …).
    func parameterStatus(_ name: String) -> String? {
        PQparameterStatus(handle, name).map { String(cString: $0) }
    }

    /// Runs one or more statements without parameters (DDL, `BEGIN`, `COMMIT`).
    func execute(_ sql: String) throws(PostgresError) {
        _ = try check(PQexec(handle, sql))
    }

    /// Runs one statement with text parameters (`$1`, `$2`, …; nil is NULL) and returns its rows.
    func query(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> PostgresRows {
        let result = Self.withParameters(parameters) { values in
            PQexecParams(handle, sql, Int32(values.count), nil, values.baseAddress, nil, nil, 0)
        }
        return try check(result)
    }

    /// Runs `statement` with text parameters and returns its rows, preparing it on this
    /// connection the first time.
    func query(_ statement: PostgresStatement, _ parameters: [String?] = []) throws(PostgresError) -> PostgresRows {
        let name = try preparedName(of: statement, parameterCount: parameters.count)
        let result = Self.withParameters(parameters) { values in
            PQexecPrepared(handle, name, Int32(values.count), values.baseAddress, nil, nil, 0)
        }
        return try retiringOnLostStatement { () throws(PostgresError) in try check(result) }
    }

    /// Runs one statement like `query`, and asks the server to cancel it once `limit` has
    /// passed without an answer; then waits for the answer the cancel brings: an error, or,
    /// for a commit held waiting for a synchronous standby, success after a warning.
    func query(_ sql: String, _ parameters: [String?], cancellingAfter limit: Duration) throws(PostgresError)
        -> PostgresRows
    {
        try send(sql, parameters)
        return try answer(cancellingAt: .now + limit)
    }

    /// Sends one statement with text parameters without waiting for its answer, which
    /// `answer(cancellingAt:)` takes; no other statement may be sent on the connection until then.
    func send(_ sql: String, _ parameters: [String?]) throws(PostgresError) {
        sentPrepared = false
        let sent = Self.withParameters(parameters) { values in
            PQsendQueryParams(handle, sql, Int32(values.count), nil, values.baseAddress, nil, nil, 0)
        }
        if sent != 1 { _ = try check(nil) }
    }

    /// Sends `statement` like `send`, preparing it on this connection first the first time: a
    /// round trip of its own, waited for before the statement is sent, outside any deadline
    /// `answer` is given (bounded like every call by the connection's keepalives).
    func send(_ statement: PostgresStatement, _ parameters: [String?]) throws(PostgresError) {
        let name = try preparedName(of: statement, parameterCount: parameters.count)
        let sent = Self.withParameters(parameters) { values in
            PQsendQueryPrepared(handle, name, Int32(values.count), values.baseAddress, nil, nil, 0)
        }
        if sent != 1 { _ = try check(nil) }
        sentPrepared = true
    }

    /// The name `statement` is prepared under on this connection; prepares it when it is not.
    private func preparedName(of statement: PostgresStatement, parameterCount: Int) throws(PostgresError) -> String {
        if let name = prepared[statement.sql] { return name }
        preparations += 1
        let name = "logbook_\(preparations)"
        _ = try check(PQprepare(handle, name, statement.sql, Int32(parameterCount), nil))
        prepared[statement.sql] = name
        return name
    }

    /// `body`'s rows. When it fails because a prepared statement is gone (the session was
    /// reset, which also undid its settings) or no longer fits (its result changed shape under
    /// a schema change), the connection is retired: it counts as broken, so its owner makes a
    /// new one, which sets the session up and prepares again; the error says the connection
    /// was lost, which callers retry.
    private func retiringOnLostStatement(_ body: () throws(PostgresError) -> PostgresRows) throws(PostgresError)
        -> PostgresRows
    {
        do {
            return try body()
        } catch {
            guard error.sqlState == "26000" || error.sqlState == "0A000" else { throw error }
            sessionLost = true
            throw PostgresError(sqlState: error.sqlState, message: error.message, connectionLost: true)
        }
    }

    /// The answer to the statement `send` sent: its rows, or its error. Asks the server to
    /// cancel it once `deadline` has passed, then waits for the answer the cancel brings.
    func answer(cancellingAt deadline: ContinuousClock.Instant) throws(PostgresError) -> PostgresRows {
        awaitAnswer(cancellingAt: deadline)
        // One statement gives one result; a lost connection may give an error result or none.
        var last: OpaquePointer?
        while let result = PQgetResult(handle) {
            if let earlier = last { PQclear(earlier) }
            last = result
        }
        guard sentPrepared else { return try check(last) }
        sentPrepared = false
        return try retiringOnLostStatement { () throws(PostgresError) in try check(last) }
    }

    /// Returns once the answer to the statement sent is in (or the connection failed, which
    /// `PQgetResult` then reports), sending a cancel request once `deadline` has passed.
    private func awaitAnswer(cancellingAt deadline: ContinuousClock.Instant) {
        var cancelled = false
        while PQconsumeInput(handle) == 1, PQisBusy(handle) == 1 {
            var timeout: Int32 = -1
            if !cancelled {
                let remaining = deadline - .now
                guard remaining > .zero else {
                    PostgresCancelRequest(handle)?.send()
                    cancelled = true
                    continue
                }
                let (seconds, attoseconds) = remaining.components
                timeout = Int32(clamping: seconds * 1_000 + attoseconds / 1_000_000_000_000_000 + 1)
            }
            var socket = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            if poll(&socket, 1, timeout) < 0, errno != EINTR { return }
        }
    }

    /// The rows of a successful result; the error of a failed one.
    private func check(_ result: OpaquePointer?) throws(PostgresError) -> PostgresRows {
        guard let result else {
            throw PostgresError(
                sqlState: nil, message: PostgresError.oneLine(String(cString: PQerrorMessage(handle))),
                connectionLost: isBroken)
        }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let message = PostgresError.oneLine(String(cString: PQresultErrorMessage(result)))
            PQclear(result)
            throw PostgresError(sqlState: state, message: message, connectionLost: isBroken)
        }
        return PostgresRows(result)
    }

    /// `body`'s value given C copies of text parameters (nil stays NULL), freed after it.
    private static func withParameters<R>(
        _ parameters: [String?], _ body: (UnsafeBufferPointer<UnsafePointer<CChar>?>) -> R
    ) -> R {
        let copies = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { for copy in copies { free(copy) } }
        return copies.map { UnsafePointer($0) }.withUnsafeBufferPointer(body)
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        return body(copies.map { UnsafePointer($0) } + [nil])
    }
}

/// The rows a statement returned, as text; freed with the object.
final class PostgresRows {
    private let result: OpaquePointer

    init(_ result: OpaquePointer) { self.result = result }

    deinit { PQclear(result) }

    var count: Int { Int(PQntuples(result)) }

    func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(result, Int32(row), Int32(column)) == 1 }

    /// The value as UTF-8 text ("" for NULL).
    func string(_ row: Int, _ column: Int) -> String { String(decoding: bytes(row, column), as: UTF8.self) }

    /// The value's text as borrowed bytes, valid as long as these rows are (empty for NULL).
    func bytes(_ row: Int, _ column: Int) -> UnsafeBufferPointer<UInt8> {
        guard let value = PQgetvalue(result, Int32(row), Int32(column)) else {
            return UnsafeBufferPointer(start: nil, count: 0)
        }
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        return UnsafeBufferPointer(start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), count: length)
    }

    func optionalString(_ row: Int, _ column: Int) -> String? { isNull(row, column) ? nil : string(row, column) }

    /// The value as an integer (0 for NULL or text that is not one).
    func int64(_ row: Int, _ column: Int) -> Int64 { Int64(string(row, column)) ?? 0 }

    func optionalInt64(_ row: Int, _ column: Int) -> Int64? { isNull(row, column) ? nil : int64(row, column) }
}
