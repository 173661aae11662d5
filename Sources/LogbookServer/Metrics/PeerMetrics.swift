import LogbookMetrics
import LogbookWire

/// The CURVE counts of a process with security on (`PeerStatus`), as metrics.
enum PeerMetrics {
    static func families(_ peers: PeerStatus) -> [MetricFamily] {
        [
            .counter(
                "logbook_curve_handshakes_total", "CURVE handshakes the ZAP handler answered, by outcome.",
                [([.init("outcome", "admitted")], peers.admitted), ([.init("outcome", "refused")], peers.refused)]),
            .counter(
                "logbook_requests_dropped_total",
                "Requests dropped unanswered: their sender's key is no longer in the allow-list.", peers.dropped),
        ]
    }
}
