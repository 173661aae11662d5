import LogbookClient
import LogbookCommandLine
import LogbookZMQ
import Testing

@testable import logbook

/// `--commands` / `LOGBOOK_COMMANDS` as `Configuration` reads it: one endpoint or a
/// comma-separated list for client commands; a worker (and `up`, which runs one) binds one.
@Suite("the commands setting: one endpoint, or a list for clients")
struct CommandsSettingTests {
    static func configuration(_ words: [String], environment: [String: String] = [:]) throws(CLIError)
        -> Configuration
    {
        try Configuration(arguments: try Arguments(words, for: SendCommand.spec), environment: environment)
    }

    @Test func theDefaultIsTheOneLocalWorker() throws {
        let configuration = try Self.configuration([])
        #expect(configuration.endpoints.commands.endpoints == ["tcp://127.0.0.1:5555"])
        #expect(try configuration.workerEndpoints() == ServiceEndpoints.defaults)
        #expect(configuration.queryEndpoints == ServiceEndpoints.defaults)
    }

    @Test func aListComesFromTheFlagOrTheEnvironmentAndTheFlagWins() throws {
        let fromEnvironment = try Self.configuration(
            [], environment: ["LOGBOOK_COMMANDS": "tcp://10.0.0.1:5555, tcp://10.0.0.2:5555"])
        #expect(fromEnvironment.endpoints.commands.endpoints == ["tcp://10.0.0.1:5555", "tcp://10.0.0.2:5555"])
        let fromFlag = try Self.configuration(
            ["--commands", "tcp://a:1,tcp://b:2,tcp://c:3"], environment: ["LOGBOOK_COMMANDS": "tcp://10.0.0.1:5555"])
        #expect(fromFlag.endpoints.commands.endpoints == ["tcp://a:1", "tcp://b:2", "tcp://c:3"])
        let one = try Self.configuration(["--commands", "tcp://a:1"], environment: ["LOGBOOK_COMMANDS": "tcp://x:1,y"])
        #expect(try one.workerEndpoints().commands == "tcp://a:1")
        // up hands the setting to its worker as it was given.
        #expect(fromFlag.childArguments.contains("tcp://a:1,tcp://b:2,tcp://c:3"))
    }

    @Test func aWorkerRefusesAListWithAUsageErrorAndTheQueryProcessIgnoresIt() throws {
        let configuration = try Self.configuration(["--commands", "tcp://a:1,tcp://b:2"])
        do {
            _ = try configuration.workerEndpoints()
            Issue.record("a list was accepted for a worker")
        } catch {
            #expect(error.status == .usage)
            #expect(error.message.contains("--commands lists 2 endpoints (tcp://a:1,tcp://b:2)"), "\(error.message)")
            #expect(error.message.contains("a worker binds one"), "\(error.message)")
        }
        #expect(configuration.queryEndpoints.queries == ServiceEndpoints.defaults.queries)
    }

    @Test(
        "a list with an empty entry or a repeat is a usage error naming the setting",
        arguments: ["", "tcp://a:1,,tcp://b:2", "tcp://a:1,", "tcp://a:1,tcp://a:1"])
    func badLists(text: String) {
        do {
            _ = try Self.configuration(["--commands", text])
            Issue.record("'\(text)' was accepted")
        } catch {
            #expect(error.status == .usage)
            #expect(error.message.hasPrefix("--commands '\(text)': "), "\(error.message)")
        }
    }

    @Test func helpSaysClientsMayListSeveralWorkers() {
        let help = CommandHelp.text(SendCommand.spec, program: "logbook")
        #expect(squeezed(help).contains("client commands may list several workers, comma-separated"))
    }
}
