import Testing

@testable import LogbookServer

/// The `Rebuild` rule of the query thread, given/when/then, with no socket.
@Suite("RebuildRequests: one rebuild at a time, once per request id")
struct RebuildRequestsTests {
    @Test("a Rebuild with no rebuild under way starts one")
    func startsWhenIdle() {
        var requests = RebuildRequests()
        #expect(requests.arrive(id: "r1", underWay: false) == .start)
    }

    @Test("while one is under way, another request joins it and starts nothing")
    func joinsWhileUnderWay() {
        var requests = RebuildRequests()
        #expect(requests.arrive(id: "r1", underWay: false) == .start)
        #expect(requests.arrive(id: "r2", underWay: true) == .join)
        // r2 started nothing, so it is not remembered: sent again once idle, it starts one.
        #expect(requests.arrive(id: "r2", underWay: false) == .start)
    }

    @Test("a retry of a request that started a rebuild joins it, even once the rebuild is over")
    func retryJoins() {
        var requests = RebuildRequests()
        #expect(requests.arrive(id: "r1", underWay: false) == .start)
        #expect(requests.arrive(id: "r1", underWay: true) == .join)
        #expect(requests.arrive(id: "r1", underWay: false) == .join)
    }

    @Test("the ids of the last 64 requests that started a rebuild are remembered, older ones forgotten")
    func remembersTheLast64() {
        var requests = RebuildRequests()
        for index in 0...RebuildRequests.remembered {
            #expect(requests.arrive(id: "r\(index)", underWay: false) == .start)
        }
        // 65 started: r0 is forgotten, r1 (the oldest of the last 64) is still known.
        #expect(requests.arrive(id: "r1", underWay: false) == .join)
        #expect(requests.arrive(id: "r0", underWay: false) == .start)
        // Remembering r0 again pushed r1 out.
        #expect(requests.arrive(id: "r1", underWay: false) == .start)
    }
}
