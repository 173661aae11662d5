import LogbookApplication
import LogbookJSON
import LogbookSQLite

/// `logbook replay`: prints the log from a position as JSON lines, one envelope a line,
/// in position order, for any consumer to rebuild what it derives.
struct ReplayCommand {
    static let options: Set<String> = ["from", "limit", "topics"]
    static let pageSize = 1_000

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.isEmpty else { throw .usage("replay takes no positional arguments") }
        let from = Int64(try arguments.integer("from", in: 1...Int.max) ?? 1)
        let limit = try arguments.integer("limit", in: 1...Int.max)
        let categories = try topics()
        let store = try configuration.openEventLog(create: false)

        var remaining = limit ?? Int.max
        do {
            try store.forEachPage(fromPosition: from, categories: categories, pageSize: Self.pageSize) {
                page throws(CLIError) in
                var bytes: [UInt8] = []
                for event in page.prefix(remaining) {
                    do {
                        JSONWriter.write(try WireEncoding.envelope(event), into: &bytes)
                    } catch {
                        throw CLIError(status: .unavailable, message: "position \(event.position): \(error)")
                    }
                    bytes.append(UInt8(ascii: "\n"))
                }
                output.out(bytes: bytes)
                remaining -= min(page.count, remaining)
                return remaining > 0
            }
        } catch {
            switch error {
            case .store(let failure): throw .unavailable(failure.description)
            case .body(let failure): throw failure
            }
        }
        return .success
    }

    /// `--topics users,orders` as the categories to read; nil for all.
    private func topics() throws(CLIError) -> Set<String>? {
        guard let list = arguments.options["topics"] else { return nil }
        var categories = Set<String>()
        for name in list.split(separator: ",") {
            guard let topic = FeedTopic(rawValue: String(name)) else {
                let known = FeedTopic.allCases.map(\.rawValue).joined(separator: ", ")
                throw .usage("unknown topic '\(name)' (known: \(known))")
            }
            categories.insert(topic.category)
        }
        return categories
    }
}
