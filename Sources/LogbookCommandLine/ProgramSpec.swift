/// A program that holds several commands, declared once for its overview: its name, what
/// it is, how it is called, the settings every command shares and its exit statuses.
public struct ProgramSpec: Sendable {
    public let name: String
    /// One line: what the program is.
    public let summary: String
    /// What follows the name in the usage line: `<command> [options]`.
    public let usage: String
    /// The settings every command takes (flag, else environment, else default).
    public let settings: [OptionSpec]
    /// The exit statuses, in one line.
    public let exitStatus: String

    public init(name: String, summary: String, usage: String, settings: [OptionSpec], exitStatus: String) {
        self.name = name
        self.summary = summary
        self.usage = usage
        self.settings = settings
        self.exitStatus = exitStatus
    }
}
