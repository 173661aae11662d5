import Glibc
import LogbookZMQ
import Testing

/// The libzmq wrapper against real sockets over tcp, ipc and inproc. Sockets used by one
/// thread only are made on the test's thread; every wait is bounded, so a broken wrapper
/// fails a test instead of hanging it. Serialized: these tests block their thread in polls.
@Suite("libzmq wrapper", .serialized)
struct SocketTests {
    @Test func dealerAndRouterCarryMultipartMessagesWithEmptyAndLargeFrames() throws {
        let context = try ZMQContext()
        let router = try ZMQSocket(context, .router)
        try router.bind("tcp://127.0.0.1:*")
        let endpoint = try router.lastEndpoint()
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:"))
        #expect(!endpoint.hasSuffix(":*") && !endpoint.hasSuffix(":0"))
        let dealer = try ZMQSocket(context, .dealer)
        try dealer.connect(endpoint)

        let large = (0..<5_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 16) }
        let message: [[UInt8]] = [[], bytes("header"), [], large, [0]]
        #expect(try dealer.send(message))
        let received = try #require(try receive(router))
        #expect(received.count == message.count + 1)
        let identity = try #require(received.first)
        #expect(!identity.isEmpty)
        #expect(received.dropFirst().elementsEqual(message))

        let answer = Array(message.reversed())
        #expect(try router.send([identity] + answer))
        #expect(try receive(dealer) == answer)

        // A message of one empty frame is still a message.
        #expect(try dealer.send([[]]))
        #expect(try receive(router) == [identity, []])
    }

    @Test func requestSocketReachesRouterBehindAnEmptyDelimiter() throws {
        let context = try ZMQContext()
        let router = try ZMQSocket(context, .router)
        try router.bind(temporaryIPCEndpoint())
        let request = try ZMQSocket(context, .request)
        try request.connect(try router.lastEndpoint())

        #expect(try request.send([bytes("ping")]))
        let received = try #require(try receive(router))
        #expect(received.count == 3)
        #expect(received.count == 3 && received[1].isEmpty && text(received[2]) == "ping")
        #expect(try router.send([received[0], [], bytes("pong")]))
        #expect(try receive(request) == [bytes("pong")])

        // REQ strictly alternates: the next request goes out only after that reply.
        #expect(try request.send([bytes("again")]))
        #expect(try receive(router).map { text($0[2]) } == "again")
    }

    @Test func mandatoryRouterRefusesAnUnknownIdentityInsteadOfBlockingOrDropping() throws {
        let context = try ZMQContext()
        let router = try ZMQSocket(context, .router)
        try router.set(.routerMandatory, 1)
        try router.bind("tcp://127.0.0.1:*")
        let dealer = try ZMQSocket(context, .dealer)
        try dealer.connect(try router.lastEndpoint())
        #expect(try dealer.send([[], bytes("hello")]))
        let identity = try #require(try receive(router)?.first)

        // Refused at once rather than blocking (a blocking send would hang the test).
        #expect(try router.send([bytes("nobody"), [], bytes("lost")]) == false)
        #expect(try router.send([bytes("nobody"), [], bytes("lost")], wait: false) == false)

        // The known peer still gets its message, and nothing of the refused ones.
        #expect(try router.send([identity, [], bytes("for you")]))
        #expect(try receive(dealer) == [[], bytes("for you")])
        #expect(try receive(dealer, within: 100) == nil)

        // Once the peer is gone, its identity is refused too.
        _ = consume dealer
        var refused = false
        let deadline = ContinuousClock.now + .seconds(3)
        while !refused && ContinuousClock.now < deadline {
            refused = try router.send([identity, [], bytes("gone?")]) == false
            if !refused { usleep(5_000) }
        }
        #expect(refused)

        // Without the option libzmq drops the message and reports success: the reason for it.
        let plain = try ZMQSocket(context, .router)
        #expect(try plain.send([bytes("nobody"), [], bytes("dropped")]))
    }

    @Test func nonWaitingSendToAFullPeerReturnsFalse() throws {
        let context = try ZMQContext()
        let endpoint = "inproc://full-peer-\(UInt64.random(in: 0...UInt64.max))"
        let router = try ZMQSocket(context, .router)
        try router.set(.receiveHighWaterMark, 2)
        try router.bind(endpoint)
        let dealer = try ZMQSocket(context, .dealer)
        try dealer.set(.sendHighWaterMark, 2)
        try dealer.connect(endpoint)

        var accepted = 0
        while accepted < 10_000, try dealer.send([bytes("m\(accepted)")], wait: false) { accepted += 1 }
        #expect(accepted >= 2 && accepted < 100)
        #expect(try dealer.send([bytes("one more")], wait: false) == false)

        // Everything accepted arrives, in order, and nothing that was refused.
        var bodies: [String] = []
        while let message = try receive(router, within: 200) { bodies.append(text(message[1])) }
        #expect(bodies == (0..<accepted).map { "m\($0)" })

        // Once the peer has read, there is room again.
        #expect(try dealer.send([bytes("room again")], wait: false))
        #expect(try receive(router).map { text($0[1]) } == "room again")
    }

    @Test func oversizedSenderIsDisconnectedWhileTheRouterKeepsServingOthers() throws {
        let context = try ZMQContext()
        let router = try ZMQSocket(context, .router)
        try router.setMaximumMessageSize(1_000)
        try router.bind("tcp://127.0.0.1:*")
        let endpoint = try router.lastEndpoint()
        let polite = try ZMQSocket(context, .dealer)
        try polite.connect(endpoint)
        let oversized = try ZMQSocket(context, .dealer)
        try oversized.set(.reconnectInterval, 10)
        try oversized.connect(endpoint)

        #expect(try oversized.send([bytes("hello")]))
        let first = try #require(try receive(router))
        #expect(text(first[1]) == "hello")
        let oversizedIdentity = first[0]

        #expect(try oversized.send([[UInt8](repeating: 7, count: 5_000)]))
        #expect(try receive(router, within: 300) == nil)

        // The router serves another peer as before.
        #expect(try polite.send([bytes("still there?")]))
        let question = try #require(try receive(router))
        #expect(text(question[1]) == "still there?")
        #expect(try router.send([question[0], bytes("yes")]))
        #expect(try receive(polite) == [bytes("yes")])

        // The offender was disconnected: it reconnects as a new peer with a new identity.
        var comeback: [[UInt8]]?
        let deadline = ContinuousClock.now + .seconds(3)
        var attempt = 0
        while comeback == nil && ContinuousClock.now < deadline {
            attempt += 1
            #expect(try oversized.send([bytes("small \(attempt)")]))
            comeback = try receive(router, within: 50)
        }
        let message = try #require(comeback)
        #expect(text(message[1]).hasPrefix("small "))
        #expect(message[0] != oversizedIdentity)
    }

    @Test func pollWithATimeoutReportsNothingReady() throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(context, .dealer)
        try socket.bind("tcp://127.0.0.1:*")
        let pipe = try WakeUpPipe()
        let started = ContinuousClock.now
        #expect(try ZMQPoll.wait([socket.readable, pipe.readable], timeoutMilliseconds: 60) == [false, false])
        #expect(ContinuousClock.now - started >= .milliseconds(50))
        #expect(try ZMQPoll.wait([socket.readable, pipe.readable], timeoutMilliseconds: 0) == [false, false])
    }

    @Test func wakeUpPipeWakesAPollBlockedOnAnotherThreadsBehalf() throws {
        let pipe = try WakeUpPipe()
        let context = try ZMQContext()
        let socket = try ZMQSocket(context, .dealer)
        try socket.bind("tcp://127.0.0.1:*")
        let waker = OwnedThread(name: "waker") {
            usleep(50_000)
            pipe.wake()
        }
        // Woken by the pipe: a poll that timed out would report [false, false].
        #expect(try ZMQPoll.wait([socket.readable, pipe.readable], timeoutMilliseconds: 10_000) == [false, true])
        #expect(ended(waker))

        // Drained, it stays quiet; any number of wake-ups is one, and never blocks the waker.
        pipe.drain()
        #expect(try ZMQPoll.wait([pipe.readable], timeoutMilliseconds: 0) == [false])
        for _ in 0..<100_000 { pipe.wake() }
        #expect(try ZMQPoll.wait([pipe.readable], timeoutMilliseconds: 0) == [true])
        pipe.drain()
        #expect(try ZMQPoll.wait([pipe.readable], timeoutMilliseconds: 0) == [false])
    }

    @Test func shutdownEndsBlockedCallsOnOtherThreadsWithTerminated() throws {
        let context = try ZMQContext()
        let endpoint = "inproc://shutdown-\(UInt64.random(in: 0...UInt64.max))"
        let receiving = Latch()
        let receiveError = Box<ZMQError?>(nil)
        let receiver = OwnedThread(name: "blocked-receive") {
            do throws(ZMQError) {
                let socket = try ZMQSocket(context, .router)
                try socket.bind(endpoint)
                receiving.open()
                _ = try socket.receive()
            } catch {
                receiveError.value = error
            }
        }
        #expect(receiving.wait())
        let polling = Latch()
        let pollError = Box<ZMQError?>(nil)
        let poller = OwnedThread(name: "blocked-poll") {
            do throws(ZMQError) {
                let socket = try ZMQSocket(context, .dealer)
                try socket.connect(endpoint)
                polling.open()
                _ = try ZMQPoll.wait([socket.readable], timeoutMilliseconds: -1)
            } catch {
                pollError.value = error
            }
        }
        #expect(polling.wait())
        usleep(100_000)
        #expect(!receiver.isFinished && !poller.isFinished)

        context.shutdown()
        #expect(ended(receiver))
        #expect(ended(poller))
        #expect(receiveError.value?.isTerminated == true)
        #expect(pollError.value?.isTerminated == true)
        #expect(throws: ZMQError.self) { _ = try ZMQSocket(context, .dealer) }
        context.shutdown()
    }

    @Test func subscriberReceivesOnlyTopicsItsPrefixesMatch() throws {
        let context = try ZMQContext()
        let publisher = try ZMQSocket(context, .publisher)
        try publisher.bind(temporaryIPCEndpoint())
        let subscriber = try ZMQSocket(context, .subscriber)
        try subscriber.subscribe("products")
        try subscriber.subscribe("users")
        try subscriber.connect(try publisher.lastEndpoint())

        // The slow joiner: publish a probe until the subscription has reached the publisher.
        var joined = false
        for _ in 0..<300 where !joined {
            try publisher.send([bytes("users"), bytes("probe")])
            joined = try receive(subscriber, within: 10) != nil
        }
        #expect(joined)

        let published = [
            ("orders", "1"), ("products", "2"), ("posts", "3"), ("users", "4"), ("productsArchive", "5"),
            ("user", "6"), ("", "7"), ("users", "end"),
        ]
        for (topic, body) in published { #expect(try publisher.send([bytes(topic), bytes(body)])) }
        var seen: [String] = []
        while let message = try receive(subscriber) {
            guard message.count == 2, text(message[1]) != "probe" else { continue }
            seen.append("\(text(message[0])):\(text(message[1]))")
            if text(message[1]) == "end" { break }
        }
        #expect(seen == ["products:2", "users:4", "productsArchive:5", "users:end"])
    }

    @Test func immediateDealerSendsOnlyOverCompletedConnections() throws {
        let context = try ZMQContext()
        let down = temporaryIPCEndpoint()  // nobody binds it, unlike a released tcp port
        let dealer = try ZMQSocket(context, .dealer)
        try dealer.set(.immediate, 1)
        try dealer.connect(down)
        // Nothing listens there: the socket is not writable and refuses a message, queuing nothing.
        #expect(try ZMQPoll.ready([dealer.watched(for: [.readable, .writable])], timeoutMilliseconds: 50) == [[]])
        #expect(try dealer.send([[], bytes("refused")], wait: false) == false)

        let router = try ZMQSocket(context, .router)
        try router.bind("tcp://127.0.0.1:*")
        try dealer.connect(try router.lastEndpoint())
        #expect(try ZMQPoll.ready([dealer.watched(for: .writable)], timeoutMilliseconds: 3_000) == [.writable])
        // Every message goes to the one completed connection, none to the one still down.
        for index in 0..<4 { #expect(try dealer.send([[], bytes("m\(index)")], wait: false)) }
        for index in 0..<4 { #expect(try receive(router)?.last == bytes("m\(index)")) }
    }
}
