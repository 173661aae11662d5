import CGlibcMalloc
import Foundation
import LogbookCommandLine

// At most two malloc arenas, set before any thread starts: glibc otherwise gives each
// thread that allocates at once an arena of its own, and memory freed in one is not reused
// by another, which cost the query process about 40 MB of peak RSS during a rebuild
// (BENCHMARKS.md, memory) at no measurable speed.
_ = mallopt(M_ARENA_MAX, 2)

// The composition root: everything is wired in `Logbook` and its commands.
let status = Logbook(environment: ProcessInfo.processInfo.environment).run(
    Array(CommandLine.arguments.dropFirst()))
exit(status.rawValue)
