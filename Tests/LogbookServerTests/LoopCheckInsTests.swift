import Testing

@testable import LogbookServer

/// The watchdog's rule as a value, with no socket and no clock: times are numbers. With a
/// watchdog interval of 1,000 ms a loop counts as alive for 500 ms after its check-in, pings
/// are at least 250 ms apart, and loops wait at most 250 ms between check-ins.
@Suite("LoopCheckIns: WATCHDOG=1 only while every serving loop checks in")
struct LoopCheckInsTests {
    static func twoLoops() -> (LoopCheckIns, commands: Int, reads: Int) {
        var rule = LoopCheckIns(watchdogMicroseconds: 1_000_000)
        let commands = rule.register("commands", now: 0)
        let reads = rule.register("log reads", now: 0)
        return (rule, commands, reads)
    }

    @Test("the intervals follow from the watchdog's")
    func intervals() {
        let rule = LoopCheckIns(watchdogMicroseconds: 30_000_000)
        #expect(rule.windowMilliseconds == 15_000)
        #expect(rule.spacingMilliseconds == 7_500)
        #expect(rule.checkInMilliseconds == 7_500)
    }

    @Test("no ping before ready, and none after stopping")
    func onlyWhileServing() {
        var (rule, commands, reads) = Self.twoLoops()
        #expect(rule.checkIn(commands, now: 100).ping == false)
        #expect(rule.checkIn(reads, now: 100).ping == false)
        rule.ready()
        #expect(rule.checkIn(commands, now: 200).ping == true)
        rule.stopping()
        #expect(rule.checkIn(commands, now: 1_000).ping == false)
        #expect(rule.checkIn(reads, now: 1_000).ping == false)
    }

    @Test("pings are spaced: a busy loop checking in often does not flood the supervisor")
    func spaced() {
        var (rule, commands, reads) = Self.twoLoops()
        rule.ready()
        #expect(rule.checkIn(commands, now: 10).ping == true)
        #expect(rule.checkIn(commands, now: 20).ping == false)
        #expect(rule.checkIn(reads, now: 200).ping == false)
        #expect(rule.checkIn(commands, now: 260).ping == true)
    }

    @Test("one loop silent past the window stops the pings, names it once, and they resume when it checks in")
    func wedgedLoopStopsPings() {
        var (rule, commands, reads) = Self.twoLoops()
        rule.ready()
        #expect(rule.checkIn(commands, now: 100).ping == true)
        // The command loop wedges after its check-in at 100; the log-read loop keeps going.
        #expect(rule.checkIn(reads, now: 400).ping == true)
        let first = rule.checkIn(reads, now: 700)
        #expect(first.ping == false)
        #expect(first.silent.map(\.name) == ["commands"])
        #expect(first.silent.first?.milliseconds == 600)
        for now in stride(from: Int64(950), through: 5_000, by: 250) {
            let outcome = rule.checkIn(reads, now: now)
            #expect(outcome.ping == false)
            #expect(outcome.silent.isEmpty, "reported once per silence")
        }
        let back = rule.checkIn(commands, now: 5_100)
        #expect(back.recovered?.name == "commands")
        #expect(back.recovered?.milliseconds == 5_000)
        #expect(back.ping == true)
    }

    @Test("before ready a slow loop is not reported (nothing may precede READY=1); after ready it is")
    func silenceBeforeReady() {
        var (rule, commands, _) = Self.twoLoops()
        // The log-read loop last checked in at 0: past the window at 700, but not ready yet.
        let early = rule.checkIn(commands, now: 700)
        #expect(early.silent.isEmpty)
        #expect(early.ping == false)
        rule.ready()
        let after = rule.checkIn(commands, now: 800)
        #expect(after.silent.map(\.name) == ["log reads"])
        #expect(after.ping == false)
    }

    @Test("after stopping, loops that wind down are not reported silent, nor back")
    func silenceAfterStopping() {
        var (rule, commands, reads) = Self.twoLoops()
        rule.ready()
        #expect(rule.checkIn(reads, now: 100).ping == true)
        #expect(rule.checkIn(reads, now: 700).silent.map(\.name) == ["commands"])
        rule.stopping()
        // The log-read loop has ended; the command loop drains its last replies.
        let draining = rule.checkIn(commands, now: 2_000)
        #expect(draining.silent.isEmpty)
        #expect(draining.recovered == nil)
        #expect(draining.ping == false)
    }

    @Test("a loop that registered late counts from its registration")
    func lateRegistration() {
        var (rule, commands, _) = Self.twoLoops()
        let zap = rule.register("ZAP handler", now: 900)
        rule.ready()
        // The log-read loop last checked in at 0: silent at 1,000.
        #expect(rule.checkIn(commands, now: 1_000).ping == false)
        #expect(rule.checkIn(zap, now: 1_000).silent.isEmpty)
    }
}
