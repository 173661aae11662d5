import Foundation
import LogbookClient
import LogbookCommandLine
import LogbookJSON
import LogbookWire

/// `logbook groups create|list|show|delete|parked|retry|skip`: manages consumer groups on
/// the groups process and prints its reply as it came; exit status 1 for an error reply.
struct GroupsCommand: ConfiguredCommand {
    static let topics = OptionSpec.option(
        "topics", "T[,T…]", "create: the topics the group takes (users, posts, products, orders, or all)")
    static let from = OptionSpec.option(
        "from", "1|head", "create: 1 for the whole log, head for only what is appended from now", default: "1")
    static let ackWait = OptionSpec.option(
        "ack-wait-ms", "N", "create: how long a delivery may go unacknowledged before it goes again",
        default: "30000")
    static let maxDeliver = OptionSpec.option(
        "max-deliver", "N", "create: deliveries of one event before it is parked", default: "5")
    static let maxInFlight = OptionSpec.option(
        "max-in-flight", "N", "create: unacknowledged deliveries one member holds at most", default: "64")
    static let limit = OptionSpec.option("limit", "N", "parked: list at most N events", default: "100")

    static let spec = CommandSpec(
        name: "groups", usage: "create|list|show|delete|parked|retry|skip [NAME] [POSITION] [options]",
        listings: [.init("groups VERB", "manage consumer groups (create, list, show, delete, parked, retry, skip)")],
        section: .clientCommands,
        description: """
            Manages the consumer groups of the groups process (--groups) and prints its reply:
            {"id","ok":true,"result":…}. Needs the admin role when CURVE is on.
              groups create NAME --topics T[,T…] [--from 1|head] [--ack-wait-ms N]
                            [--max-deliver N] [--max-in-flight N]
              groups list                  every group, as show prints it
              groups show NAME             settings, checkpoint, head, lag, members, in flight,
                                           pending, parked, and counters since the groups
                                           process started
              groups delete NAME           the group and its progress
              groups parked NAME [--limit N]  its parked events: position, stream, attempts,
                                           the last failure, the event
              groups retry NAME POSITION   give a parked event its deliveries again
              groups skip NAME POSITION    finish a parked event without delivering it
            """,
        options: [topics, from, ackWait, maxDeliver, maxInFlight, limit] + ClientPatience.options,
        settings: Configuration.settings)

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard let verb = arguments.positionals.first else {
            throw .usage("expected what to do: create, list, show, delete, parked, retry or skip")
        }
        let document = try request(verb, Array(arguments.positionals.dropFirst()))
        let session = try ClientSession(arguments: arguments, configuration: configuration)
        let reply = try session.request(.groups, document)
        output.out(JSONWriter.string(.object(reply)))
        return reply.isOK ? .success : .errorReply
    }

    private func request(_ verb: String, _ words: [String]) throws(CLIError) -> JSONObject {
        let id = UUID().uuidString.lowercased()
        try refuseOptions(
            except: verb == "create"
                ? [Self.topics, Self.from, Self.ackWait, Self.maxDeliver, Self.maxInFlight]
                : verb == "parked" ? [Self.limit] : [], verb: verb)
        switch verb {
        case "list":
            try expect(words, [], verb)
            return GroupRequestDocument.bare(.listGroups, id: id)
        case "show", "delete":
            try expect(words, ["NAME"], verb)
            return GroupRequestDocument.naming(verb == "show" ? .showGroup : .deleteGroup, id: id, group: words[0])
        case "parked":
            try expect(words, ["NAME"], verb)
            return GroupRequestDocument.parked(
                id: id, group: words[0], limit: try arguments.integer(Self.limit, in: 1...Int(Int32.max)))
        case "retry", "skip":
            try expect(words, ["NAME", "POSITION"], verb)
            guard let position = Int64(words[1]), position >= 1 else {
                throw .usage("POSITION must be a position of the log (an integer ≥ 1), got '\(words[1])'")
            }
            return GroupRequestDocument.parkedEvent(
                verb == "retry" ? .retryParked : .skipParked, id: id, group: words[0], position: position)
        case "create":
            try expect(words, ["NAME"], verb)
            guard let topics = arguments.value(Self.topics) else { throw .usage("groups create needs --topics") }
            let from = arguments.value(Self.from) ?? "1"
            guard from == "1" || from == "head" else { throw .usage("--from is 1 or head, got '\(from)'") }
            return GroupRequestDocument.create(
                id: id, group: words[0], topics: try TopicList.parse([topics]).map(\.rawValue),
                fromHead: from == "head",
                ackWaitMilliseconds: try arguments.integer(Self.ackWait, in: 1...Int(Int32.max)),
                maxDeliver: try arguments.integer(Self.maxDeliver, in: 1...Int(Int32.max)),
                maxInFlight: try arguments.integer(Self.maxInFlight, in: 1...Int(Int32.max)))
        default:
            throw .usage("unknown groups verb '\(verb)'; expected create, list, show, delete, parked, retry or skip")
        }
    }

    private func expect(_ words: [String], _ names: [String], _ verb: String) throws(CLIError) {
        guard words.count == names.count else {
            let wanted = names.isEmpty ? "nothing more" : names.joined(separator: " ")
            throw .usage("groups \(verb) takes \(wanted); got \(words.count) word\(words.count == 1 ? "" : "s")")
        }
    }

    /// The verb-specific flags belong to one verb each.
    private func refuseOptions(except allowed: [OptionSpec], verb: String) throws(CLIError) {
        let specific = [Self.topics, Self.from, Self.ackWait, Self.maxDeliver, Self.maxInFlight, Self.limit]
        for option in specific
        where arguments.value(option) != nil && !allowed.contains(where: { $0.name == option.name }) {
            throw .usage("\(option.flag) does not go with groups \(verb)")
        }
    }
}
