import LogbookCommandLine
import Testing

/// Parsing against a declaration: values, `--x=y`, switches, positionals, and every way a
/// command line can be wrong.
@Suite("Arguments: a command line parsed against its declared flags")
struct ArgumentsTests {
    static let from = OptionSpec.option("from", "N", "the first position")
    static let out = OptionSpec.option("out", "FILE", "where to write")
    static let quick = OptionSpec.flag("quick", "small sizes")
    static let dir = OptionSpec.option("data-dir", "DIR", "the files", default: "./.x", environment: "X_DATA_DIR")
    static let declared = [from, out, quick, dir, .help]

    static func parse(_ words: [String]) throws(CLIError) -> Arguments {
        try Arguments(words, accepting: declared)
    }

    static func usageMessage(_ words: [String]) -> String? {
        do {
            _ = try parse(words)
            return nil
        } catch {
            return error.status == .usage ? error.message : "status \(error.status)"
        }
    }

    @Test("values follow their flag, or come after = in the same word")
    func values() throws {
        let arguments = try Self.parse(["--from", "7", "--out=a=b.json"])
        #expect(arguments.value(Self.from) == "7")
        #expect(arguments.value(Self.out) == "a=b.json")
        #expect(arguments.value(Self.dir) == nil)
        #expect(arguments.positionals.isEmpty)
    }

    @Test("an empty value after = is a value")
    func emptyValue() throws {
        #expect(try Self.parse(["--out="]).value(Self.out) == "")
    }

    @Test("a flag given twice keeps its last value")
    func lastWins() throws {
        #expect(try Self.parse(["--from", "1", "--from", "2"]).value(Self.from) == "2")
    }

    @Test("a switch is set by its name alone and takes the next word as a positional")
    func switches() throws {
        let arguments = try Self.parse(["--quick", "word"])
        #expect(arguments.isSet(Self.quick))
        #expect(!arguments.isSet(.help))
        #expect(arguments.positionals == ["word"])
        #expect(!(try Self.parse([])).isSet(Self.quick))
    }

    @Test("positionals keep their order around flags; -, -x and a lone -- are words")
    func positionals() throws {
        let arguments = try Self.parse(["a", "--from", "3", "-", "-x", "--", "b"])
        #expect(arguments.positionals == ["a", "-", "-x", "--", "b"])
        #expect(arguments.value(Self.from) == "3")
    }

    @Test("the word after a flag that takes a value is its value, even when it looks like a flag")
    func valueLikeAFlag() throws {
        #expect(try Self.parse(["--out", "--quick"]).value(Self.out) == "--quick")
    }

    @Test(
        "a wrong command line is refused with a message naming the flag",
        arguments: [
            (["--bogus"], "unknown option --bogus"),
            (["--bogus=1"], "unknown option --bogus"),
            (["--Out", "x"], "unknown option --Out"),
            (["--from"], "--from needs a value"),
            (["x", "--out"], "--out needs a value"),
            (["--quick=yes"], "--quick takes no value"),
        ])
    func refused(words: [String], message: String) {
        #expect(Self.usageMessage(words) == message)
    }

    @Test("integers are checked against their range, and absent ones are nil")
    func integers() throws {
        #expect(try Self.parse(["--from", "5"]).integer(Self.from, in: 1...10) == 5)
        #expect(try Self.parse(["--from=10"]).integer(Self.from, in: 1...10) == 10)
        #expect(try Self.parse([]).integer(Self.from, in: 1...10) == nil)
        for text in ["0", "11", "-1", "five", "", "2.5", " 3"] {
            let arguments = try Self.parse(["--from", text])
            #expect(throws: CLIError.self, "\(text)") { try arguments.integer(Self.from, in: 1...10) }
            do {
                _ = try arguments.integer(Self.from, in: 1...10)
            } catch {
                #expect(error.status == .usage)
                #expect(error.message == "--from must be a whole number from 1 to 10")
            }
        }
    }

    @Test("a setting is the flag, else its environment variable, else its default")
    func settings() throws {
        let environment = ["X_DATA_DIR": "/from/env"]
        #expect(try Self.parse(["--data-dir", "/flag"]).setting(Self.dir, environment: environment) == "/flag")
        #expect(try Self.parse([]).setting(Self.dir, environment: environment) == "/from/env")
        #expect(try Self.parse([]).setting(Self.dir, environment: [:]) == "./.x")
        #expect(try Self.parse([]).setting(Self.from, environment: environment) == nil)
    }

    @Test("parsing for a command takes its options, its settings and --help, and nothing else")
    func forCommand() throws {
        let spec = CommandSpec(
            name: "copy", usage: "[options]", description: "Copies.", options: [Self.from], settings: [Self.dir])
        #expect(spec.accepted.map(\.name) == ["from", "data-dir", "help"])
        let arguments = try Arguments(["--from", "1", "--data-dir", "d", "--help"], for: spec)
        #expect(arguments.isSet(.help))
        #expect(throws: CLIError.self) { try Arguments(["--quick"], for: spec) }
    }
}
