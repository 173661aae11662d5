/// What the scale section measured with one number of workers on the shared PostgreSQL log:
/// the closed-loop run (commands, the workers' `Status` counts, processor time of every
/// process over the run, the head-row lock's samples) and the paced feed run after it.
struct ScaleStep: Sendable {
    var workers: Int
    var commands = 0
    var seconds = 0.0
    var rejected = 0
    var unanswered = 0
    /// Commands each worker answered (its `Status` before and after).
    var commandsPerWorker: [Int] = []
    /// Group commits of all workers together.
    var batches = 0
    /// Commands decided again after a conflict (`commands.decidedAgain`), all workers.
    var decidedAgain = 0
    var latencyP50Ms: Double?
    var latencyP99Ms: Double?
    /// Processor seconds used during the run: each worker, PostgreSQL's processes (the
    /// sampler's backend left out), the feed process, the bench's load clients.
    var workerCPU: [Double] = []
    var postgresCPU = 0.0
    var feedCPU = 0.0
    var loadCPU = 0.0
    /// The head-lock sampler's own backend (left out of `postgresCPU`).
    var samplerCPU = 0.0
    /// The span of time those were read over: the run, the clients' connecting before it
    /// and a moment after it for the feed to finish.
    var cpuSeconds = 0.0
    /// The share (0…1) of all the machine's processors busy during the run, whoever used them.
    var machineBusyShare: Double?
    var headLock: HeadLockSampler.Outcome?
    /// PostgreSQL's statements and its processes' processor time by kind over the run.
    var postgresProfile = PostgresProfile()
    /// The paced feed runs: at the asked rate, and at half the peak when that was beyond it.
    var feed: [FeedRun] = []

    struct FeedRun: Sendable {
        var offered: Double
        /// Nil when no event of a reply arrived on the feed.
        var delays: FeedDelays?
    }

    init(workers: Int) {
        self.workers = workers
    }

    var perSecond: Double { seconds > 0 ? Double(commands) / seconds : 0 }

    /// Processor seconds per command of each kind of process, and seconds under the head
    /// row's lock per command (the share of wall time it was held ÷ commands a second).
    var costs: CapacityModel.Costs {
        let count = Double(max(commands, 1))
        let serial = (headLock?.heldShare).map { perSecond > 0 ? $0 / perSecond : 0 } ?? 0
        return CapacityModel.Costs(
            worker: workerCPU.reduce(0, +) / count, postgres: postgresCPU / count, feed: feedCPU / count,
            load: loadCPU / count, serial: serial)
    }

    /// The share (0…1) of commands decided again.
    var decidedAgainShare: Double { commands > 0 ? Double(decidedAgain) / Double(commands) : 0 }

    /// The share of the machine's processors the measured processes used (0…1).
    func serviceShare(processors: Double) -> Double {
        guard cpuSeconds > 0, processors > 0 else { return 0 }
        return (workerCPU.reduce(0, +) + postgresCPU + feedCPU + loadCPU) / cpuSeconds / processors
    }
}
