/// Poll timeouts in libzmq's form: milliseconds, or -1 for no limit.
enum PollTimeout {
    /// The sooner of two timeouts.
    static func earliest(_ first: Int, _ second: Int) -> Int {
        if first < 0 { return second }
        if second < 0 { return first }
        return min(first, second)
    }
}
