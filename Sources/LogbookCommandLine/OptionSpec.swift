/// One flag a command accepts, declared once: its name, whether it takes a value (and the
/// placeholder help shows for it), what it does, its default and the environment variable
/// that stands in for it. Parsing accepts it, help shows it and code reads it through this
/// one value, so the three cannot disagree.
public struct OptionSpec: Sendable, Hashable {
    /// The flag without its dashes: `timeout-ms` for `--timeout-ms`.
    public let name: String
    /// What help shows for the value (`N`, `DIR`); nil for a switch, which takes none.
    public let placeholder: String?
    /// One sentence or phrase: what the flag does. Help wraps it to the terminal's width;
    /// a newline starts a new line.
    public let help: String
    /// What happens without the flag, as help words it (`5000`, `a new UUID`); nil when
    /// there is nothing to say.
    public let defaultText: String?
    /// The environment variable read when the flag is absent, if any.
    public let environment: String?

    public init(
        name: String, placeholder: String?, help: String, defaultText: String? = nil, environment: String? = nil
    ) {
        precondition(!name.isEmpty && !name.hasPrefix("-") && !name.contains("="), "bad option name '\(name)'")
        self.name = name
        self.placeholder = placeholder
        self.help = help
        self.defaultText = defaultText
        self.environment = environment
    }

    /// A flag that takes a value: `--name PLACEHOLDER` or `--name=PLACEHOLDER`.
    public static func option(
        _ name: String, _ placeholder: String, _ help: String, default defaultText: String? = nil,
        environment: String? = nil
    ) -> OptionSpec {
        OptionSpec(name: name, placeholder: placeholder, help: help, defaultText: defaultText, environment: environment)
    }

    /// A flag that takes no value: present or not.
    public static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, placeholder: nil, help: help)
    }

    /// `--help`, which every command accepts.
    public static let help = OptionSpec.flag("help", "print this text")

    /// Whether the flag takes no value.
    public var isSwitch: Bool { placeholder == nil }

    /// The flag as typed: `--timeout-ms`.
    public var flag: String { "--" + name }

    /// The flag with its placeholder, as help shows it: `--timeout-ms N`.
    public var synopsis: String { placeholder.map { "\(flag) \($0)" } ?? flag }
}
