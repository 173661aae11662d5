/// Reads the few things a load client needs out of a reply without parsing it: the
/// sequence number at the start of the id the bench gave the request, whether it is `ok`,
/// the error code, and event positions. Load clients run beside the server on the same
/// cores, so they do as little work per reply as they can; the wire contract fixes the
/// order `{"id":…,"ok":…}` these scans rely on.
enum ReplyScanner {
    private static let idPrefix = Array("{\"id\":\"".utf8)
    private static let okKey = Array("\"ok\":".utf8)
    private static let codeKey = Array("\"code\":\"".utf8)
    private static let positionKey = Array("\"position\":".utf8)
    private static let eventsKey = Array("\"events\":[".utf8)

    /// The number the request id starts with (`"123-…"`), or nil.
    static func sequence(in reply: [UInt8]) -> Int? {
        guard reply.starts(with: idPrefix) else { return nil }
        return integer(in: reply, at: idPrefix.count).map { Int($0) }
    }

    /// Whether the reply says `"ok":true`; nil when it has no `ok`.
    static func isOK(_ reply: [UInt8]) -> Bool? {
        guard let at = find(okKey, in: reply, from: 0), at + okKey.count < reply.count else { return nil }
        return reply[at + okKey.count] == UInt8(ascii: "t")
    }

    /// The `error.code` of a failure reply.
    static func errorCode(_ reply: [UInt8]) -> String? {
        guard let at = find(codeKey, in: reply, from: 0) else { return nil }
        let start = at + codeKey.count
        guard let end = reply[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return String(decoding: reply[start..<end], as: UTF8.self)
    }

    /// The first `"position":N` of a document (an event envelope's own position).
    static func firstPosition(_ document: [UInt8]) -> Int64? {
        guard let at = find(positionKey, in: document, from: 0) else { return nil }
        return integer(in: document, at: at + positionKey.count)
    }

    /// The positions of the events of a command reply (`"events":[{…"position":N…},…]`).
    static func eventPositions(_ reply: [UInt8]) -> [Int64] {
        guard var cursor = find(eventsKey, in: reply, from: 0) else { return [] }
        var positions: [Int64] = []
        while let at = find(positionKey, in: reply, from: cursor) {
            cursor = at + positionKey.count
            if let position = integer(in: reply, at: cursor) { positions.append(position) }
        }
        return positions
    }

    /// The unsigned decimal integer starting at `index`, or nil when no digit is there.
    static func integer(in bytes: [UInt8], at index: Int) -> Int64? {
        var value: Int64 = 0
        var cursor = index
        while cursor < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[cursor]) {
            value = value &* 10 &+ Int64(bytes[cursor] - UInt8(ascii: "0"))
            cursor += 1
        }
        return cursor > index ? value : nil
    }

    /// The index where `pattern` first occurs in `bytes` at or after `start`.
    static func find(_ pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard let first = pattern.first, bytes.count >= pattern.count else { return nil }
        var index = start
        let last = bytes.count - pattern.count
        while index <= last {
            if bytes[index] == first {
                var matched = 1
                while matched < pattern.count && bytes[index + matched] == pattern[matched] { matched += 1 }
                if matched == pattern.count { return index }
            }
            index += 1
        }
        return nil
    }
}
