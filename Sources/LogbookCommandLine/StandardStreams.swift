import Foundation

/// Where a command's output goes: documents and help to stdout, one-line diagnostics to
/// stderr, each prefixed with the program's name (`logbook: error: …`, `logbook: …`).
public struct StandardStreams: Sendable {
    /// The name diagnostics start with.
    public let program: String

    public init(program: String) {
        self.program = program
    }

    /// Writes `text` and a newline to stdout.
    public func out(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Writes `bytes` to stdout as they are.
    public func out(bytes: [UInt8]) {
        FileHandle.standardOutput.write(Data(bytes))
    }

    /// Writes `program: text` and a newline to stderr: news that is not an error (a
    /// command waiting for a server, say).
    public func note(_ text: String) {
        FileHandle.standardError.write(Data("\(program): \(text)\n".utf8))
    }

    /// Writes `program: error: text` and a newline to stderr.
    public func error(_ text: String) {
        FileHandle.standardError.write(Data("\(program): error: \(text)\n".utf8))
    }
}
