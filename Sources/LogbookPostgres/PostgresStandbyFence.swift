import Glibc
import LogbookApplication

/// Holds a read back until every synchronous standby of the primary has flushed the
/// write-ahead log as far as it reached when the read was done, so nothing a reader is
/// given (a feed message, a `ReadLog` page, a head position) can vanish in a failover.
///
/// Why it is needed: a backend whose wait for the synchronous standby is cut short (its
/// connection terminated or lost, a cancel) has already committed on the primary, and its
/// events become visible there without the standby having them; if the primary is then
/// lost, the promoted standby's log holds other events at those positions. Every commit a
/// read sees ends at or before the primary's WAL position taken after the read (in a later
/// statement of the same session), so once every synchronous standby's flush position
/// (`pg_stat_replication`) has reached it, what the read returned is on the standby that
/// a failover manager in synchronous mode (Patroni's `synchronous_mode`) promotes.
///
/// Without synchronous standbys (`synchronous_standby_names` empty) there is nothing to wait
/// for and a read costs one more statement. A read on a streaming replica (a `--read-store`)
/// is held back the same way, by asking its primary (`PostgresPrimaryLink`) about the
/// position the replica had replayed after the read; and only while the replica streams on
/// the primary's timeline: a replica left on an old primary's timeline by a failover may
/// hold what the failover took back, at positions the new log gives to other events. While
/// no synchronous standby keeps up, the read fails as `.unavailable` after
/// `timeoutMilliseconds` (commits wait meanwhile too); a role that may not read the
/// standbys' positions (they read as NULL without `pg_monitor` or `pg_read_all_stats`)
/// fails it as `.failed`.
enum PostgresStandbyFence {
    /// How long a read waits for the synchronous standbys before it fails.
    static let timeoutMilliseconds: Int64 = 2_000

    /// Where the WAL stands (on a standby: how far it replayed), and the fence's state there.
    private static let position = PostgresStatement(
        """
        WITH here AS (
            SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END AS lsn
        )
        SELECT here.lsn::text, \(state("here.lsn")) FROM here
        """)

    /// The fence's state at the position `$1`.
    private static let check = PostgresStatement("SELECT \(state("$1::pg_lsn"))")

    /// 0: nothing to wait for at `lsn`; 1: a synchronous standby has not flushed it yet (or
    /// none is connected); 2: the standbys' positions cannot be read by this role.
    private static func state(_ lsn: String) -> String {
        """
        CASE
            WHEN pg_is_in_recovery() OR current_setting('synchronous_standby_names') = '' THEN 0
            WHEN EXISTS (SELECT 1 FROM pg_stat_replication WHERE sync_state IS NULL) THEN 2
            WHEN EXISTS (SELECT 1 FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum'))
                AND NOT EXISTS (
                    SELECT 1 FROM pg_stat_replication
                    WHERE sync_state IN ('sync', 'quorum') AND (flush_lsn IS NULL OR flush_lsn < \(lsn)))
                THEN 0
            ELSE 1
        END
        """
    }

    /// Whether a server is still a replica (a promoted one is a primary, with standbys of its
    /// own), where it has replayed to, the timeline it streams on (NULL when its WAL receiver
    /// is not streaming), and whether this role may see its WAL receiver's state (without
    /// `pg_read_all_stats` it sees only the receiver's pid).
    private static let replicaPosition = PostgresStatement(
        """
        SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text,
               (SELECT received_tli FROM pg_stat_wal_receiver WHERE status = 'streaming'),
               NOT EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE pid IS NOT NULL AND status IS NULL)
        """)

    /// On the primary: its timeline (NULL on a server in recovery, which is no primary) and
    /// the fence's state at the position `$1`.
    private static let primaryCheck = PostgresStatement(
        """
        SELECT CASE WHEN pg_is_in_recovery() THEN NULL
                    ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer END,
               \(state("$1::pg_lsn"))
        """)

    /// Returns once every synchronous standby holds what a read just done on `db` saw; with
    /// `primary`, `db` may be a streaming replica of it, whose position the primary is asked about.
    static func wait(_ db: PostgresConnection, primary: PostgresPrimaryLink? = nil, target: String) throws {
        if let primary {
            let replica = try db.query(replicaPosition)
            if replica.string(0, 0) == "t" {
                guard replica.string(0, 3) == "t" else {
                    throw EventStoreError.failed(
                        "\(target): this role cannot see the replica's WAL receiver in pg_stat_wal_receiver "
                            + "(grant it pg_monitor): reads check that the replica streams from the primary")
                }
                return try waitOnReplica(
                    at: replica.string(0, 1), timeline: replica.optionalInt64(0, 2), primary, target)
            }
        }
        let first = try db.query(position)
        let lsn = first.string(0, 0)
        try waitUntilFlushed(lsn, target: target, state: first.int64(0, 1)) { try db.query(check, [lsn]).int64(0, 0) }
    }

    /// Returns once the synchronous standbys of `primary` have flushed `lsn`, which a replica
    /// streaming on `timeline` had replayed (nil: it is not streaming).
    private static func waitOnReplica(
        at lsn: String, timeline: Int64?, _ primary: PostgresPrimaryLink, _ target: String
    ) throws {
        guard let timeline else {
            throw EventStoreError.unavailable(
                "\(target): the replica is not streaming from its primary, so its log may not be the primary's",
                cause: .databaseServer)
        }
        func ask() throws -> Int64 {
            let (primaryTimeline, state) = try primary.withConnection { db in
                let answer = try db.query(primaryCheck, [lsn])
                return (answer.optionalInt64(0, 0), answer.int64(0, 1))
            }
            guard let primaryTimeline else {
                throw EventStoreError.unavailable(
                    "\(primary.target) is in recovery, not a primary: cannot tell what of \(target) is safe",
                    cause: .databaseServer)
            }
            guard primaryTimeline == timeline else {
                throw EventStoreError.unavailable(
                    "\(target) streams on timeline \(timeline) and its primary \(primary.target) is on timeline "
                        + "\(primaryTimeline): after a failover the replica may hold what the failover took back",
                    cause: .databaseServer)
            }
            return state
        }
        try waitUntilFlushed(lsn, target: target, state: try ask(), then: ask)
    }

    /// Returns once the fence's state is 0, asking `next` for it again with back-off while it
    /// is 1 (a synchronous standby has not flushed `lsn`) and time is left.
    private static func waitUntilFlushed(
        _ lsn: String, target: String, state first: Int64, then next: () throws -> Int64
    ) throws {
        var state = first
        let start = monotonicMilliseconds()
        var pause: UInt32 = 1_000
        while true {
            switch state {
            case 0: return
            case 2:
                throw EventStoreError.failed(
                    "\(target): this role cannot read the synchronous standbys' positions in pg_stat_replication "
                        + "(grant it pg_monitor): reads wait for them so that no reader sees what a failover may lose")
            default: break
            }
            guard monotonicMilliseconds() - start < timeoutMilliseconds else {
                throw EventStoreError.unavailable(
                    "\(target): no synchronous standby has flushed the log as far as \(lsn) yet", cause: .unknown)
            }
            usleep(pause)
            pause = min(pause * 2, 50_000)
            state = try next()
        }
    }

    private static func monotonicMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000 + Int64(now.tv_nsec) / 1_000_000
    }
}
