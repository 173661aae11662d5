/// When WAL pages are copied back into the database file, and by whom. The background
/// checkpointer is asked once the WAL holds `thresholdPages`, then each time it has grown by
/// that much more; it copies the bulk. Once its last pass left at most `finishingFrames`
/// frames uncopied, the writer copies those itself right after its commit (a PASSIVE
/// checkpoint of a few pages in the committing call), so the WAL is wholly copied when the
/// next write begins, and that write starts it over from its beginning: the WAL stays near
/// `thresholdPages` long.
///
/// Why not ask after every commit past the threshold, as SQLite's own automatic checkpoint
/// does: with small commits that costs a checkpoint, and an fsync of the database file, every
/// commit or two (1,151 for 1,500 one-event commits, `SQLiteCheckpointScheduleTests`). Why
/// the writer finishes: a checkpoint on another thread while commits go on seldom leaves
/// nothing to copy at the moment a write begins, so the WAL would grow to the backstop.
struct SQLiteCheckpointSchedule {
    /// What the writer does after a commit.
    enum Step: Equatable {
        case nothing
        /// Ask the background checkpointer for a pass.
        case askInBackground
        /// Copy the few frames left in this call, so that the next write starts the WAL over.
        case finishHere
    }

    let thresholdPages: Int32
    let finishingFrames: Int32
    /// The WAL's length when a pass was last asked for; 0 since the WAL started over.
    private(set) var askedAt: Int32 = 0
    /// The frames the background's last pass left copied; 0 when it has not reported since
    /// the WAL started over, or the writer took the rest.
    private(set) var copiedInBackground: Int32 = 0

    init(thresholdPages: Int32, finishingFrames: Int32) {
        self.thresholdPages = thresholdPages
        self.finishingFrames = finishingFrames
    }

    /// After a commit left the WAL at `pages` pages (frames).
    mutating func step(walPages pages: Int32) -> Step {
        if pages < askedAt || pages < copiedInBackground {
            // The WAL started over.
            askedAt = 0
            copiedInBackground = 0
        }
        guard pages >= thresholdPages else { return .nothing }
        if copiedInBackground > 0, pages - copiedInBackground <= finishingFrames {
            copiedInBackground = 0
            return .finishHere
        }
        guard pages - askedAt >= thresholdPages else { return .nothing }
        askedAt = pages
        return .askInBackground
    }

    /// After a background pass: the first `frames` frames of the WAL are in the file. Kept
    /// even when that is all of them: a commit that began before the pass ended keeps the WAL
    /// from starting over, and the writer then copies what that commit added. The cost: a
    /// WAL that did start over, whose first commit is about as long as this count (a
    /// thousand frames or more), looks nearly copied, and the writer checkpoints in that
    /// commit once more than needed (time only; the WAL stays bounded).
    mutating func copiedInBackground(through frames: Int32) {
        copiedInBackground = frames
    }

    /// The writer checkpointed in its commit (the backstop): nothing is left to finish.
    mutating func checkpointedByWriter() {
        copiedInBackground = 0
    }
}
