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
/// for and a read costs one more statement. On a connection to a standby (a `--read-store`
/// replica) the primary's standbys cannot be seen: its reads pass as they are. While no
/// synchronous standby keeps up, the read fails as `.unavailable` after `timeoutMilliseconds`
/// (commits wait meanwhile too); a role that may not read the standbys' positions (they
/// read as NULL without `pg_monitor` or `pg_read_all_stats`) fails it as `.failed`.
enum PostgresStandbyFence {
    /// How long a read waits for the synchronous standbys before it fails.
    static let timeoutMilliseconds: Int64 = 2_000

    /// Where the WAL stands (on a standby: how far it replayed), and the fence's state there.
    private static let position = """
        WITH here AS (
            SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END AS lsn
        )
        SELECT here.lsn::text, \(state("here.lsn")) FROM here
        """

    /// The fence's state at the position `$1`.
    private static let check = "SELECT \(state("$1::pg_lsn"))"

    /// 0: nothing to wait for at `lsn`; 1: a synchronous standby has not flushed it yet (or
    /// none is connected); 2: the standbys' positions cannot be read by this role.
    private static func state(_ lsn: String) -> String {
        """
        CASE
            WHEN pg_is_in_recovery() OR current_setting('synchronous_standby_names') = '' THEN 0
            WHEN EXISTS (SELECT 1 FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum') AND flush_lsn IS NULL)
                THEN 2
            WHEN EXISTS (SELECT 1 FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum'))
                AND NOT EXISTS (
                    SELECT 1 FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum') AND flush_lsn < \(lsn))
                THEN 0
            ELSE 1
        END
        """
    }

    /// Returns once every synchronous standby holds what a read just done on `db` saw.
    static func wait(_ db: PostgresConnection, target: String) throws {
        let first = try db.query(position)
        let lsn = first.string(0, 0)
        var state = first.int64(0, 1)
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
            state = try db.query(check, [lsn]).int64(0, 0)
        }
    }

    private static func monotonicMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000 + Int64(now.tv_nsec) / 1_000_000
    }
}
