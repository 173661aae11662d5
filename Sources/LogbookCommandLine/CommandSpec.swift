/// One command, declared once: how it is called, how the program's overview lists it,
/// what it does and every flag it accepts. Parsing (`Arguments`), `--help` (`CommandHelp`)
/// and the overview (`ProgramOverview`) are all made from it, so none of them can accept,
/// show or omit a flag the others do not.
public struct CommandSpec: Sendable {
    /// A block of the program's overview. Sections are told apart by `key`, so two blocks
    /// without a title stay two blocks.
    public struct Section: Sendable, Equatable {
        public let key: String
        /// The heading over the block, if it has one.
        public let title: String?

        public init(_ key: String, title: String?) {
            self.key = key
            self.title = title
        }
    }

    /// One line of the program's overview: how the command is typed and what it does.
    public struct Listing: Sendable, Equatable {
        public let label: String
        public let summary: String

        public init(_ label: String, _ summary: String) {
            self.label = label
            self.summary = summary
        }
    }

    /// The word that selects the command (`send`); nil for a program that is one command.
    public let name: String?
    /// Other words that select it (`--help` for `help`).
    public let aliases: [String]
    /// What follows the command's name in its usage line: `TYPE DATA [options]`.
    public let usage: String
    /// Its lines in the overview (usually one; `run` has one for each role).
    public let listings: [Listing]
    /// The overview block it is listed in.
    public let section: Section?
    /// What the command does, as paragraphs of text; printed as written.
    public let description: String
    /// The command's own flags, in the order help lists them.
    public let options: [OptionSpec]
    /// The program's shared settings it also takes (flag, else environment, else default).
    public let settings: [OptionSpec]
    /// The exit statuses it ends with, when they differ from the program's.
    public let exitStatus: String?

    public init(
        name: String?, aliases: [String] = [], usage: String, listings: [Listing] = [], section: Section? = nil,
        description: String, options: [OptionSpec] = [], settings: [OptionSpec] = [], exitStatus: String? = nil
    ) {
        self.name = name
        self.aliases = aliases
        self.usage = usage
        self.listings = listings
        self.section = section
        self.description = description
        self.options = options
        self.settings = settings
        self.exitStatus = exitStatus
        let names = accepted.map(\.name)
        precondition(Set(names).count == names.count, "\(name ?? usage) declares a flag twice: \(names)")
    }

    /// Every flag the command accepts: its own, the settings, and `--help`.
    public var accepted: [OptionSpec] { options + settings + [.help] }

    /// How the command is started: `logbook send`, or the program's name alone.
    public func invocation(program: String) -> String {
        name.map { "\(program) \($0)" } ?? program
    }

    /// Whether `word` selects this command.
    public func isCalled(_ word: String) -> Bool {
        word == name || aliases.contains(word)
    }
}
