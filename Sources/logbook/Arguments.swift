/// A parsed command line: positional words and `--flag value` options. Flags that take no
/// value are listed in `switches`. Refuses unknown flags, so a typo is never ignored.
struct Arguments {
    var positionals: [String] = []
    var options: [String: String] = [:]
    var switches: Set<String> = []

    init(_ words: [String], options allowed: Set<String>, switches allowedSwitches: Set<String> = ["help"])
        throws(CLIError)
    {
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            guard word.hasPrefix("--"), word.count > 2 else {
                positionals.append(word)
                continue
            }
            var name = String(word.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if allowedSwitches.contains(name), value == nil {
                switches.insert(name)
            } else if allowed.contains(name) {
                if value == nil {
                    guard index < words.count else { throw .usage("--\(name) needs a value") }
                    value = words[index]
                    index += 1
                }
                options[name] = value
            } else {
                throw .usage("unknown option --\(name)")
            }
        }
    }

    /// An option that must be a whole number within `range`, if given.
    func integer(_ name: String, in range: ClosedRange<Int>) throws(CLIError) -> Int? {
        guard let text = options[name] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw .usage("--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }
}
