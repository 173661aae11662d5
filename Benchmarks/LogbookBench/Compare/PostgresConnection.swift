import CPostgres

/// One libpq connection, closed with the object.
final class PostgresConnection {
    let handle: OpaquePointer

    init(_ connectionString: String) throws(BenchError) {
        guard let handle = PQconnectdb(connectionString) else {
            throw BenchError("libpq could not allocate a connection")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(handle))
            PQfinish(handle)
            throw BenchError("cannot connect to PostgreSQL: \(message)")
        }
        self.handle = handle
    }

    deinit {
        PQfinish(handle)
    }

    func execute(_ sql: String) throws(BenchError) {
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else { throw failure(sql) }
    }

    func scalar(_ sql: String) throws(BenchError) -> String {
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK, PQntuples(result) > 0, let value = PQgetvalue(result, 0, 0)
        else { throw failure(sql) }
        return String(cString: value)
    }

    /// Every row of the result of `sql`, each value as text (NULL as "").
    func rows(_ sql: String) throws(BenchError) -> [[String]] {
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK else { throw failure(sql) }
        return (0..<PQntuples(result)).map { row in
            (0..<PQnfields(result)).map { column in String(cString: PQgetvalue(result, row, column)) }
        }
    }

    func failure(_ what: String) -> BenchError {
        BenchError("PostgreSQL: \(String(cString: PQerrorMessage(handle))) (\(what.prefix(60)))")
    }
}
