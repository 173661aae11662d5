/// A command line parsed against the flags a command declares: positional words, and the
/// values and switches of declared flags (`--name value`, `--name=value`, `--switch`).
/// Refuses any flag not declared, so a typo is never ignored; and a flag can be read only
/// through its declaration, and only when the command declares it, so code cannot read a
/// flag that the parser would refuse or that help does not show.
public struct Arguments: Sendable {
    /// The words that are not flags or their values, in order. `-` and lone `--` are words.
    public private(set) var positionals: [String] = []
    private var values: [String: String] = [:]
    private var switches: Set<String> = []
    private let accepted: [String: OptionSpec]

    /// Parses `words` for a command declared by `spec`.
    public init(_ words: [String], for spec: CommandSpec) throws(CLIError) {
        try self.init(words, accepting: spec.accepted)
    }

    /// Parses `words`, accepting exactly the flags in `options`. A flag given twice keeps
    /// its last value.
    public init(_ words: [String], accepting options: [OptionSpec]) throws(CLIError) {
        accepted = Dictionary(options.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
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
            guard let option = accepted[name] else { throw .usage("unknown option --\(name)") }
            if option.isSwitch {
                guard value == nil else { throw .usage("--\(name) takes no value") }
                switches.insert(name)
                continue
            }
            if value == nil {
                guard index < words.count else { throw .usage("--\(name) needs a value") }
                value = words[index]
                index += 1
            }
            values[name] = value
        }
    }

    /// The value given for `option`, if it was given.
    public func value(_ option: OptionSpec) -> String? {
        requireDeclared(option, switch: false)
        return values[option.name]
    }

    /// Whether the switch `option` was given.
    public func isSet(_ option: OptionSpec) -> Bool {
        requireDeclared(option, switch: true)
        return switches.contains(option.name)
    }

    /// The value of `option` as a whole number within `range`, if it was given.
    public func integer(_ option: OptionSpec, in range: ClosedRange<Int>) throws(CLIError) -> Int? {
        guard let text = value(option) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw .usage("\(option.flag) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// Whether the command declares `option` (so that it may be read).
    public func declares(_ option: OptionSpec) -> Bool {
        accepted[option.name] == option
    }

    /// A setting: the flag's value, else its environment variable's, else its default text.
    public func setting(_ option: OptionSpec, environment: [String: String]) -> String? {
        value(option) ?? option.environment.flatMap { environment[$0] } ?? option.defaultText
    }

    /// Stops the program when code reads a flag its command does not declare, or reads a
    /// switch as a value or a value as a switch: a mistake in the program, found by any
    /// test that runs the command.
    private func requireDeclared(_ option: OptionSpec, switch isSwitch: Bool) {
        precondition(accepted[option.name] == option, "\(option.flag) is not declared by this command")
        precondition(option.isSwitch == isSwitch, "\(option.flag) is read as what it is not")
    }
}
