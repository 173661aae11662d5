import LogbookApplication
import Testing

@testable import LogbookServer

/// The commit stage's rules, given/when/then, with no thread, lock or store: a batch is an
/// array of command names, an appended batch a string; each test plays the three threads'
/// turns in the order it states.
@Suite("CommitStageRules: the routes to a durable commit, failed syncs, hand-overs and stops")
struct CommitStageRulesTests {
    typealias Rules = CommitStageRules<[String], String>

    static let failure = EventStoreError.unavailable("cannot sync /x/events.sqlite3-wal: EIO", cause: .ioError)

    /// A batch of `count` commands named after `name`.
    static func batch(_ name: String, _ count: Int = 2) -> [String] {
        (1...count).map { "\(name)\($0)" }
    }

    static var small: Int { Rules.inlineFlushBelow - 1 }
    static var large: Int { Rules.inlineFlushBelow }

    /// Rules on a log with a flusher, whose loop may run batches inline unless told otherwise.
    static func flushing(inline: Bool = true) -> Rules { Rules(flushes: true, runsInline: inline) }

    /// The append thread takes the submitted batch and appends it as `name`: what comes next.
    static func appendThreadAppends(_ rules: inout Rules, as name: String) -> Rules.AfterAppend {
        guard case .append(let requests) = rules.takeSubmitted() else {
            Issue.record("the append thread was not given a batch to append")
            return .handedOn([])
        }
        return rules.appended(name, commands: requests.count)
    }

    // MARK: Without a flusher

    @Test("without a flusher, an appended batch is durable at once and goes to the loop, which is woken")
    func durableOnceAppended() {
        // Given rules on a log without a flusher
        var rules = Rules(flushes: false, runsInline: false)
        #expect(rules.isIdle && rules.acceptsBatch && !rules.appendThreadHasWork)
        // When the loop submits a batch
        #expect(rules.submit(Self.batch("a", Self.small)) == .waiters)
        // Then the append thread has work, the loop cannot hand over another nor join it, and
        // nothing runs inline
        #expect(rules.appendThreadHasWork && !rules.acceptsBatch && !rules.isIdle)
        let joined = rules.join(Self.batch("b"), upTo: 100)
        #expect(!joined, "only a stage that sends ahead joins batches")
        #expect(rules.claimInline(commands: 1) == false)
        // When the append thread appends it
        #expect(Self.appendThreadAppends(&rules, as: "a") == .handedOn([.waiters, .loop]))
        // Then the loop takes it back durable, once
        #expect(rules.allFinished)
        #expect(rules.takeDone() == [.durable("a")])
        #expect(rules.takeDone().isEmpty)
        #expect(rules.isIdle && rules.acceptsBatch)
    }

    @Test("sending ahead, a second batch is handed over while one is in flight and stays open until sent")
    func sendingAhead() {
        // Given rules on a log that sends appends ahead, with a batch in flight
        var rules = Rules(flushes: false, runsInline: false, sendsAhead: true)
        #expect(rules.holdsAtMost == 2)
        _ = rules.submit(Self.batch("a"))
        #expect(rules.takeSubmitted() == .append(Self.batch("a")))
        #expect(rules.takeSubmittedIfAny() == nil, "nothing submitted: the append thread waits for the answer")
        // When the loop submits the next batch, and more commands join it before it is taken
        #expect(rules.acceptsBatch)
        _ = rules.submit(Self.batch("b"))
        var joined = rules.join(Self.batch("c"), upTo: 4)
        #expect(joined)
        joined = rules.join(Self.batch("d"), upTo: 5)
        #expect(!joined, "five commands would be more than the limit")
        // Then the append thread takes them to decide while the first is in flight
        #expect(rules.takeSubmittedIfAny() == .append(Self.batch("b") + Self.batch("c")))
        #expect(!rules.acceptsBatch, "it holds two")
        // And commands read meanwhile join that open batch, up to the limit, and are taken into it
        joined = rules.join(Self.batch("d"), upTo: 6)
        #expect(joined)
        #expect(rules.takeSubmittedIfAny() == .append(Self.batch("d")))
        joined = rules.join(Self.batch("e", 1), upTo: 7)
        #expect(joined)
        joined = rules.join(Self.batch("f", 1), upTo: 7)
        #expect(!joined, "the open batch holds seven with those waiting to join it")
        // When the first lands, the open batch is closed: the last commands that joined are
        // decided into it, and nothing joins it after
        #expect(rules.appended("a", commands: 2) == .handedOn([.waiters, .loop]))
        #expect(rules.closeOpenBatch() == Self.batch("e", 1))
        joined = rules.join(Self.batch("f", 1), upTo: 100)
        #expect(!joined, "sent: nothing to join")
        #expect(rules.acceptsBatch, "one in flight, one done")
        #expect(rules.appended("b", commands: 7) == .handedOn([.waiters, .loop]))
        // Then both come back durable, in the order they were submitted
        #expect(rules.takeDone() == [.durable("a"), .durable("b")])
        #expect(rules.isIdle)
    }

    // MARK: Route 1, inline on the loop's thread

    @Test("a small batch on an idle stage runs inline: the handler is the loop's until it finished, durable")
    func inlineRoute() {
        // Given an idle stage on a log with a flusher and write turns
        var rules = Self.flushing()
        // When the loop claims a small batch
        #expect(rules.claimInline(commands: Self.small) == true)
        // Then the append thread is given nothing meanwhile
        #expect(!rules.acceptsBatch && !rules.appendThreadHasWork)
        #expect(rules.claimInline(commands: 1) == false, "a second inline batch beside the first")
        // When its sync returns
        let finished = rules.inlineFinished(syncFailure: nil)
        // Then it is durable, no thread is woken, and the stage is as it was
        #expect(finished.refusal == nil && finished.wakes == [])
        #expect(rules.isIdle && rules.acceptsBatch && rules.takeDone().isEmpty)
    }

    @Test("no batch runs inline that is empty or large, on a log without write turns, or beside a batch in the stage")
    func inlineDeclinedByTheRules() {
        // What the loop can tell from its own count of batches handed over
        #expect(Rules.mayRunInline(commands: Self.small, inFlight: 0))
        #expect(!Rules.mayRunInline(commands: 0, inFlight: 0), "an empty batch")
        #expect(!Rules.mayRunInline(commands: Self.large, inFlight: 0))
        #expect(!Rules.mayRunInline(commands: 1, inFlight: 1))
        var idle = Self.flushing()
        #expect(idle.claimInline(commands: Self.large) == false)
        var withoutTurns = Self.flushing(inline: false)
        #expect(withoutTurns.claimInline(commands: 1) == false)
        // A batch submitted, being appended, committed, being synced or done and not taken: declined each time.
        var rules = Self.flushing()
        _ = rules.submit(Self.batch("a", Self.large))
        #expect(rules.claimInline(commands: 1) == false, "a batch submitted")
        guard case .append = rules.takeSubmitted() else { return }
        #expect(rules.claimInline(commands: 1) == false, "a batch being appended")
        _ = rules.appended("a", commands: Self.large)
        #expect(rules.claimInline(commands: 1) == false, "a batch waiting for its sync")
        #expect(rules.takeCommitted() == .sync)
        #expect(rules.claimInline(commands: 1) == false, "a sync running")
        _ = rules.synced(failure: nil)
        #expect(rules.claimInline(commands: 1) == false, "a batch done and not taken")
        _ = rules.takeDone()
        #expect(rules.claimInline(commands: 1) == true)
    }

    @Test("a small batch synced by the append thread keeps the next inline batch waiting until its sync returned")
    func inlineWaitsForTheAppendThreadsSync() {
        var rules = Self.flushing()
        _ = rules.submit(Self.batch("a"))
        #expect(Self.appendThreadAppends(&rules, as: "a") == .syncHere)
        #expect(rules.claimInline(commands: 1) == false)
        _ = rules.synced(failure: nil)
        _ = rules.takeDone()
        #expect(rules.claimInline(commands: 1) == true)
    }

    @Test("an inline batch whose writer's lock is taken goes back to the stage: the handler is free again")
    func inlineDeclinedByTheLock() {
        // Given an inline claim
        var rules = Self.flushing()
        #expect(rules.claimInline(commands: 2) == true)
        // When the turn cannot be taken
        // Then no thread is woken, and the stage takes the batch
        #expect(rules.inlineDeclined() == [])
        #expect(rules.acceptsBatch)
        _ = rules.submit(Self.batch("a"))
        #expect(rules.takeSubmitted() == .append(Self.batch("a")))
    }

    @Test("a failed inline sync refuses its batch and is final: later batches are refused unappended")
    func failedInlineSync() {
        // Given an inline batch
        var rules = Self.flushing()
        #expect(rules.claimInline(commands: 2) == true)
        // When its sync fails
        let finished = rules.inlineFinished(syncFailure: Self.failure)
        // Then it is refused, the flush thread is woken to end, and nothing more runs inline
        #expect(finished.refusal == Self.failure && finished.wakes == .waiters)
        #expect(rules.flushThreadHasWork && rules.takeCommitted() == .end)
        #expect(rules.claimInline(commands: 1) == false)
        // And a batch submitted later is refused without being appended
        _ = rules.submit(Self.batch("b"))
        #expect(rules.takeSubmitted() == .refuse(Self.batch("b"), Self.failure))
        #expect(rules.appended("b refused", commands: 2) == .handedOn([.waiters, .loop]))
        #expect(rules.takeDone() == [.refused("b refused", Self.failure)])
    }

    // MARK: Route 2, synced by the append thread

    @Test("a small batch with nothing to overlap is synced by the append thread, while the loop may hand over the next")
    func appendThreadSyncs() {
        // Given a small batch submitted to an idle stage
        var rules = Self.flushing()
        _ = rules.submit(Self.batch("a", Self.small))
        // When the append thread appended it
        // Then it syncs it itself, nobody is woken, and the flush thread has nothing to do
        #expect(Self.appendThreadAppends(&rules, as: "a") == .syncHere)
        #expect(!rules.flushThreadHasWork)
        #expect(rules.takeDone().isEmpty)
        #expect(rules.acceptsBatch, "the loop may submit the next batch, taken once the sync returned")
        _ = rules.submit(Self.batch("b"))
        // When the sync returns
        #expect(rules.synced(failure: nil) == [.waiters, .loop])
        // Then the batch is durable, and the next batch is waiting for the append thread
        #expect(rules.takeDone() == [.durable("a")])
        #expect(rules.takeSubmitted() == .append(Self.batch("b")))
    }

    @Test("a small batch goes to the flush thread when a sync runs or a batch waits for one")
    func smallBatchWithSomethingToOverlap() {
        // Given a large batch being synced by the flush thread
        var rules = Self.flushing()
        _ = rules.submit(Self.batch("a", Self.large))
        _ = Self.appendThreadAppends(&rules, as: "a")
        #expect(rules.takeCommitted() == .sync)
        // When a small batch is appended meanwhile
        // Then it waits for the sync after it: one sync at a time
        _ = rules.submit(Self.batch("b"))
        #expect(Self.appendThreadAppends(&rules, as: "b") == .handedOn([.waiters, .loop]))
        #expect(!rules.flushThreadHasWork)
        _ = rules.synced(failure: nil)
        #expect(rules.flushThreadHasWork)
        // When another small batch is appended while that one waits
        // Then it joins the same sync
        _ = rules.submit(Self.batch("c"))
        #expect(Self.appendThreadAppends(&rules, as: "c") == .handedOn([.waiters, .loop]))
        #expect(rules.takeCommitted() == .sync)
        _ = rules.synced(failure: nil)
        #expect(rules.takeDone() == [.durable("a"), .durable("b"), .durable("c")])
    }

    @Test("a failed sync on the append thread refuses its batch and every later one, unappended")
    func failedAppendThreadSync() {
        var rules = Self.flushing()
        _ = rules.submit(Self.batch("a"))
        #expect(Self.appendThreadAppends(&rules, as: "a") == .syncHere)
        #expect(rules.synced(failure: Self.failure) == [.waiters, .loop])
        #expect(rules.takeDone() == [.refused("a", Self.failure)])
        #expect(rules.flushThreadHasWork && rules.takeCommitted() == .end)
        _ = rules.submit(Self.batch("b"))
        #expect(rules.takeSubmitted() == .refuse(Self.batch("b"), Self.failure))
    }

    // MARK: Route 3, synced by the flush thread

    @Test("a large batch is synced by the flush thread and comes back only after that sync")
    func flushThreadSyncs() {
        // Given a large batch appended
        var rules = Self.flushing()
        _ = rules.submit(Self.batch("a", Self.large))
        // Then the loop is woken (the append thread is free) and the flush thread has work
        #expect(Self.appendThreadAppends(&rules, as: "a") == .handedOn([.waiters, .loop]))
        #expect(rules.takeDone().isEmpty, "a batch comes back before its sync")
        #expect(rules.flushThreadHasWork)
        // When the flush thread takes it and syncs
        #expect(rules.takeCommitted() == .sync)
        #expect(!rules.flushThreadHasWork)
        #expect(rules.takeDone().isEmpty)
        #expect(rules.synced(failure: nil) == [.waiters, .loop])
        // Then it is durable
        #expect(rules.takeDone() == [.durable("a")])
        #expect(rules.isIdle)
    }

    @Test("batches appended while one sync runs share the next, and come back in the order they were submitted")
    func batchesShareASync() {
        var rules = Self.flushing()
        _ = rules.submit(Self.batch("a", Self.large))
        _ = Self.appendThreadAppends(&rules, as: "a")
        #expect(rules.takeCommitted() == .sync)
        for name in ["b", "c"] {
            _ = rules.submit(Self.batch(name))
            #expect(Self.appendThreadAppends(&rules, as: name) == .handedOn([.waiters, .loop]))
        }
        #expect(!rules.acceptsBatch, "three batches in the stage")
        _ = rules.synced(failure: nil)
        #expect(rules.takeDone() == [.durable("a")])
        #expect(rules.acceptsBatch)
        #expect(rules.takeCommitted() == .sync, "one sync for both")
        _ = rules.synced(failure: nil)
        #expect(rules.takeDone() == [.durable("b"), .durable("c")])
    }

    @Test("a failed sync refuses the batches it covered and those appended meanwhile; the flush thread ends")
    func failedFlushThreadSync() {
        // Given a batch being synced, one waiting for the next sync, and one being appended
        var rules = Self.flushing()
        _ = rules.submit(Self.batch("a", Self.large))
        _ = Self.appendThreadAppends(&rules, as: "a")
        #expect(rules.takeCommitted() == .sync)
        _ = rules.submit(Self.batch("b", Self.large))
        _ = Self.appendThreadAppends(&rules, as: "b")
        _ = rules.submit(Self.batch("c"))
        guard case .append = rules.takeSubmitted() else { return }
        // When the sync fails
        #expect(rules.synced(failure: Self.failure) == [.waiters, .loop])
        // Then the two appended are refused, and the flush thread ends
        #expect(rules.takeDone() == [.refused("a", Self.failure), .refused("b", Self.failure)])
        #expect(rules.failure == Self.failure)
        #expect(rules.flushThreadHasWork && rules.takeCommitted() == .end)
        // And the batch appended meanwhile is refused, not left waiting for a sync
        #expect(rules.appended("c", commands: 2) == .handedOn([.waiters, .loop]))
        #expect(rules.takeDone() == [.refused("c", Self.failure)])
        #expect(rules.isIdle)
    }

    // MARK: Hand-overs

    @Test("at most three batches are in the stage: the loop hands over no fourth until it took one back")
    func boundedInFlight() {
        var rules = Self.flushing()
        for name in ["a", "b", "c"] {
            #expect(rules.acceptsBatch)
            _ = rules.submit(Self.batch(name, Self.large))
            _ = Self.appendThreadAppends(&rules, as: name)
        }
        #expect(rules.inFlight == Rules.maximumInFlight)
        #expect(!rules.acceptsBatch, "a free append thread, but the stage is full")
        #expect(rules.takeCommitted() == .sync)
        _ = rules.synced(failure: nil)
        #expect(!rules.acceptsBatch, "done but not taken back still counts")
        #expect(rules.takeDone().count == 3)
        #expect(rules.acceptsBatch)
    }

    // MARK: Stopping

    @Test("a stop lets the submitted batch be appended and synced, and ends each thread only then")
    func stopFinishesTheBatchInHand() {
        // Given a large batch submitted
        var rules = Self.flushing()
        _ = rules.submit(Self.batch("a", Self.large))
        // When the loop stops the stage
        #expect(rules.stop() == .waiters)
        #expect(rules.claimInline(commands: 1) == false)
        // Then the append thread still takes the batch, and the flush thread waits for it
        #expect(!rules.flushThreadHasWork)
        #expect(Self.appendThreadAppends(&rules, as: "a") == .handedOn([.waiters, .loop]))
        #expect(rules.appendThreadHasWork && rules.takeSubmitted() == .end)
        #expect(rules.takeCommitted() == .sync)
        #expect(!rules.flushThreadHasWork, "ended while a sync runs")
        #expect(!rules.allFinished)
        _ = rules.synced(failure: nil)
        // And the flush thread ends once nothing is left; the loop finds the batch done
        #expect(rules.flushThreadHasWork && rules.takeCommitted() == .end)
        #expect(rules.allFinished)
        #expect(rules.takeDone() == [.durable("a")])
    }

    @Test("a stop while the append thread syncs a batch of its own ends the flush thread only after that sync")
    func stopDuringTheAppendThreadsSync() {
        var rules = Self.flushing()
        _ = rules.submit(Self.batch("a"))
        #expect(Self.appendThreadAppends(&rules, as: "a") == .syncHere)
        _ = rules.stop()
        #expect(!rules.flushThreadHasWork)
        _ = rules.synced(failure: nil)
        #expect(rules.takeCommitted() == .end)
        #expect(rules.takeSubmitted() == .end)
        #expect(rules.takeDone() == [.durable("a")])
    }

    @Test("a stop while a batch runs inline wakes the flush thread once the handler is free again")
    func stopDuringAnInlineBatch() {
        var rules = Self.flushing()
        #expect(rules.claimInline(commands: 1) == true)
        _ = rules.stop()
        #expect(!rules.flushThreadHasWork, "the inline batch may still need the stage")
        #expect(rules.inlineDeclined() == .waiters)
        #expect(rules.takeCommitted() == .end)

        var finishing = Self.flushing()
        #expect(finishing.claimInline(commands: 1) == true)
        _ = finishing.stop()
        #expect(finishing.inlineFinished(syncFailure: nil).wakes == .waiters)
        #expect(finishing.flushThreadHasWork)
    }

    @Test("an idle stage's threads end at once on a stop; without a flusher only the append thread has one")
    func stopIdle() {
        var rules = Self.flushing()
        #expect(!rules.appendThreadHasWork && !rules.flushThreadHasWork)
        _ = rules.stop()
        #expect(rules.takeSubmitted() == .end)
        #expect(rules.takeCommitted() == .end)
        #expect(rules.allFinished && rules.takeDone().isEmpty)

        var durable = Rules(flushes: false, runsInline: false)
        _ = durable.submit(Self.batch("a"))
        _ = durable.stop()
        #expect(Self.appendThreadAppends(&durable, as: "a") == .handedOn([.waiters, .loop]))
        #expect(durable.takeSubmitted() == .end)
        #expect(durable.takeDone() == [.durable("a")])
    }
}
