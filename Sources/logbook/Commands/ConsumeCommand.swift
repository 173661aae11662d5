import Foundation
import LogbookClient
import LogbookCommandLine
import LogbookFeed
import LogbookJSON
import LogbookZMQ

/// `logbook consume GROUP [--exec CMD] [--limit N]`: a member of a consumer group. Without
/// `--exec` it prints each delivered event as a JSON line (its envelope) and acknowledges it
/// once written; with `--exec` it runs CMD (through `/bin/sh -c`) once per event, the
/// envelope on its stdin and `LOGBOOK_GROUP`, `LOGBOOK_POSITION`, `LOGBOOK_ATTEMPT` in its
/// environment, and acknowledges on exit status 0, nacks otherwise. It joins again by itself
/// when the groups process restarts, and leaves on SIGINT, SIGTERM or after `--limit` events.
struct ConsumeCommand: ConfiguredCommand {
    static let exec = OptionSpec.option(
        "exec", "CMD", "run CMD once per event (envelope on stdin); ack on exit status 0, nack otherwise")
    static let limit = OptionSpec.option("limit", "N", "leave the group after handling N events")
    static let maxInFlight = OptionSpec.option(
        "max-in-flight", "N",
        "hold at most N deliveries at once (at most the group's maxInFlight); default 1 with --exec, "
            + "else the group's")

    static let spec = CommandSpec(
        name: "consume", usage: "GROUP [--exec CMD] [options]",
        listings: [.init("consume GROUP", "take a share of a consumer group's events; ack each once handled")],
        section: .clientCommands,
        description: """
            Joins consumer group GROUP on the groups process (--groups) and handles what it is
            given, at least once, each stream's events in order. Without --exec it prints each
            event as a JSON line (its envelope) and acknowledges it once written. With --exec CMD
            it runs /bin/sh -c CMD once per event with the envelope on stdin and LOGBOOK_GROUP,
            LOGBOOK_POSITION and LOGBOOK_ATTEMPT (1 for the first delivery) in its environment:
            exit status 0 acknowledges the event, any other fails it (it is delivered again,
            and parked after the group's --max-deliver attempts). With --exec it holds one
            delivery at a time (--max-in-flight N: up to N), so that what it cannot start yet
            goes to other members rather than waiting out the group's --ack-wait-ms.
            It runs until SIGINT or SIGTERM, or until --limit events are handled, then leaves
            the group and exits 0 once the groups process has recorded its acks (3 when that
            was not confirmed in time: unrecorded acks mean those events come again). It joins
            again by itself when the groups process restarts. An unknown group ends it with
            exit status 1.
            """,
        options: [exec, limit, maxInFlight], settings: Configuration.settings)

    /// How long leaving waits for the groups process to settle the acks sent before.
    static let leaveTimeoutMilliseconds = 10_000

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.count == 1, let group = arguments.positionals.first else {
            throw .usage("expected the group's name")
        }
        var remaining = try arguments.integer(Self.limit, in: 1...Int.max) ?? Int.max
        let command = arguments.value(Self.exec)
        // A command runs one event at a time: deliveries held beyond the one it runs would
        // wait out ackWaitMs instead of going to another member.
        let holding = try arguments.integer(Self.maxInFlight, in: 1...10_000) ?? (command == nil ? nil : 1)
        // Writing an event to a command that exits without reading it must not end this process.
        signal(SIGPIPE, SIG_IGN)
        // SIGINT and SIGTERM end the loop between deliveries, so the member leaves the group
        // and what it held goes to the others at once instead of after a silence.
        ProcessSignals.block()
        do {
            let context = try ZMQContext()
            var member = try GroupMemberChannel(
                context, endpoint: configuration.endpoints.groups, group: group, maxInFlight: holding,
                security: try configuration.clientKeys())
            while remaining > 0, ProcessSignals.take() == nil {
                guard let delivery = try member.next(timeoutMilliseconds: 1_000) else { continue }
                if let command {
                    let status = try Self.execute(command, delivery, group: group)
                    if status == 0 {
                        try member.ack([delivery.position])
                    } else {
                        try member.nack(delivery.position, reason: "exit status \(status)")
                    }
                } else {
                    output.out(bytes: JSONWriter.bytes(delivery.event) + [UInt8(ascii: "\n")])
                    try member.ack([delivery.position])
                }
                remaining -= 1
            }
            guard try member.leave(timeoutMilliseconds: Self.leaveTimeoutMilliseconds) else {
                output.error(
                    "consume: the groups process did not answer the leave in time; "
                        + "acks it has not recorded will be delivered again")
                return .unavailable
            }
        } catch let error as CLIError {
            throw error
        } catch GroupMemberError.refused(let code, let message) {
            output.error("\(code): \(message)")
            return .errorReply
        } catch {
            throw .unavailable("\(error)")
        }
        return .success
    }

    /// Runs `command` for one delivery and returns its exit status (a signal counts as failure).
    private static func execute(_ command: String, _ delivery: GroupMemberChannel.Delivery, group: String)
        throws(CLIError) -> Int32
    {
        var environment = ProcessInfo.processInfo.environment
        environment["LOGBOOK_GROUP"] = group
        environment["LOGBOOK_POSITION"] = String(delivery.position)
        environment["LOGBOOK_ATTEMPT"] = String(delivery.attempt)
        let input = JSONWriter.bytes(delivery.event) + [UInt8(ascii: "\n")]
        return try ShellCommand.run(command, input: input, environment: environment)
    }
}
