/// A consumer group as the group store keeps it: what it is (name, the stream categories it
/// takes, its settings) and how far it got. Every event of the group's categories at or
/// before `checkpoint` is done (acknowledged or skipped); what is known of the events after
/// it is in the store's outcomes (`EventOutcome`).
public struct GroupRecord: Hashable, Sendable {
    public let name: GroupName
    /// The stream categories whose events the group takes (`user`, `post`, …), sorted.
    public let categories: [String]
    public let settings: GroupSettings
    /// Milliseconds since the Unix epoch when the group was created.
    public let createdAt: Int64
    public var checkpoint: Int64

    public init(name: GroupName, categories: [String], settings: GroupSettings, createdAt: Int64, checkpoint: Int64) {
        self.name = name
        self.categories = categories.sorted()
        self.settings = settings
        self.createdAt = createdAt
        self.checkpoint = checkpoint
    }
}
