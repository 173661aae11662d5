import LogbookCommandLine
import Testing

@testable import logbook

/// The real declarations of `logbook`'s commands: whatever a command accepts, its help
/// shows, and the overview lists every command.
@Suite("logbook's declarations: every accepted flag is in help, every command in the overview")
struct LogbookDeclarationTests {
    static let specs = Logbook.commands.map { $0.spec }

    @Test("every flag a command accepts appears in that command's help, with its placeholder")
    func everyFlagInHelp() {
        for spec in Self.specs {
            let help = CommandHelp.text(spec, program: "logbook")
            for option in spec.accepted {
                #expect(help.contains(option.synopsis), "logbook \(spec.name ?? "") --help lacks \(option.synopsis)")
                #expect(
                    squeezed(help).contains(squeezed(option.help)),
                    "logbook \(spec.name ?? "") --help lacks what \(option.flag) does")
            }
        }
    }

    @Test("subscribe's help lists --timeout-ms and --attempts, which it accepts")
    func subscribeClientOptions() throws {
        let help = CommandHelp.text(SubscribeCommand.spec, program: "logbook")
        #expect(help.contains("--timeout-ms N"))
        #expect(help.contains("--attempts N"))
        let arguments = try Arguments(["--timeout-ms", "200", "--attempts", "2"], for: SubscribeCommand.spec)
        #expect(try ClientPatience(arguments, following: true).timeoutMilliseconds == 200)
        #expect(try ClientPatience(arguments, following: true).attempts == 2)
    }

    @Test("subscribe follows until stopped unless --attempts bounds it, and its help says so")
    func subscribeFollowsByDefault() throws {
        let help = CommandHelp.text(SubscribeCommand.spec, program: "logbook")
        #expect(squeezed(help).contains(squeezed("never: wait for the worker and go on, like tail -f")))
        let arguments = try Arguments([], for: SubscribeCommand.spec)
        #expect(try ClientPatience(arguments, following: true).attempts == Int.max)
    }

    @Test("every command that talks to a process takes --timeout-ms and --attempts")
    func clientCommands() {
        for command in [SendCommand.spec, QueryCommand.spec, SubscribeCommand.spec, ReplayCommand.spec]
            + [RebuildCommand.spec, StatusCommand.spec]
        {
            let flags = Set(command.accepted.map(\.name))
            #expect(ClientPatience.options.allSatisfy { flags.contains($0.name) }, "\(command.name ?? "")")
        }
    }

    @Test("the overview lists every command under its own name, and every setting with its variable and default")
    func overview() throws {
        let overview = Logbook.overview
        for spec in Self.specs {
            let name = try #require(spec.name)
            #expect(!spec.listings.isEmpty, "\(name) is not listed")
            for listing in spec.listings {
                #expect(listing.label == name || listing.label.hasPrefix(name + " "), "\(listing.label)")
                #expect(overview.contains("\n  \(listing.label) "), "the overview lacks \(listing.label)")
                #expect(overview.contains(listing.summary))
            }
        }
        for setting in Configuration.settings {
            let row = overview.split(separator: "\n").first { $0.hasPrefix("  \(setting.synopsis) ") }
            let environment = try #require(setting.environment)
            #expect(row?.contains(environment) == true, "\(setting.flag)")
            // The CURVE settings have no default (absent: security off).
            if let defaultText = setting.defaultText { #expect(row?.contains(defaultText) == true, "\(setting.flag)") }
        }
        #expect(overview.contains("exit status: 0 ok, 1 error reply, 2 bad command line, 3 no reply"))
    }

    @Test("each command and alias names one command, and dispatch finds each by its name")
    func namesAreUnique() {
        let words = Self.specs.flatMap { [$0.name ?? ""] + $0.aliases }
        #expect(Set(words).count == words.count, "\(words)")
        for spec in Self.specs {
            #expect(Logbook.command(spec.name ?? "")?.spec.name == spec.name)
        }
        #expect(Logbook.command("--help")?.spec.name == "help")
        #expect(Logbook.command("-h")?.spec.name == "help")
        #expect(Logbook.command("--version")?.spec.name == "version")
        #expect(Logbook.command("frobnicate") == nil)
    }

    @Test("the settings keep their flags, variables and defaults")
    func settings() {
        let table = Configuration.settings.map { [$0.flag, $0.environment ?? "", $0.defaultText ?? ""] }
        #expect(
            table == [
                ["--data-dir", "LOGBOOK_DATA_DIR", "./.logbook"],
                ["--commands", "LOGBOOK_COMMANDS", "tcp://127.0.0.1:5555"],
                ["--feed", "LOGBOOK_FEED", "tcp://127.0.0.1:5556"],
                ["--queries", "LOGBOOK_QUERIES", "tcp://127.0.0.1:5557"],
                ["--log", "LOGBOOK_LOG", "tcp://127.0.0.1:5558"],
                ["--groups", "LOGBOOK_GROUPS", "tcp://127.0.0.1:5560"],
                ["--log-level", "LOGBOOK_LOG_LEVEL", "info"],
                ["--curve-secret", "LOGBOOK_CURVE_SECRET", ""],
                ["--clients", "LOGBOOK_CLIENTS", ""],
                ["--curve-key", "LOGBOOK_CURVE_KEY", ""],
                ["--server-key", "LOGBOOK_SERVER_KEY", ""],
            ])
    }

    @Test("the settings up hands its children name every setting")
    func childArguments() throws {
        let arguments = try Arguments(["--data-dir", "/d", "--log-level", "debug"], for: UpCommand.spec)
        let configuration = try Configuration(arguments: arguments, environment: ["LOGBOOK_FEED": "tcp://x:1"])
        let child = configuration.childArguments
        #expect(
            child == [
                "--data-dir", "/d", "--commands", "tcp://127.0.0.1:5555", "--feed", "tcp://x:1", "--queries",
                "tcp://127.0.0.1:5557", "--log", "tcp://127.0.0.1:5558", "--groups", "tcp://127.0.0.1:5560",
                "--log-level", "debug",
            ])
        // CURVE settings are handed on when given (`up` runs both children with them).
        let secured = try Configuration(
            arguments: try Arguments(["--curve-key", "/k_secret"], for: UpCommand.spec),
            environment: ["LOGBOOK_SERVER_KEY": "/server"])
        #expect(secured.childArguments.suffix(4) == ["--curve-key", "/k_secret", "--server-key", "/server"])
    }
}
