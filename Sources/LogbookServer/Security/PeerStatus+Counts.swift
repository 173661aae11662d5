import LogbookWire
import LogbookZMQ

extension PeerStatus {
    /// The `peers` of a `Status`: what the process's security counted.
    init(_ counts: PeerCounts) {
        self.init(admitted: counts.admitted, refused: counts.refused, dropped: counts.dropped)
    }
}
