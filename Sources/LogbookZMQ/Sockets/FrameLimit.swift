/// The largest message any Logbook socket takes. libzmq drops the connection of a peer that
/// sends a bigger one before it is read (`ZMQ_MAXMSGSIZE`); servers reply `malformed_request`
/// to requests between `WireRequest.maximumSize` and this.
public enum FrameLimit {
    public static let largest: Int64 = 16 << 20
}
