import CGlibcMalloc
import Foundation
import LogbookCommandLine

// At most two malloc arenas, as `logbook` sets for itself: the bench once ran inside
// `logbook` with this setting, so its load clients keep it and its figures stay comparable.
_ = mallopt(M_ARENA_MAX, 2)

// `logbook-bench [options]`: one command, declared in `BenchCommand.spec`.
let output = StandardStreams(program: BenchCommand.program)
let status = CommandRunner(program: BenchCommand.program, output: output).run(
    BenchCommand.spec, Array(CommandLine.arguments.dropFirst())
) { arguments throws(CLIError) in
    try BenchCommand(arguments: arguments, output: output).run()
}
exit(status.rawValue)
