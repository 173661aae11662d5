import LogbookTestSupport
import Testing

@testable import LogbookPostgres

/// A `PostgresStatement` is prepared once on a connection and run by name after that, and a
/// prepared statement the session lost or that no longer fits its table is prepared again.
/// The session never JIT-compiles.
@Suite(
    "PostgreSQL connection: prepared statements and session settings",
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresStatementTests {
    /// The statements the session holds, as the server lists them.
    private static func preparedOnServer(_ db: PostgresConnection) throws -> [String] {
        let rows = try db.query("SELECT statement FROM pg_prepared_statements ORDER BY name")
        return (0..<rows.count).map { rows.string($0, 0) }
    }

    @Test("a statement is prepared once per connection, whatever the calls and their values")
    func preparedOnce() throws {
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(connectionString: database.connectionString)
        let doubled = PostgresStatement("SELECT $1::integer * 2")
        let sum = PostgresStatement("SELECT $1::integer + $2::integer")
        var answers: [String] = []
        for value in 1...10 {
            answers.append(try db.query(doubled, [String(value)]).string(0, 0))
            answers.append(try db.query(sum, [String(value), "100"]).string(0, 0))
        }
        #expect(answers.prefix(4) == ["2", "101", "4", "102"])
        #expect(answers.suffix(2) == ["20", "110"])
        #expect(try Self.preparedOnServer(db) == [doubled.sql, sum.sql])

        let other = try PostgresConnection(connectionString: database.connectionString)
        #expect(try Self.preparedOnServer(other).isEmpty)
        #expect(try other.query(doubled, ["21"]).string(0, 0) == "42")
        #expect(try Self.preparedOnServer(other) == [doubled.sql])
    }

    @Test("a statement sent ahead is prepared too, and its answer read as a query's")
    func sentAhead() throws {
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(connectionString: database.connectionString)
        let statement = PostgresStatement("SELECT $1::text || '!'")
        for word in ["one", "two"] {
            try db.send(statement, [word])
            #expect(try db.answer(cancellingAt: .now + .seconds(30)).string(0, 0) == word + "!")
        }
        #expect(try Self.preparedOnServer(db) == [statement.sql])
    }

    @Test("a session reset under the connection (DISCARD ALL) retires it: a lost connection, made again fresh")
    func resetSessionRetired() throws {
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(connectionString: database.connectionString)
        let statement = PostgresStatement("SELECT $1::integer + 1, current_setting('jit')")
        #expect(try db.query(statement, ["1"]).string(0, 0) == "2")
        #expect(!db.isBroken)
        try db.execute("DISCARD ALL")
        #expect {
            _ = try db.query(statement, ["2"])
        } throws: { error in
            guard let error = error as? PostgresError else { return false }
            return error.sqlState == "26000" && error.connectionLost && error.isTransient
        }
        #expect(db.isBroken)
        let fresh = try PostgresConnection(connectionString: database.connectionString)
        let answer = try fresh.query(statement, ["3"])
        #expect(answer.string(0, 0) == "4" && answer.string(0, 1) == "off")
    }

    @Test("a statement whose table changed shape retires the connection; a fresh one answers in the new shape")
    func changedTableRetired() throws {
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(connectionString: database.connectionString)
        try db.execute("CREATE TABLE notes (id integer PRIMARY KEY); INSERT INTO notes VALUES (1)")
        let statement = PostgresStatement("SELECT * FROM notes WHERE id = $1::integer")
        #expect(try db.query(statement, ["1"]).string(0, 0) == "1")
        try db.execute("ALTER TABLE notes ADD COLUMN body text NOT NULL DEFAULT 'hello'")
        #expect {
            _ = try db.query(statement, ["1"])
        } throws: { error in
            guard let error = error as? PostgresError else { return false }
            return error.sqlState == "0A000" && error.connectionLost
        }
        #expect(db.isBroken)
        let fresh = try PostgresConnection(connectionString: database.connectionString)
        #expect(try fresh.query(statement, ["1"]).string(0, 1) == "hello")
    }

    @Test("a statement sent ahead that finds its session reset retires the connection too")
    func sentAheadRetired() throws {
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(connectionString: database.connectionString)
        let statement = PostgresStatement("SELECT $1::text")
        try db.send(statement, ["a"])
        #expect(try db.answer(cancellingAt: .now + .seconds(30)).string(0, 0) == "a")
        try db.execute("DISCARD ALL")
        try db.send(statement, ["b"])
        #expect {
            _ = try db.answer(cancellingAt: .now + .seconds(30))
        } throws: { error in
            (error as? PostgresError)?.connectionLost == true
        }
        #expect(db.isBroken)
    }

    @Test("a session turns the server's JIT off, even where the database turns it on")
    func noJIT() throws {
        let database = try PostgresTestDatabase()
        let raw = try RawPostgres(database.connectionString)
        try raw.run("ALTER DATABASE \"\(database.name)\" SET jit = on")
        #expect(try RawPostgres(database.connectionString).run("SHOW jit") == [["on"]])
        let db = try PostgresConnection(connectionString: database.connectionString)
        #expect(try db.query("SHOW jit").string(0, 0) == "off")
    }
}
