/// What a process's CURVE security has counted since it started: handshakes its ZAP handler
/// admitted and refused, and requests dropped unanswered because their sender's key was no
/// longer in the allow-list. Each count only grows.
public struct PeerCounts: Sendable, Equatable {
    public var admitted: Int
    public var refused: Int
    public var dropped: Int

    public init(admitted: Int, refused: Int, dropped: Int) {
        self.admitted = admitted
        self.refused = refused
        self.dropped = dropped
    }
}
