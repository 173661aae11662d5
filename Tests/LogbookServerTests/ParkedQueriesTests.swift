import LogbookApplication
import LogbookWire
import Testing

@testable import LogbookServer

/// The parking rules of the query thread, given/when/then, with no socket and no clock:
/// routes are strings, times are numbers.
@Suite("ParkedQueries: queries waiting for a position")
struct ParkedQueriesTests {
    typealias Parked = ParkedQueries<String>

    static func query(_ id: String, minPosition: Int64, timeoutMs: Int = 1_000) -> QueryRequest {
        QueryRequest(
            id: id, query: .listUsers(.first), minPosition: minPosition,
            timeoutMilliseconds: timeoutMs)
    }

    @Test("a query whose position is reached on the snapshot's generation is answered at once, parking nothing")
    func reachedIsAnsweredNow() {
        var parked = Parked()
        let arrival = parked.arrive(Self.query("q1", minPosition: 5), route: "a", applied: 5, readable: true, now: 0)
        #expect(arrival == .answerNow)
        #expect(parked.count == 0)
        #expect(parked.pollTimeout(now: 0) == -1)
    }

    @Test("a reached position is not answered from a reader still on another generation: it parks")
    func reachedButUnreadableParks() {
        var parked = Parked()
        let arrival = parked.arrive(Self.query("q1", minPosition: 5), route: "a", applied: 9, readable: false, now: 0)
        #expect(arrival == .park(nudge: true))
        #expect(parked.count == 1)
        // Once the reader is on the generation, the turn's end answers it.
        #expect(parked.due(applied: 9, readable: true, now: 1) == [.answer("a", Self.query("q1", minPosition: 5))])
    }

    @Test("queries beyond the applied position park; the projection thread is nudged once per applied position")
    func parksAndNudgesOncePerPosition() {
        var parked = Parked()
        #expect(
            parked.arrive(Self.query("q1", minPosition: 7), route: "a", applied: 3, readable: true, now: 0)
                == .park(nudge: true))
        #expect(
            parked.arrive(Self.query("q2", minPosition: 8), route: "b", applied: 3, readable: true, now: 0)
                == .park(nudge: false))
        // The turn ends with nothing new: no second nudge at 3.
        #expect(parked.due(applied: 3, readable: true, now: 1).isEmpty)
        // The feed moved the read models, not far enough: a log read is asked for at 5, once.
        #expect(parked.due(applied: 5, readable: true, now: 2) == [.nudge])
        #expect(parked.due(applied: 5, readable: true, now: 3).isEmpty)
        #expect(
            parked.arrive(Self.query("q3", minPosition: 9), route: "c", applied: 5, readable: true, now: 3)
                == .park(nudge: false))
        #expect(
            parked.arrive(Self.query("q4", minPosition: 9), route: "d", applied: 6, readable: true, now: 3)
                == .park(nudge: true))
        #expect(parked.count == 4)
    }

    @Test("when the position arrives, the waiting queries it covers are answered once each, in arrival order")
    func answeredWhenPositionArrives() {
        var parked = Parked()
        let q1 = Self.query("q1", minPosition: 6)
        let q2 = Self.query("q2", minPosition: 9)
        let q3 = Self.query("q3", minPosition: 4)
        for (query, route) in [(q1, "a"), (q2, "b"), (q3, "c")] {
            _ = parked.arrive(query, route: route, applied: 2, readable: true, now: 0)
        }
        #expect(parked.due(applied: 6, readable: true, now: 10) == [.answer("a", q1), .answer("c", q3), .nudge])
        #expect(parked.count == 1)
        #expect(parked.due(applied: 6, readable: true, now: 11).isEmpty)
        #expect(parked.due(applied: 9, readable: true, now: 12) == [.answer("b", q2)])
        #expect(parked.count == 0)
        #expect(parked.due(applied: 9, readable: true, now: 13).isEmpty)
    }

    @Test("while the reader is on another generation, nothing is answered, even at the position")
    func notAnsweredFromAnotherGeneration() {
        var parked = Parked()
        let q1 = Self.query("q1", minPosition: 4)
        _ = parked.arrive(q1, route: "a", applied: 2, readable: true, now: 0)
        #expect(parked.due(applied: 4, readable: false, now: 1) == [.nudge])
        #expect(parked.count == 1)
        #expect(parked.due(applied: 4, readable: true, now: 2) == [.answer("a", q1)])
    }

    @Test("a query still waiting at its deadline times out with the timeout error naming both positions")
    func timesOutAtDeadline() {
        var parked = Parked()
        let late = Self.query("q1", minPosition: 50, timeoutMs: 300)
        let patient = Self.query("q2", minPosition: 50, timeoutMs: 5_000)
        _ = parked.arrive(late, route: "a", applied: 10, readable: true, now: 1_000)
        _ = parked.arrive(patient, route: "b", applied: 10, readable: true, now: 1_100)
        #expect(parked.nextDeadline == 1_300)
        #expect(parked.pollTimeout(now: 1_200) == 100)
        #expect(parked.due(applied: 12, readable: true, now: 1_299) == [.nudge])
        let actions = parked.due(applied: 12, readable: true, now: 1_300)
        #expect(actions == [.timeOut("a", late, late.timedOut(at: 12))])
        guard case .timeOut(_, _, let error) = actions.first else { return }
        #expect(error.code == .timeout)
        #expect(error.message == "the read models reached position 12, not 50, within 300 ms")
        #expect(parked.count == 1)
        #expect(parked.nextDeadline == 6_100)
    }

    @Test("a query whose position arrives in the turn its deadline passes is answered, not timed out")
    func answerBeatsDeadline() {
        var parked = Parked()
        let query = Self.query("q1", minPosition: 5, timeoutMs: 100)
        _ = parked.arrive(query, route: "a", applied: 1, readable: true, now: 0)
        #expect(parked.due(applied: 5, readable: true, now: 500) == [.answer("a", query)])
    }

    @Test("the poll timeout is forever with nothing waiting, the time to the earliest deadline, 0 once it passed")
    func pollTimeout() {
        var parked = Parked()
        #expect(parked.nextDeadline == nil)
        #expect(parked.pollTimeout(now: 0) == -1)
        _ = parked.arrive(
            Self.query("q1", minPosition: 9, timeoutMs: 700), route: "a", applied: 0, readable: true, now: 0)
        _ = parked.arrive(
            Self.query("q2", minPosition: 9, timeoutMs: 200), route: "b", applied: 0, readable: true, now: 0)
        #expect(parked.pollTimeout(now: 50) == 150)
        #expect(parked.pollTimeout(now: 250) == 0)
    }

    @Test("past the limit of waiting queries, a query is refused unavailable; answering frees a place")
    func refusedPastTheLimit() {
        var parked = Parked()
        for index in 0..<Parked.maximum {
            _ = parked.arrive(
                Self.query("q\(index)", minPosition: 9), route: "r\(index)", applied: 0, readable: true, now: 0)
        }
        #expect(parked.count == 10_000)
        let refused = parked.arrive(Self.query("extra", minPosition: 9), route: "x", applied: 0, readable: true, now: 0)
        #expect(
            refused
                == .refuse(
                    ServiceError(.unavailable, "10000 queries are already waiting for positions; try again later")))
        // A query that can be answered at once is never refused.
        #expect(
            parked.arrive(Self.query("now", minPosition: 0), route: "n", applied: 0, readable: true, now: 0)
                == .answerNow)
        #expect(parked.due(applied: 9, readable: true, now: 1).count == 10_000)
        #expect(
            parked.arrive(Self.query("later", minPosition: 10), route: "l", applied: 9, readable: true, now: 1)
                == .park(nudge: true))
    }
}
