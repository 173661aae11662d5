import CPostgres
import Glibc
import LogbookZMQ

/// Samples, from a connection of its own on a thread of its own, whether some backend holds
/// the row lock of `log_head` (the one lock every append with events takes, last, and keeps
/// until its COMMIT is flushed), and whether another waits for it.
///
/// An append's `UPDATE log_head` takes the table's `RowExclusiveLock` (visible in `pg_locks`,
/// fast-path locks included) just before the row lock, and both are released together at
/// the end of its transaction, after the commit's flush; an append without events only
/// reads the head (`AccessShareLock`). So a backend with a granted `RowExclusiveLock` on
/// `log_head` that is not waiting on a lock holds the head row; one that waits on a lock
/// (`wait_event_type = 'Lock'`: the holder's transaction id, or the tuple) waits for it.
/// The share of samples with a holder estimates the share of wall time the lock is held.
final class HeadLockSampler: Sendable {
    /// One look at `pg_locks`: when (monotonic nanoseconds), backends holding the head row
    /// (0 or 1) and backends waiting for it.
    struct Sample: Sendable, Equatable {
        var at: UInt64
        var holders: Int
        var waiting: Int
    }

    /// What the samples of a span of time found.
    struct Outcome: Sendable, Equatable {
        var samples = 0
        /// Samples in which some backend held the head row.
        var held = 0
        /// Samples in which one held it and at least one other waited for it.
        var contended = 0
        /// Backends waiting for it, summed over the samples.
        var waiters = 0

        /// The samples taken from `start` to `end`.
        init(_ samples: [Sample], from start: UInt64, to end: UInt64) {
            for sample in samples where sample.at >= start && sample.at <= end {
                self.samples += 1
                if sample.holders > 0 { held += 1 }
                if sample.holders > 0 && sample.waiting > 0 { contended += 1 }
                waiters += sample.waiting
            }
        }

        var heldShare: Double? { samples > 0 ? Double(held) / Double(samples) : nil }
        var contendedShare: Double? { samples > 0 ? Double(contended) / Double(samples) : nil }
        var meanWaiters: Double? { samples > 0 ? Double(waiters) / Double(samples) : nil }

        /// One standard error of `heldShare` if the samples were independent (binomial).
        var heldStandardError: Double? {
            guard let share = heldShare else { return nil }
            return (share * (1 - share) / Double(samples)).squareRoot()
        }
    }

    static let query = """
        SELECT count(*) FILTER (WHERE a.wait_event_type IS DISTINCT FROM 'Lock'),
               count(*) FILTER (WHERE a.wait_event_type = 'Lock')
        FROM pg_locks AS l JOIN pg_stat_activity AS a ON a.pid = l.pid
        WHERE l.locktype = 'relation' AND l.relation = 'log_head'::regclass
          AND l.mode = 'RowExclusiveLock' AND l.granted
        """

    private let running = Shared(true)
    private let samples = Shared<[Sample]>([])
    private let failure = Shared<String?>(nil)
    /// The sampling connection's backend, to leave out of PostgreSQL's processor time.
    private let backend = Shared<Int32?>(nil)
    private let thread: OwnedThread

    /// Connects, prepares the query and starts sampling every `intervalMicroseconds`.
    init(connectionString: String, intervalMicroseconds: UInt32) throws(BenchError) {
        let ready = Shared<String??>(nil)
        let (running, samples, failure, backend) = (running, samples, failure, backend)
        thread = OwnedThread(name: "bench-head-lock") {
            let connection: PostgresConnection
            do throws(BenchError) {
                connection = try PostgresConnection(connectionString)
                let prepared = PQprepare(connection.handle, "head", Self.query, 0, nil)
                defer { PQclear(prepared) }
                guard PQresultStatus(prepared) == PGRES_COMMAND_OK else { throw connection.failure("PREPARE") }
                backend.update { $0 = PQbackendPID(connection.handle) }
            } catch {
                ready.update { $0 = .some(error.message) }
                return
            }
            ready.update { $0 = .some(nil) }
            while running.value {
                let result = PQexecPrepared(connection.handle, "head", 0, nil, nil, nil, 0)
                defer { PQclear(result) }
                guard PQresultStatus(result) == PGRES_TUPLES_OK, PQntuples(result) == 1 else {
                    let message = connection.failure("sampling pg_locks").message
                    failure.update { $0 = message }
                    return
                }
                let holders = Int(String(cString: PQgetvalue(result, 0, 0))) ?? 0
                let waiting = Int(String(cString: PQgetvalue(result, 0, 1))) ?? 0
                let sample = Sample(at: BenchClock.nanoseconds(), holders: holders, waiting: waiting)
                samples.update { $0.append(sample) }
                usleep(intervalMicroseconds)
            }
        }
        while ready.value == nil { BenchClock.sleep(milliseconds: 1) }
        if case .some(.some(let failure)) = ready.value {
            thread.join()
            throw BenchError("the head-lock sampler: \(failure)")
        }
    }

    /// The sampling connection's backend pid.
    var backendPid: Int32? { backend.value }

    /// What the samples from `start` to `end` found; sampling goes on.
    func outcome(from start: UInt64, to end: UInt64) throws(BenchError) -> Outcome {
        if let message = failure.value { throw BenchError("the head-lock sampler: \(message)") }
        return Outcome(samples.value, from: start, to: end)
    }

    /// Stops sampling and closes the connection.
    func stop() {
        running.update { $0 = false }
        thread.join()
    }
}
