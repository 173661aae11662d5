import Glibc
public import LogbookApplication
import LogbookDomain

/// One line per notable event on standard error, in logfmt:
/// `time=… level=… process=… msg="…" key=value …`.
/// Lines below the chosen level are dropped, so the default `info` level says nothing per
/// command. Each line is one `write(2)`, so lines from several threads never interleave.
public struct Diagnostics: Sendable {
    /// How much to say, from most to least.
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case debug, info, warning, error

        public var name: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }

        public init?(name: String) {
            guard let level = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = level
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public let threshold: Level
    /// Which process writes (`worker`, `query`), so the lines of `logbook up` can be told apart.
    public let process: String
    private let clock: any Clock
    private let fileDescriptor: Int32

    /// A log of lines at `threshold` or above, stamped by `clock`, written to standard error.
    public init(process: String, threshold: Level = .info, clock: any Clock) {
        self.init(process: process, threshold: threshold, clock: clock, fileDescriptor: 2)
    }

    init(process: String, threshold: Level, clock: any Clock, fileDescriptor: Int32) {
        self.process = process
        self.threshold = threshold
        self.clock = clock
        self.fileDescriptor = fileDescriptor
    }

    public func debug(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        write(.debug, message, fields)
    }

    public func info(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        write(.info, message, fields)
    }

    public func warning(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        write(.warning, message, fields)
    }

    public func error(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        write(.error, message, fields)
    }

    public func write(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, String>) {
        guard level >= threshold else { return }
        var line = "time=\(clock.now().rfc3339) level=\(level.name) process=\(process) msg=\(Self.quoted(message))"
        for (key, value) in fields {
            line += " \(key)=\(Self.quoted(value))"
        }
        line += "\n"
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(fileDescriptor, $0.baseAddress, $0.count) }
    }

    /// A value as logfmt writes it: bare when it is one plain word, quoted and escaped otherwise.
    static func quoted(_ value: String) -> String {
        let plain = !value.isEmpty && value.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x3D }
        if plain { return value }
        var escaped = "\""
        for character in value.unicodeScalars {
            switch character {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped + "\""
    }
}
