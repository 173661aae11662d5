import Testing

@testable import LogbookServer

/// The feed process's pacing and its hints as values: given what happened, when it reads
/// next and what it says.
@Suite("Feed process: pacing and hints")
struct FeedPacingTests {
    @Test("without hints it reads every poll interval")
    func polls() {
        var pacing = FeedPacing(pollMilliseconds: 200)
        #expect(pacing.nextWaitMilliseconds == 200)
        let recovered = pacing.read(reached: 10)
        #expect(!recovered)
        #expect(pacing.nextWaitMilliseconds == 200)
    }

    @Test("a hint the read did not reach yet (a replica behind) makes it read again soon, a bounded number of times")
    func behindAHint() {
        var pacing = FeedPacing(pollMilliseconds: 200)
        pacing.hint(12)
        _ = pacing.read(reached: 10)
        #expect(pacing.nextWaitMilliseconds == 20)
        for _ in 0..<pacing.eagerReads { _ = pacing.read(reached: 10) }
        #expect(pacing.nextWaitMilliseconds == 200, "a hint that is never reached falls back to the poll")
        pacing.hint(11)
        _ = pacing.read(reached: 10)
        #expect(pacing.nextWaitMilliseconds == 200, "an older hint changes nothing")
        pacing.hint(13)
        _ = pacing.read(reached: 13)
        #expect(pacing.nextWaitMilliseconds == 200, "a hint reached: back to the poll")
    }

    @Test("failed reads back off, doubling up to a bound; only the first failure and the recovery are news")
    func backOff() {
        var pacing = FeedPacing(pollMilliseconds: 200)
        let first = pacing.readFailed()
        #expect(first)
        #expect(pacing.nextWaitMilliseconds == 200)
        let second = pacing.readFailed()
        #expect(!second)
        #expect(pacing.nextWaitMilliseconds == 400)
        var news = 0
        for _ in 0..<40 where pacing.readFailed() { news += 1 }
        #expect(news == 0)
        #expect(pacing.nextWaitMilliseconds == pacing.maximumBackOffMilliseconds)
        let recovered = pacing.read(reached: 5)
        #expect(recovered, "the read after failures ends the streak")
        let again = pacing.read(reached: 5)
        #expect(!again)
        #expect(pacing.nextWaitMilliseconds == 200)
    }

    @Test("a hint is one frame holding a position in decimal; anything else is no hint")
    func hints() {
        #expect(CommitHint.frames(position: 42) == [Array("42".utf8)])
        #expect(CommitHint.position(of: CommitHint.frames(position: 9_000_000_000)) == 9_000_000_000)
        for frames in [
            [], [[]], [Array("4x".utf8)], [Array("-1".utf8)], [Array("1".utf8), []],
            [Array("99999999999999999999".utf8)],
        ] {
            #expect(CommitHint.position(of: frames) == nil, "\(frames)")
        }
    }
}
