/// The message a worker on PostgreSQL sends the feed processes after each commit that
/// appended events: one frame, the last position it committed, in decimal ASCII. It only
/// wakes a feed process sooner than its poll would; a lost or unreadable hint costs at
/// most one poll interval, so nothing depends on its content being right.
enum CommitHint {
    /// The frames of the hint that the log reached `position`.
    static func frames(position: Int64) -> [[UInt8]] {
        [Array(String(position).utf8)]
    }

    /// The position a hint names, or nil for a message that is not a hint.
    static func position(of frames: [[UInt8]]) -> Int64? {
        guard frames.count == 1, let frame = frames.first, !frame.isEmpty, frame.count <= 19,
            frame.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return Int64(String(decoding: frame, as: UTF8.self))
    }
}
