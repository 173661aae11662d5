import CPostgres
import Glibc
import LogbookZMQ

/// Drives single-row `INSERT`s, each its own committed transaction, from `clients`
/// connections (one thread each, libpq pipeline mode keeping `window` inserts in flight),
/// for `seconds`: what an application writing a log into PostgreSQL with the same
/// concurrency gets.
enum PostgresLoad {
    typealias Outcome = ComparisonOutcome

    static func run(connectionString: String, clients: Int, window: Int, seconds: Double, payloadBytes: Int)
        throws(BenchError) -> Outcome
    {
        let payload = String(repeating: "x", count: payloadBytes)
        let outcomes = StartLine.runTogether(count: clients, name: "bench-postgres", settleMilliseconds: 100) {
            client, startLine in
            drive(
                connectionString: connectionString, stream: "bench-\(client)-\(BenchClock.nanoseconds())",
                window: window, seconds: seconds, payload: payload, startLine: startLine)
        }
        let total = Outcome.total(of: outcomes)
        if let failure = total.failure { throw BenchError("PostgreSQL load: \(failure)") }
        return total
    }

    private static func drive(
        connectionString: String, stream: String, window: Int, seconds: Double, payload: String,
        startLine: StartLine
    ) -> Outcome {
        var outcome = Outcome()
        var connection: PostgresConnection?
        do throws(BenchError) {
            let opened = try PostgresConnection(connectionString)
            let prepared = PQprepare(
                opened.handle, "append", "INSERT INTO events (stream, version, data) VALUES ($1, $2, $3)", 3, nil)
            defer { PQclear(prepared) }
            guard PQresultStatus(prepared) == PGRES_COMMAND_OK else { throw opened.failure("PREPARE") }
            guard PQenterPipelineMode(opened.handle) == 1 else { throw opened.failure("pipeline mode") }
            connection = opened
        } catch {
            outcome.failure = error.message
        }
        let start = startLine.arriveAndWait()
        outcome.startedAt = start
        guard let connection, outcome.failure == nil else { return outcome }
        let stopAt = start + UInt64(seconds * 1e9)
        var version = 0
        var inFlight = 0
        let streamText = strdup(stream)
        let payloadText = strdup(payload)
        defer {
            free(streamText)
            free(payloadText)
        }
        while true {
            while BenchClock.nanoseconds() < stopAt && inFlight < window {
                version += 1
                let versionText = strdup(String(version))
                let values: [UnsafePointer<CChar>?] = [
                    UnsafePointer(streamText), UnsafePointer(versionText), UnsafePointer(payloadText),
                ]
                let sent = PQsendQueryPrepared(connection.handle, "append", 3, values, nil, nil, 0)
                free(versionText)
                guard sent == 1, PQpipelineSync(connection.handle) == 1 else {
                    outcome.failure = connection.failure("INSERT").message
                    return outcome
                }
                inFlight += 1
            }
            if inFlight == 0 { break }
            // Results come in order: the insert's, a null ending it, then the sync point,
            // which is where that transaction is known to be committed.
            guard let result = PQgetResult(connection.handle) else { continue }
            let status = PQresultStatus(result)
            PQclear(result)
            switch status {
            case PGRES_PIPELINE_SYNC:
                inFlight -= 1
                outcome.completed += 1
                outcome.endedAt = BenchClock.nanoseconds()
            case PGRES_COMMAND_OK:
                break
            default:
                outcome.errors += 1
            }
        }
        return outcome
    }
}
