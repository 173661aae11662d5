/// One or more libzmq endpoints, never none: what a client connects one socket to, and
/// what a setting such as `--commands` writes as a comma-separated list
/// (`tcp://10.0.0.1:5555,tcp://10.0.0.2:5555`). An endpoint cannot hold a comma.
public struct EndpointList: Sendable, Hashable, CustomStringConvertible {
    /// The endpoints in the order given; at least one, none empty, no two alike.
    public let endpoints: [String]

    /// Exactly one endpoint, used as given (it is not split at commas).
    public init(_ endpoint: String) {
        endpoints = [endpoint]
    }

    /// Several endpoints (or one), each used as given; at least one, none empty, no two alike.
    public init(_ endpoints: [String]) throws(EndpointListError) {
        guard !endpoints.isEmpty else { throw .empty }
        var seen: Set<String> = []
        for (index, endpoint) in endpoints.enumerated() {
            guard !endpoint.isEmpty else { throw .emptyEntry(position: index + 1) }
            guard seen.insert(endpoint).inserted else { throw .repeated(endpoint) }
        }
        self.endpoints = endpoints
    }

    /// Reads a comma-separated list; blanks around each entry are dropped.
    public init(parsing text: String) throws(EndpointListError) {
        let entries = text.split(separator: ",", omittingEmptySubsequences: false).map(Self.trimmed)
        guard entries != [""] else { throw .empty }
        try self.init(entries)
    }

    private static func trimmed(_ entry: Substring) -> String {
        guard let first = entry.firstIndex(where: { !$0.isWhitespace }),
            let last = entry.lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(entry[first...last])
    }

    /// The endpoint when there is exactly one; nil for a list of several.
    public var single: String? { endpoints.count == 1 ? endpoints[0] : nil }

    /// The endpoints as a setting writes them: joined by commas.
    public var description: String { endpoints.joined(separator: ",") }
}

/// Why a setting's text is not a list of endpoints.
public enum EndpointListError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing at all was given.
    case empty
    /// The entry at this place (from 1) is empty: two commas in a row, or one at an end.
    case emptyEntry(position: Int)
    /// This endpoint is listed twice (a socket would connect to it twice).
    case repeated(String)

    public var description: String {
        switch self {
        case .empty: "no endpoint given"
        case .emptyEntry(let position): "entry \(position) of the list is empty"
        case .repeated(let endpoint): "\(endpoint) is listed twice"
        }
    }
}
