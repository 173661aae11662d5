import LogbookWire
import LogbookZMQ

extension PeerStatus {
    /// The `peers` of a `Status`: the ZAP handler's counts and the requests a loop dropped.
    init(_ counts: PeerCounts, dropped: Int) {
        self.init(admitted: counts.admitted, refused: counts.refused, dropped: dropped)
    }
}
