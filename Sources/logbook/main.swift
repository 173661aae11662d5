import Foundation

// The composition root: everything is wired in `Logbook` and its commands.
let status = LogbookCommandLine(environment: ProcessInfo.processInfo.environment).run(
    Array(CommandLine.arguments.dropFirst()))
exit(status.rawValue)
