/// Where a process serves its metrics: `HOST:PORT` as `--metrics` gives it (`127.0.0.1:9464`,
/// `localhost:9464`, `[::1]:9464`, `0.0.0.0:9464`; port 0 lets the kernel choose). Parsing
/// checks the form only; the host is resolved when the endpoint binds.
public struct MetricsAddress: Sendable, Equatable, CustomStringConvertible {
    public let host: String
    public let port: UInt16

    /// Why a `--metrics` value is not `HOST:PORT`.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    public init(parsing text: String) throws(ParseError) {
        guard !text.contains("/") else {
            throw ParseError(description: "expected HOST:PORT, with a host name or address before the colon, not a URL")
        }
        guard let colon = text.lastIndex(of: ":") else {
            throw ParseError(description: "expected HOST:PORT (for example 127.0.0.1:9464)")
        }
        var host = String(text[..<colon])
        let portText = text[text.index(after: colon)...]
        if host.hasPrefix("[") && host.hasSuffix("]") && host.count > 2 {
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            throw ParseError(description: "an IPv6 host goes in brackets: [::1]:9464")
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "[" || $0 == "]" }) else {
            throw ParseError(description: "expected HOST:PORT, with a host name or address before the colon")
        }
        guard portText.allSatisfy({ $0.isASCII && $0.isNumber }), let port = UInt16(portText) else {
            throw ParseError(description: "the port '\(portText)' is not a number from 0 to 65535")
        }
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
