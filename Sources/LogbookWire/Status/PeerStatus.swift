public import LogbookJSON

/// The `peers` member of a `Status` result when the process runs with CURVE: handshakes its
/// ZAP handler admitted and refused since it started, and requests dropped unanswered because
/// their sender's key was no longer in the allow-list. Absent when security is off.
public struct PeerStatus: Sendable, Equatable {
    public var admitted: Int
    public var refused: Int
    public var dropped: Int

    public init(admitted: Int, refused: Int, dropped: Int) {
        self.admitted = admitted
        self.refused = refused
        self.dropped = dropped
    }

    static let fields = ["admitted", "refused", "dropped"]

    /// `{"admitted","refused","dropped"}`.
    public var json: JSONValue {
        ["admitted": .int(admitted), "refused": .int(refused), "dropped": .int(dropped)]
    }

    /// Reads the optional `peers` member of a status object.
    static func read(from fields: StatusFields) throws(StatusDocumentError) -> PeerStatus? {
        guard fields.has("peers") else { return nil }
        let peers = try fields.object("peers", allowed: Self.fields)
        return PeerStatus(
            admitted: try peers.int("admitted"), refused: try peers.int("refused"), dropped: try peers.int("dropped"))
    }
}
