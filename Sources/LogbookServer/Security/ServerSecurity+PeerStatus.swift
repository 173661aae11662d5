import LogbookWire
import LogbookZMQ

extension ServerSecurity {
    /// The counts of the process's CURVE security as the `peers` member of its `Status`.
    var peerStatus: PeerStatus {
        let counts = peerCounts
        return PeerStatus(admitted: counts.admitted, refused: counts.refused, dropped: counts.dropped)
    }
}
