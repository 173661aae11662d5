import Foundation
import LogbookCommandLine

// At most two malloc arenas, set before any thread starts (`MallocArenas` says why; the
// worker raises it when it starts).
MallocArenas.apply(MallocArenas.standard)

// The composition root: everything is wired in `Logbook` and its commands.
let status = Logbook(environment: ProcessInfo.processInfo.environment).run(
    Array(CommandLine.arguments.dropFirst()))
exit(status.rawValue)
