import LogbookWire
import LogbookZMQ

extension ServerSecurity {
    /// The counts of the process's CURVE security as the `peers` member of its `Status`.
    var peerStatus: PeerStatus {
        PeerStatus(admitted: handshakesAdmitted, refused: handshakesRefused, dropped: requestsDropped)
    }
}
