/// Where each person's data key lives, apart from the log: one wrapped key per user id
/// (the data key sealed by the master key, with the user id as associated data), a mark
/// for each user whose forgetting has begun, a journal of the destroys, and the check
/// value that tells whether a master key is the one the store was written under.
///
/// Implementations promise:
/// - every call that changes something is durable when it returns;
/// - `create` never replaces a key: for a user that has one (or had one, now destroyed)
///   it keeps what is there and reports it, so concurrent writers agree on one key;
/// - `destroy` leaves no copy of the key in the store's files (its pages, its journal)
///   when it returns, and the user reads as `.destroyed` from then on, forever;
/// - each `destroy` that turns a user (with a key, or never seen) into a destroyed one gets
///   the next destroy mark, 1, 2, 3, … with no gap, in the order the destroys commit; a
///   destroy of a user destroyed already gets none. The journal holds user ids, never keys;
/// - `destroyedSince(m)` answers every destroy whose mark is above `m` and whose call
///   returned before it was called, so a reader that remembers the answer's mark learns of
///   each destroy exactly once, however many stores share the file or database (this is
///   how a process finds the users other processes forgot and drops their keys from its
///   cache: `PersonalDataVault.catchUpWithDestroyedKeys`);
/// - the master-key check is written once and never changed.
///
/// Calls block on I/O: make them from a thread you own, not from Swift concurrency's pool.
public protocol PersonKeyStore: Sendable {
    /// What the store holds for each of `userIds` that it knows; an id it never saw is absent.
    func keys(for userIds: [String]) throws(PersonKeyStoreError) -> [String: StoredPersonKey]
    /// Stores `wrapped` for each user id that has nothing yet, in one durable transaction,
    /// and answers what each of them holds afterwards (theirs, or what was there first).
    func create(_ wrapped: [String: [UInt8]]) throws(PersonKeyStoreError) -> [String: StoredPersonKey]
    /// Records, durably, that forgetting `userId` has begun (before its `UserForgotten` is appended).
    func beginForgetting(_ userId: String) throws(PersonKeyStoreError)
    /// The users whose forgetting began and was not finished by `destroy`.
    func forgettingUsers() throws(PersonKeyStoreError) -> [String]
    /// Destroys the key of `userId` (and its forgetting mark) durably, leaving no copy in the
    /// store's files. Destroying a key that is destroyed or was never made records the
    /// user as destroyed.
    func destroy(_ userId: String) throws(PersonKeyStoreError)
    /// The users destroyed with a mark above `mark`, in mark order, and the highest mark
    /// the store holds (`mark` itself when it holds none above it).
    func destroyedSince(_ mark: Int64) throws(PersonKeyStoreError) -> DestroyedKeys
    /// The highest destroy mark the store holds, 0 when nothing was destroyed: where a
    /// reader with nothing cached starts reading the journal.
    func latestDestroyMark() throws(PersonKeyStoreError) -> Int64
    /// The master-key check value, or nil when none was written yet.
    func masterKeyCheck() throws(PersonKeyStoreError) -> [UInt8]?
    /// Writes the master-key check value when there is none, and answers the one in force
    /// (the given one, or the one another writer stored first).
    func setMasterKeyCheck(_ check: [UInt8]) throws(PersonKeyStoreError) -> [UInt8]
}

/// What a key store holds for one user.
public enum StoredPersonKey: Sendable, Equatable {
    /// The user's data key, sealed by the master key.
    case wrapped([UInt8])
    /// The key was destroyed: the user is forgotten.
    case destroyed
}

/// The users whose keys were destroyed after a mark of the store's destroy journal
/// (`PersonKeyStore.destroyedSince`): every destroy with a mark above the one asked for,
/// up to `mark`, whichever store instance made it. Nothing is left out between the mark
/// asked for and `mark`, so asking next from `mark` misses no destroy and repeats none.
public struct DestroyedKeys: Sendable, Equatable {
    /// The users destroyed, in the order of their marks; none when nothing was destroyed since.
    public var userIds: [String]
    /// The mark of the last of `userIds`, or the mark asked for when there are none.
    public var mark: Int64

    public init(userIds: [String], mark: Int64) {
        self.userIds = userIds
        self.mark = mark
    }
}

/// Why a key store could not do what was asked.
public enum PersonKeyStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file or database is not a Logbook key store.
    case notAKeyStore(path: String, reason: String)
    /// The store was written by a newer Logbook.
    case unsupportedSchema(found: Int, supported: Int)
    /// The storage cannot be used right now (busy, locked, disk full, I/O error); retrying may work.
    case unavailable(String)
    /// The storage failed in a way that points to a bug or damage, not to the disk.
    case failed(String)

    public var description: String {
        switch self {
        case .notAKeyStore(let path, let reason): "\(path) is not a Logbook key store: \(reason)"
        case .unsupportedSchema(let found, let supported):
            "the key store has schema version \(found); this build reads up to \(supported)"
        case .unavailable(let message): "the key store is unavailable: \(message)"
        case .failed(let message): "the key store failed: \(message)"
        }
    }
}
