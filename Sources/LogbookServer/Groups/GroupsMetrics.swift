import LogbookApplication
import LogbookMetrics
import Synchronization

/// The groups process's numbers, shared by its loop (which stores a snapshot of every group
/// once per turn) and the metrics endpoint (which reads it).
final class GroupsMetrics: Sendable {
    /// One group as the last turn left it, with the log's head as its follower last saw it.
    struct GroupFigures: Sendable, Equatable {
        var summary: GroupSummary
        var head: Int64
    }

    private let figures = Mutex<[GroupFigures]>([])
    private let started: ProcessStart

    init(started: ProcessStart) { self.started = started }

    func publish(_ groups: [GroupFigures]) { figures.withLock { $0 = groups } }

    func read() -> [GroupFigures] { figures.withLock { $0 } }

    func families() -> [MetricFamily] {
        let groups = read()
        func gauge(_ name: String, _ help: String, _ value: (GroupFigures) -> Int64) -> MetricFamily {
            MetricFamily(
                name: name, help: help, kind: .gauge,
                samples: groups.map {
                    .init([.init("group", $0.summary.record.name.rawValue)], .number(Double(value($0))))
                })
        }
        func counter(_ name: String, _ help: String, _ value: (GroupCounters) -> Int) -> MetricFamily {
            .counter(
                name, help,
                groups.map { ([.init("group", $0.summary.record.name.rawValue)], value($0.summary.counters)) })
        }
        return [
            gauge("logbook_group_checkpoint", "Every event of the group's topics up to here is acknowledged.") {
                $0.summary.record.checkpoint
            },
            gauge("logbook_group_lag", "Positions of the log after the group's checkpoint.") {
                max(0, $0.head - $0.summary.record.checkpoint)
            },
            gauge("logbook_group_members", "Members of the group.") { Int64($0.summary.members) },
            gauge("logbook_group_in_flight", "Deliveries not yet acknowledged.") { Int64($0.summary.inFlight) },
            gauge("logbook_group_pending", "Events taken from the log and not yet done.") { Int64($0.summary.pending) },
            gauge("logbook_group_parked", "Events parked after their last allowed delivery failed.") {
                Int64($0.summary.parked)
            },
            counter("logbook_group_deliveries_total", "Deliveries sent, first ones and again.") { $0.delivered },
            counter("logbook_group_redeliveries_total", "Deliveries after the first of an event.") { $0.redelivered },
            counter("logbook_group_acks_total", "Deliveries acknowledged.") { $0.acked },
            counter("logbook_group_nacks_total", "Deliveries a member failed.") { $0.nacked },
            counter("logbook_group_expired_total", "Deliveries not acknowledged in time.") { $0.expired },
        ] + started.families()
    }
}
