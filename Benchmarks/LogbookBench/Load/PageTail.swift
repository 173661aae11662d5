/// Reads the top-level `next` and `head` of a `ReadLog` reply from its last bytes: the
/// contract writes them after the events (`…],"next":N,"head":M}`).
enum PageTail {
    static func integer(_ key: String, in page: [UInt8]) -> Int? {
        let pattern = Array("\"\(key)\":".utf8)
        let tailStart = max(0, page.count - 96)
        var found: Int?
        var cursor = tailStart
        while let at = ReplyScanner.find(pattern, in: page, from: cursor) {
            found = at
            cursor = at + 1
        }
        guard let found else { return nil }
        return ReplyScanner.integer(in: page, at: found + pattern.count).map { Int($0) }
    }
}
