import LogbookBench
import LogbookCommandLine
import Testing

@testable import logbook_bench

/// The real declaration of `logbook-bench`: every flag it accepts is in its help, with the
/// defaults the bench really runs with.
@Suite("logbook-bench's declaration: every accepted flag is in help, with the real defaults")
struct BenchDeclarationTests {
    @Test("every flag logbook-bench accepts appears in its help, with its placeholder and what it does")
    func everyFlagInHelp() {
        let help = CommandHelp.text(BenchCommand.spec, program: BenchCommand.program)
        #expect(help.hasPrefix("usage: logbook-bench [options]\n"))
        for option in BenchCommand.spec.accepted {
            #expect(help.contains(option.synopsis), "logbook-bench --help lacks \(option.synopsis)")
            #expect(
                squeezed(help).contains(squeezed(option.help)), "logbook-bench --help lacks what \(option.flag) does")
        }
        for section in BenchOptions.Section.allCases {
            #expect(help.contains("\n  \(section.rawValue) "), "the help does not describe \(section)")
        }
    }

    @Test("the defaults help shows are the ones the bench runs with")
    func defaults() {
        #expect(BenchCommand.seconds.defaultText == "5; quick 1")
        #expect(BenchCommand.events.defaultText == "1000000; quick 20000")
        #expect(BenchCommand.clients.defaultText == "1,8,64")
        #expect(BenchCommand.window.defaultText == "16")
        #expect(BenchCommand.out.defaultText == "bench-results.json")
    }

    @Test("the bench takes its own --data-dir and --logbook, and none of logbook's endpoint settings")
    func ownOptions() throws {
        let accepted = BenchCommand.spec.accepted.map(\.name)
        #expect(accepted.contains("data-dir") && accepted.contains("logbook"))
        for name in ["commands", "feed", "queries", "log"] {
            #expect(!accepted.contains(name))
            #expect(throws: CLIError.self) { try Arguments(["--\(name)", "x"], for: BenchCommand.spec) }
        }
    }
}
