/// Why a text is not a certificate Logbook accepts, naming the line where it can.
public enum CertificateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file holds nothing.
    case empty
    /// The file stops in the middle of a line (no final newline): it was cut short.
    case truncated(line: Int)
    /// A line that is not ZPL as `zcert` writes it.
    case malformed(line: Int, String)
    /// The `metadata` or `curve` section is not there.
    case missingSection(String)
    /// The `curve` section has no `public-key` (or a secret certificate no `secret-key`).
    case missingKey(String)
    /// A key is not 40 characters.
    case wrongLength(key: String, line: Int, length: Int)
    /// A key's 40 characters are not Z85.
    case badZ85(key: String, line: Int, Z85Error)
    /// The secret key is not the secret of the public key beside it.
    case mismatchedKeys

    public var description: String {
        switch self {
        case .empty: "the file is empty"
        case .truncated(let line): "truncated: line \(line) ends without a newline"
        case .malformed(let line, let problem): "line \(line): \(problem)"
        case .missingSection(let name): "no '\(name)' section"
        case .missingKey(let name): "no \(name) in the 'curve' section"
        case .wrongLength(let key, let line, let length):
            "line \(line): \(key) is \(length) characters, a Z85 CURVE key has \(CurveKey.textLength)"
        case .badZ85(let key, let line, let problem): "line \(line): \(key) is not Z85 (\(problem))"
        case .mismatchedKeys: "the secret-key does not belong to the public-key"
        }
    }
}

/// A key file that cannot be used: its path and why.
public struct KeyFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the file itself, beyond its text.
    public enum Problem: Sendable, Equatable, CustomStringConvertible {
        case unreadable(String)
        /// A secret certificate that other users may read or write (its mode).
        case exposed(mode: UInt32)
        /// A public certificate where a secret one is needed.
        case notSecret
        case invalid(CertificateError)

        public var description: String {
            switch self {
            case .unreadable(let reason): "cannot read it: \(reason)"
            case .exposed(let mode):
                "a secret certificate must not be readable or writable by other users (mode "
                    + String(mode & 0o777, radix: 8) + "; run chmod 600)"
            case .notSecret: "it is a public certificate; a secret one (NAME_secret) is needed"
            case .invalid(let error): "not a CURVE certificate: \(error)"
            }
        }
    }

    public let path: String
    public let problem: Problem

    public init(_ path: String, _ problem: Problem) {
        self.path = path
        self.problem = problem
    }

    public var description: String { "\(path): \(problem)" }
}
