import Glibc
import LogbookWire
import LogbookZMQ
import Synchronization
import Testing

/// A real CURVE handshake in one process: the ZAP handler admits a listed key, giving its
/// messages the key as user id and the role as `Role`; it refuses an unknown key, a plain
/// client, and a writer on the feed.
@Suite("CURVE handshakes and the ZAP handler", .serialized)
struct CurveHandshakeTests {
    @Test func listedKeysGetTheirRoleOnEveryMessageAndOthersAreRefused() throws {
        let writer = try CurveKeyPair.generate()
        let stranger = try CurveKeyPair.generate()
        let rig = try ZAPRig([(writer, .writer)])
        defer { rig.stop() }
        let (context, security, observer, server) = (rig.context, rig.security, rig.observer, rig.server)
        let endpoint = temporaryIPCEndpoint()
        let router = try ZMQSocket(context, .router)
        try security.secureServer(router, domain: .requests)
        try router.bind(endpoint)

        let known = try client(context, endpoint, writer, server.publicKey)
        try known.send([[], bytes("hello")])
        let received = try #require(try receiveMessage(router))
        #expect(received.frames.last.map(text) == "hello")
        #expect(received.metadata.userId == writer.publicKey.z85)
        #expect(received.metadata.role == "writer")
        #expect(received.metadata.peerAddress != nil)

        let unknown = try client(context, endpoint, stranger, server.publicKey)
        try unknown.send([[], bytes("let me in")], wait: false)
        let plain = try ZMQSocket(context, .dealer)
        try plain.connect(endpoint)
        try plain.send([[], bytes("plain")], wait: false)
        #expect(observer.waitForRefusals(1), "the unknown key was never refused")
        // Sent after the others: when it arrives, theirs would have too.
        try known.send([[], bytes("again")])
        #expect(try receiveMessage(router)?.frames.last.map(text) == "again")
        #expect(try router.receive(wait: false) == nil, "only the listed key's messages arrive")
        let refusal = try #require(observer.refusals.first)
        #expect(refusal.key == stranger.publicKey.z85)
        #expect(refusal.reason == "unknown key")
        #expect(refusal.domain == ZAPDomain.requests.rawValue)
        #expect(security.handshakesAdmitted == 1)
        #expect(security.handshakesRefused >= 1)

        // The feed admits readers and admins only.
        let feedEndpoint = temporaryIPCEndpoint()
        let publisher = try ZMQSocket(context, .publisher)
        try security.secureServer(publisher, domain: .feed)
        try publisher.bind(feedEndpoint)
        let before = observer.refusals.count
        let subscriber = try ZMQSocket(context, .subscriber)
        try CurveClientKeys(keys: writer, serverKey: server.publicKey).secureClient(subscriber)
        try subscriber.subscribe("")
        try subscriber.connect(feedEndpoint)
        #expect(observer.waitForRefusals(before + 1), "\(observer.refusals)")
        let onFeed = observer.refusals.dropFirst(before).first { $0.domain == ZAPDomain.feed.rawValue }
        #expect(onFeed?.reason == "role writer may not connect to the logbook-feed socket (subscribe)")
        #expect(onFeed?.key == writer.publicKey.z85)
    }

    @Test func aFeedProcessHintsSocketTakesHintsFromWritersOnly() throws {
        let worker = try CurveKeyPair.generate()
        let reader = try CurveKeyPair.generate()
        let rig = try ZAPRig([(worker, .writer), (reader, .reader)])
        defer { rig.stop() }
        let (context, security, observer, server) = (rig.context, rig.security, rig.observer, rig.server)
        let endpoint = temporaryIPCEndpoint()
        let hints = try ZMQSocket(context, .subscriber)
        try hints.subscribe("")
        try security.secureServer(hints, domain: .hints)
        try hints.bind(endpoint)
        let readerHints = try ZMQSocket(context, .publisher)
        try CurveClientKeys(keys: reader, serverKey: server.publicKey).secureClient(readerHints)
        try readerHints.connect(endpoint)
        #expect(observer.waitForRefusals(1), "a reader's hints connection was not refused")
        #expect(observer.refusals.first?.key == reader.publicKey.z85)
        #expect(observer.refusals.first?.domain == ZAPDomain.hints.rawValue)

        let workerHints = try ZMQSocket(context, .publisher)
        try CurveClientKeys(keys: worker, serverKey: server.publicKey).secureClient(workerHints)
        try workerHints.connect(endpoint)
        // A PUB drops what it sends before the connection is up: send until one arrives.
        var received: ReceivedMessage?
        for _ in 0..<100 where received == nil {
            try readerHints.send([bytes("from the reader")], wait: false)
            try workerHints.send([bytes("hint")], wait: false)
            if try ZMQPoll.wait([hints.readable], timeoutMilliseconds: 50)[0] { received = try hints.receiveMessage() }
        }
        #expect(received?.frames == [bytes("hint")])
        #expect(received?.metadata.role == "writer")
        while let more = try hints.receive(wait: false) { #expect(more == [bytes("hint")]) }
    }

    private func client(_ context: ZMQContext, _ endpoint: String, _ keys: CurveKeyPair, _ server: CurveKey) throws
        -> ZMQSocket
    {
        let socket = try ZMQSocket(context, .dealer)
        try socket.secure(CurveClientKeys(keys: keys, serverKey: server))
        try socket.connect(endpoint)
        return socket
    }

    private func receiveMessage(_ socket: borrowing ZMQSocket) throws -> ReceivedMessage? {
        guard try ZMQPoll.wait([socket.readable], timeoutMilliseconds: 5_000)[0] else { return nil }
        return try socket.receiveMessage(wait: false)
    }
}

/// A context whose ZAP handler admits the listed keys, with a server key pair; `stop()`
/// shuts the context down and waits for the handler's thread.
final class ZAPRig {
    let server: CurveKeyPair
    let security: ServerSecurity
    let context: ZMQContext
    let observer = RecordingObserver()
    private let zap: OwnedThread

    init(_ clients: [(CurveKeyPair, ClientRole)]) throws {
        server = try CurveKeyPair.generate()
        var entries: [String: AllowList.Entry] = [:]
        for (keys, role) in clients { entries[keys.publicKey.z85] = AllowList.Entry(role: role, path: "\(role)") }
        let security = ServerSecurity(keys: server, allowList: AllowList(entries: entries), from: "unused")
        let context = try ZMQContext()
        let observer = observer
        let bound = Latch()
        zap = OwnedThread(name: "test-zap") {
            guard let socket = try? ZAPHandler.bind(context) else { return }
            bound.open()
            ZAPHandler.serve(socket, security: security, observer: observer)
        }
        self.security = security
        self.context = context
        guard bound.wait() else {
            context.shutdown()
            throw ZMQError("the ZAP handler did not bind", errno: 0)
        }
    }

    func stop() {
        context.shutdown()
        zap.join()
    }
}

/// Keeps what a ZAP handler reports, for a test to wait on.
final class RecordingObserver: ZAPObserver {
    private let recorded = Mutex<[ZAPRefusal]>([])

    var refusals: [ZAPRefusal] { recorded.withLock { $0 } }

    func refused(_ refusal: ZAPRefusal) { recorded.withLock { $0.append(refusal) } }
    func admitted(key: String, role: ClientRole, address: String, domain: String) {}
    func quiet() {}

    /// Whether at least `count` refusals came within five seconds.
    func waitForRefusals(_ count: Int) -> Bool {
        for _ in 0..<500 {
            if refusals.count >= count { return true }
            usleep(10_000)
        }
        return false
    }
}
