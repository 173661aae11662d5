import LogbookFeed
import LogbookZMQ

/// One group's way to the log: a `FeedFollower` of its topics, whose cursor is the group's
/// frontier, and when the feed was last heard from. A class so that the groups
/// loop can keep one per group in a dictionary; it is made, used and dropped on that loop's
/// thread only.
final class GroupFollower {
    var follower: FeedFollower
    /// When the feed or the log last gave this group something (monotonic milliseconds).
    var lastHeard: Int64
    /// After a log read failed, the group reads again no sooner than this.
    var retryAt: Int64 = 0
    /// The log's head when the group was created here, until the follower knows better.
    var headAtCreation: Int64 = 0

    init(_ follower: consuming FeedFollower, now: Int64) {
        self.follower = follower
        lastHeard = now
    }
}
