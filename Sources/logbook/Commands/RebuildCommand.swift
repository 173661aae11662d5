import Foundation
import Glibc
import LogbookClient
import LogbookCommandLine
import LogbookJSON
import LogbookWire

/// `logbook rebuild`: asks the query process to rebuild its read models from position 1
/// (queries keep being answered from the old ones meanwhile), follows its progress through
/// `Status` (a progress bar on stderr when that is a terminal), and prints
/// `{"ok":true,"generation","position","seconds"}` once the process has switched over.
struct RebuildCommand: ConfiguredCommand {
    static let spec = CommandSpec(
        name: "rebuild", usage: "[options]",
        listings: [.init("rebuild", "rebuild the query process's read models from the log")],
        section: .clientCommands,
        description: """
            Has the query process rebuild its read models from position 1. It keeps answering
            queries from the old ones meanwhile and switches when the new ones have caught up.
            Shows a progress bar on a terminal, then prints {"ok":true,"generation","position","seconds"}.
            """,
        options: ClientPatience.options, settings: Configuration.settings)
    static let pollMilliseconds: UInt32 = 100

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.isEmpty else { throw .usage("rebuild takes no positional arguments") }
        let session = try ClientSession(arguments: arguments, configuration: configuration)
        let started = Date()
        let oldGeneration = try status(session).generation
        let reply = try session.request(.queries, RequestDocument.rebuild(id: UUID().uuidString))
        guard reply.isOK else {
            output.out(JSONWriter.string(.object(reply)))
            return .errorReply
        }
        let bar = isatty(2) == 1 ? ProgressBar() : nil
        while true {
            let now = try status(session)
            switch now.rebuild {
            case .failed(let reason):
                bar?.finish()
                output.out(
                    JSONWriter.string(["ok": false, "error": ["code": "internal", "message": .string(reason)]]))
                return .errorReply
            case .idle where now.generation <= oldGeneration:
                // No rebuild under way and no new generation: the query process restarted
                // (an unfinished rebuild is dropped at start) or never took the request.
                bar?.finish()
                output.out(
                    JSONWriter.string([
                        "ok": false,
                        "error": [
                            "code": "unavailable",
                            "message":
                                "the rebuild is no longer under way (did the query process restart?); run rebuild again",
                        ],
                    ]))
                return .errorReply
            case .idle:
                bar?.finish()
                let seconds = (Date().timeIntervalSince(started) * 100).rounded() / 100
                output.out(
                    JSONWriter.string([
                        "ok": true, "generation": .int(now.generation), "position": .int(Int(now.checkpoint)),
                        "seconds": .double(seconds),
                    ]))
                return .success
            case .running(_, let position, let head):
                bar?.show(position: Int(position), of: Int(head))
                usleep(Self.pollMilliseconds * 1000)
            case .switching:
                usleep(Self.pollMilliseconds * 1000)
            }
        }
    }

    private func status(_ session: ClientSession) throws(CLIError) -> QueryStatus {
        switch try session.status(of: .queries, as: QueryStatus.self) {
        case .status(let status): return status
        case .refused(let reply):
            throw .unavailable("the query process did not report its status: \(JSONWriter.string(.object(reply)))")
        }
    }
}

/// A one-line progress bar on standard error, redrawn in place.
struct ProgressBar {
    static let width = 40

    func show(position: Int, of total: Int) {
        let fraction = total > 0 ? min(1, Double(position) / Double(total)) : 0
        let filled = Int(fraction * Double(Self.width))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: Self.width - filled)
        FileHandle.standardError.write(Data("\rrebuilding [\(bar)] \(position)/\(total) events".utf8))
    }

    func finish() {
        FileHandle.standardError.write(Data("\n".utf8))
    }
}
