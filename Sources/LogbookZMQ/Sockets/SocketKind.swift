import CZeroMQ

/// The libzmq socket types Logbook uses.
public enum SocketKind: Sendable {
    case router, dealer, request, reply, publisher, subscriber, pair

    var rawValue: Int32 {
        switch self {
        case .router: ZMQ_ROUTER
        case .dealer: ZMQ_DEALER
        case .request: ZMQ_REQ
        case .reply: ZMQ_REP
        case .publisher: ZMQ_PUB
        case .subscriber: ZMQ_SUB
        case .pair: ZMQ_PAIR
        }
    }
}
