import LogbookApplication
import LogbookDomain

/// How long a server loop has run, in whole seconds of the clock it was given, for `Status`.
struct Uptime {
    private let clock: any Clock
    private let startedAt: Int64

    /// Starts counting now.
    init(_ clock: any Clock) {
        self.clock = clock
        startedAt = clock.now().millisecondsSinceEpoch
    }

    var seconds: Int64 { (clock.now().millisecondsSinceEpoch - startedAt) / 1000 }
}
