import CZeroMQ

/// A message as a server reads it: its frames and the properties of the connection it came
/// on, which a server needs to decide, per message, what the sender may do.
public struct ReceivedMessage {
    public var frames: [[UInt8]]
    public var metadata: MessageMetadata

    public init(frames: [[UInt8]], metadata: MessageMetadata = MessageMetadata()) {
        self.frames = frames
        self.metadata = metadata
    }
}

/// What libzmq attaches to every message of a connection (`zmq_msg_gets`): the user id and
/// the `Role` property the ZAP handler returned when it admitted the connection, and the
/// peer's address. All nil on a connection no ZAP handler saw (security off).
public struct MessageMetadata: Sendable, Equatable {
    /// The ZAP handler's user id: Logbook's handler gives the client's public key in Z85.
    public var userId: String?
    /// The `Role` property the ZAP handler returned (the role at handshake time).
    public var role: String?
    /// The peer's IP address, for diagnostics.
    public var peerAddress: String?

    public init(userId: String? = nil, role: String? = nil, peerAddress: String? = nil) {
        self.userId = userId
        self.role = role
        self.peerAddress = peerAddress
    }

    /// The properties of a received frame.
    init(of message: inout zmq_msg_t) {
        func property(_ name: String) -> String? {
            guard let value = zmq_msg_gets(&message, name) else { return nil }
            let text = String(cString: value)
            return text.isEmpty ? nil : text
        }
        self.init(
            userId: property("User-Id"), role: property(ZAPMetadata.roleProperty), peerAddress: property("Peer-Address")
        )
    }
}
