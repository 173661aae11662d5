public import LogbookApplication
import Synchronization

/// Person keys held in memory, for unit tests of the layers above: a `PersonKeyStore` with
/// the same promises as the SQLite and PostgreSQL stores except durability. `create` never
/// replaces what a user has (a wrapped key, or the mark of one destroyed); `destroy` drops
/// the bytes and leaves the mark, forever, and ends the user's forgetting; the master-key
/// check is written once. `forgettingUsers` lists users sorted by the bytes of their UTF-8,
/// as the other stores do. The destroy journal is an array: a user's mark is their index
/// in it plus one. Each call takes a lock, and nothing here can fail.
public final class InMemoryPersonKeyStore: PersonKeyStore {
    private let state = Mutex(State())

    public init() {}

    public func keys(for userIds: [String]) throws(PersonKeyStoreError) -> [String: StoredPersonKey] {
        state.withLock { $0.keys(for: userIds) }
    }

    public func create(_ wrapped: [String: [UInt8]]) throws(PersonKeyStoreError) -> [String: StoredPersonKey] {
        state.withLock { state in
            for (userId, bytes) in wrapped where state.keys[userId] == nil { state.keys[userId] = .wrapped(bytes) }
            return state.keys(for: Array(wrapped.keys))
        }
    }

    public func beginForgetting(_ userId: String) throws(PersonKeyStoreError) {
        state.withLock { _ = $0.forgetting.insert(userId) }
    }

    public func forgettingUsers() throws(PersonKeyStoreError) -> [String] {
        state.withLock { $0.forgetting.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } }
    }

    public func destroy(_ userId: String) throws(PersonKeyStoreError) {
        state.withLock { state in
            if state.keys[userId] != .destroyed { state.destroyed.append(userId) }
            state.keys[userId] = .destroyed
            state.forgetting.remove(userId)
        }
    }

    public func destroyedSince(_ mark: Int64) throws(PersonKeyStoreError) -> DestroyedKeys {
        state.withLock { state in
            let count = Int64(state.destroyed.count)
            guard mark < count else { return DestroyedKeys(userIds: [], mark: mark) }
            return DestroyedKeys(userIds: Array(state.destroyed[Int(max(0, mark))...]), mark: count)
        }
    }

    public func latestDestroyMark() throws(PersonKeyStoreError) -> Int64 {
        state.withLock { Int64($0.destroyed.count) }
    }

    public func masterKeyCheck() throws(PersonKeyStoreError) -> [UInt8]? {
        state.withLock { $0.check }
    }

    public func setMasterKeyCheck(_ check: [UInt8]) throws(PersonKeyStoreError) -> [UInt8] {
        state.withLock { state in
            if state.check == nil { state.check = check }
            return state.check ?? check
        }
    }

    /// Every user's key or mark, the users being forgotten, the destroy journal and the
    /// check value.
    private struct State {
        var keys: [String: StoredPersonKey] = [:]
        var forgetting: Set<String> = []
        /// The destroyed users in the order of their destroys: the one at index i has mark i + 1.
        var destroyed: [String] = []
        var check: [UInt8]?

        func keys(for userIds: [String]) -> [String: StoredPersonKey] {
            var found: [String: StoredPersonKey] = [:]
            for userId in userIds { found[userId] = keys[userId] }
            return found
        }
    }
}
