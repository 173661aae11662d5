import LogbookZMQ
import Testing

@testable import LogbookServer

/// The projection thread wakes the query thread after an applied batch only when the query
/// thread has something to do with it: queries parked, or another generation.
@Suite("Query process: the query thread woken only when queries wait")
struct QueryWakeUpTests {
    private func isWoken(_ state: QueryProcessState) throws -> Bool {
        let ready = try ZMQPoll.wait([state.queryWake.readable], timeoutMilliseconds: 0)
        state.queryWake.drain()
        return ready == [true]
    }

    @Test("progress with no query parked wakes nobody; with one parked, another generation, or always, it does")
    func wakesOnlyWhenNeeded() throws {
        let state = try QueryProcessState()
        state.publishProgress { $0.applied = 5 }
        #expect(try !isWoken(state))
        #expect(state.read().applied == 5)

        let seen = state.queriesParked(1)
        #expect(seen.applied == 5)
        state.publishProgress { $0.applied = 6 }
        #expect(try isWoken(state))

        _ = state.queriesParked(0)
        state.publishProgress { $0.applied = 7 }
        #expect(try !isWoken(state))
        state.publishProgress { $0.generation = 1 }
        #expect(try isWoken(state))
        state.publishProgress(always: true) { $0.applied = 8 }
        #expect(try isWoken(state))
    }

    @Test("a query parked while a batch is applied either sees the new position or gets the wake-up")
    func noQueryLeftWaiting() async throws {
        // The two threads race many times; each round the query thread parks (says 1) and
        // reads the position, the projection thread publishes the next position.
        let state = try QueryProcessState()
        for round in 1...2_000 {
            let position = Int64(round)
            async let parkedSaw = Task.detached { state.queriesParked(1).applied }.value
            async let published: Void = Task.detached { state.publishProgress { $0.applied = position } }.value
            let (saw, _) = await (parkedSaw, published)
            let woken = try isWoken(state)
            #expect(saw == position || woken, "round \(round): parked at \(saw), no wake-up for \(position)")
            _ = state.queriesParked(0)
        }
    }
}
