import LogbookApplication
import LogbookWire
import LogbookZMQ

extension QueryStatus {
    /// The query process's status as the query thread sees it: positions, generation,
    /// counters and rebuild from `snapshot` (the shared state as it is now), and what the
    /// thread itself knows.
    init(
        _ snapshot: QueryProcessState.Snapshot, uptimeSeconds: Int64, queriesAnswered: Int, queriesWaiting: Int,
        readModels: ReadModelCounts?, peers: PeerStatus? = nil
    ) {
        self.init(
            checkpoint: snapshot.applied, head: snapshot.head, generation: snapshot.generation,
            uptimeSeconds: uptimeSeconds, eventsApplied: snapshot.eventsApplied,
            holesDetected: snapshot.holesDetected, queriesAnswered: queriesAnswered, queriesWaiting: queriesWaiting,
            readModels: readModels, rebuild: RebuildState(snapshot.rebuild), peers: peers,
            lagSeconds: snapshot.lagSeconds(now: MonotonicClock.milliseconds()))
    }
}
