public import LogbookApplication
import Synchronization

/// Person keys held in memory, for unit tests of the layers above: a `PersonKeyStore` with
/// the same promises as the SQLite and PostgreSQL stores except durability. `create` never
/// replaces what a user has (a wrapped key, or the mark of one destroyed); `destroy` drops
/// the bytes and leaves the mark, forever, and ends the user's forgetting; the master-key
/// check is written once. `forgettingUsers` lists users sorted by the bytes of their UTF-8,
/// as the other stores do. Each call takes a lock, and nothing here can fail.
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
            state.keys[userId] = .destroyed
            state.forgetting.remove(userId)
        }
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

    /// Every user's key or mark, the users being forgotten and the check value.
    private struct State {
        var keys: [String: StoredPersonKey] = [:]
        var forgetting: Set<String> = []
        var check: [UInt8]?

        func keys(for userIds: [String]) -> [String: StoredPersonKey] {
            var found: [String: StoredPersonKey] = [:]
            for userId in userIds { found[userId] = keys[userId] }
            return found
        }
    }
}
