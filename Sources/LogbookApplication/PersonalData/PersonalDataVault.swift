public import LogbookCrypto
public import LogbookDomain
import Synchronization

/// Seals and opens people's personal values with a key of their own, kept in a
/// `PersonKeyStore` wrapped by the master key; destroying a key forgets its person.
///
/// Promises:
/// - `seal` hands back a batch in which every personal field (`PersonalFields`) of every
///   event is sealed under its user's data key, made (durably, before the batch is
///   appended) for a user who has none; a request with an event of a forgotten user is
///   left out, and named with that user;
/// - `open` gives back a payload byte for byte as it was sealed, or, for a forgotten user,
///   with each personal value `null` and `"forgotten":true`; a value that does not open
///   (another key, another event or field, damage) is an error, never a guess;
/// - no personal value, key or address is ever put in an error message;
/// - `buckets` spreads addresses over claim streams by a hash keyed from the master key.
///
/// Shared by every thread of a process that reads or writes the log; unwrapped keys are
/// cached in memory (dropped all at once when the cache is full). Other processes sharing
/// the key store may destroy a cached key: `catchUpWithDestroyedKeys`, which every read of
/// `ProtectedEventStore` calls first, drops the keys destroyed since the last catch-up.
public final class PersonalDataVault: Sendable {
    /// How addresses are spread over the streams of their claims.
    public let buckets: EmailBucketing
    private let master: MasterKey
    private let keyStore: any PersonKeyStore
    private let cacheCapacity: Int
    private let cache: Mutex<KeyCache>
    /// The nonces of every value this vault seals.
    let nonces = NonceSource()

    private struct KeyCache {
        var keys: [String: SecretKey] = [:]
        /// Users whose key is destroyed: never cached again, whatever a late load brings.
        var forgotten: Set<String> = []
        /// Users whose `UserForgotten` was read here while their key may still exist (another
        /// process forgets them): their key is asked of the store each time, never cached,
        /// until the store says it is destroyed.
        var beingForgotten: Set<String> = []
        /// The key store's destroy mark up to which every destroy is in `forgotten`.
        var destroyMark: Int64
        /// Reads of keys from the store under way, whose keys may enter `keys` later.
        var loads = 0

        /// What the cache knows of `userId`: their key, or that they are forgotten; nil when
        /// the key store must be asked.
        func state(of userId: String) -> KeyState? {
            if let key = keys[userId] { return .key(key) }
            return forgotten.contains(userId) ? .forgotten : nil
        }
    }

    /// A key's state as the vault knows it.
    enum KeyState {
        case key(SecretKey)
        case forgotten
        case none
    }

    /// Why a vault cannot be opened.
    public enum OpeningError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The key store was written under another master key.
        case wrongMasterKey
        case keyStore(PersonKeyStoreError)

        public var description: String {
            switch self {
            case .wrongMasterKey:
                "the master key is not the one the key store was written under (its check value does not open)"
            case .keyStore(let error): error.description
            }
        }
    }

    /// Opens the vault over `keyStore`, checking that `master` is the key it was written
    /// under (and recording that it is, on a store that has no check yet).
    public init(master: MasterKey, keyStore: any PersonKeyStore, cacheCapacity: Int = 100_000)
        throws(OpeningError)
    {
        self.master = master
        self.keyStore = keyStore
        self.cacheCapacity = max(1, cacheCapacity)
        let hashKey = master.emailHashKey
        buckets = EmailBucketing { email in Self.bucket(of: email, key: hashKey) }
        do {
            let check = try keyStore.masterKeyCheck() ?? keyStore.setMasterKeyCheck(master.makeCheck())
            guard master.verify(check: check) else { throw OpeningError.wrongMasterKey }
            // Nothing is cached yet: every destroy up to here is what the store answers.
            cache = Mutex(KeyCache(destroyMark: try keyStore.latestDestroyMark()))
        } catch let error as OpeningError {
            throw error
        } catch let error as PersonKeyStoreError {
            throw .keyStore(error)
        } catch {
            throw .keyStore(.failed("\(error)"))
        }
    }

    /// The bucket of `email`: the first hex digits of its hash keyed by `key`.
    static func bucket(of email: NormalizedEmail, key: SecretKey) -> EmailBucket {
        let digest = KeyedHash.hash(Array(email.value.utf8), key: key, byteCount: 16)
        let hex = Hex.encode(Array(digest.prefix((EmailBucket.digits + 1) / 2)))
        // Four hex digits of a hash are always a valid bucket.
        return (try? EmailBucket(String(hex.prefix(EmailBucket.digits)))) ?? Self.firstBucket
    }

    private static let firstBucket: EmailBucket = {
        guard let bucket = try? EmailBucket(String(repeating: "0", count: EmailBucket.digits)) else {
            preconditionFailure("zeros are a bucket")
        }
        return bucket
    }()

    // MARK: Keys

    /// The key state of `userId`, from the cache or the key store.
    func state(of userId: String) throws(EventStoreError) -> KeyState {
        if let cached = cache.withLock({ $0.state(of: userId) }) { return cached }
        return try states(of: [userId])[userId] ?? KeyState.none
    }

    /// The key state of each of `userIds`, from the cache or the key store.
    private func states(of userIds: Set<String>) throws(EventStoreError) -> [String: KeyState] {
        var found: [String: KeyState] = [:]
        var missing: [String] = []
        cache.withLock { cache in
            for id in userIds {
                if let state = cache.state(of: id) { found[id] = state } else { missing.append(id) }
            }
        }
        guard !missing.isEmpty else { return found }
        return try loading { () throws(EventStoreError) in
            let stored: [String: StoredPersonKey]
            do throws(PersonKeyStoreError) {
                stored = try keyStore.keys(for: missing)
            } catch {
                throw Self.storeError(error)
            }
            for id in missing {
                switch stored[id] {
                case .wrapped(let wrapped)?: found[id] = .key(try unwrap(wrapped, userId: id))
                case .destroyed?: found[id] = .forgotten
                case nil: found[id] = KeyState.none
                }
            }
            remember(found)
            return found
        }
    }

    /// Runs `body`, which reads keys from the store and caches them, counted in `loads`
    /// until it has cached them (see `catchUpWithDestroyedKeys`).
    private func loading<T>(_ body: () throws(EventStoreError) -> T) throws(EventStoreError) -> T {
        cache.withLock { $0.loads += 1 }
        defer { cache.withLock { $0.loads -= 1 } }
        return try body()
    }

    private func unwrap(_ wrapped: [UInt8], userId: String) throws(EventStoreError) -> SecretKey {
        do {
            return try master.unwrap(wrapped, userId: userId)
        } catch {
            throw .corrupt("the data key of a user does not open under the master key: \(error)")
        }
    }

    private func remember(_ states: [String: KeyState]) {
        cache.withLock { cache in
            if cache.keys.count + states.count > cacheCapacity { cache.keys.removeAll(keepingCapacity: true) }
            for (id, state) in states {
                switch state {
                case .key(let key):
                    if !cache.beingForgotten.contains(id) && !cache.forgotten.contains(id) { cache.keys[id] = key }
                case .forgotten:
                    cache.forgotten.insert(id)
                    cache.beingForgotten.remove(id)
                case .none: break
                }
            }
        }
    }

    /// The key state of each of `owners`, in their order: from the cache, else from the key
    /// store, a key made and stored for those who have none (`keys(for:)` of a set).
    func keys(for owners: some Collection<String>) throws(EventStoreError) -> [KeyState] {
        var missing: Set<String> = []
        var states: [KeyState] = cache.withLock { cache in
            owners.map { owner in
                if let state = cache.state(of: owner) { return state }
                missing.insert(owner)
                return .none
            }
        }
        guard !missing.isEmpty else { return states }
        let loaded = try keys(for: missing)
        for (index, owner) in zip(states.indices, owners) {
            if case .none = states[index], let state = loaded[owner] { states[index] = state }
        }
        return states
    }

    /// Each of `userIds`' key, made and stored (in one durable call) for those who have
    /// none. A forgotten user has no key: the caller refuses what it was about to seal.
    private func keys(for userIds: Set<String>) throws(EventStoreError) -> [String: KeyState] {
        var states = try states(of: userIds)
        let lacking = states.compactMap { id, state -> String? in
            if case .none = state { id } else { nil }
        }
        guard !lacking.isEmpty else { return states }
        var made: [String: SecretKey] = [:]
        var wrapped: [String: [UInt8]] = [:]
        for id in lacking {
            let key = SecretKey.random()
            made[id] = key
            wrapped[id] = master.wrap(key, userId: id)
        }
        let created = try loading { () throws(EventStoreError) -> [String: KeyState] in
            let stored: [String: StoredPersonKey]
            do throws(PersonKeyStoreError) {
                stored = try keyStore.create(wrapped)
            } catch {
                throw Self.storeError(error)
            }
            var created: [String: KeyState] = [:]
            for id in lacking {
                switch stored[id] {
                case .wrapped(let bytes)?:
                    // Another writer may have stored its key first: that one is the user's key.
                    created[id] =
                        bytes == wrapped[id] ? made[id].map(KeyState.key) : .key(try unwrap(bytes, userId: id))
                case .destroyed?: created[id] = .forgotten
                case nil: throw .failed("the key store did not keep a new data key")
                }
            }
            remember(created)
            return created
        }
        states.merge(created) { _, new in new }
        return states
    }

    static func storeError(_ error: PersonKeyStoreError) -> EventStoreError {
        switch error {
        case .unavailable(let message): .unavailable("key store: \(message)", cause: .unknown)
        case .notAKeyStore, .unsupportedSchema, .failed: .failed(error.description)
        }
    }

    // MARK: Forgetting

    /// Records durably that forgetting `userId` has begun: done before the batch that
    /// appends its `UserForgotten`, so that a crash between that commit and `destroy`
    /// leaves a mark to finish from (`unfinishedForgetting`).
    public func beginForgetting(_ userId: String) throws(EventStoreError) {
        do {
            try keyStore.beginForgetting(userId)
        } catch {
            throw Self.storeError(error)
        }
    }

    /// Destroys `userId`'s key durably: from now on their personal values read as forgotten.
    public func destroy(_ userId: String) throws(EventStoreError) {
        do {
            try keyStore.destroy(userId)
        } catch {
            throw Self.storeError(error)
        }
        cache.withLock { cache in
            cache.keys[userId] = nil
            cache.forgotten.insert(userId)
            cache.beingForgotten.remove(userId)
        }
    }

    /// Drops from the cache every key the key store destroyed since the last catch-up (other
    /// processes sharing the store forget users too), and records those users as forgotten,
    /// as `destroy` does for its own. Called at the start of every read served, so a read
    /// that begins after a destroy returned (anywhere) never opens with the destroyed key.
    ///
    /// Why that holds, and the races it covers:
    /// - the cache's mark moves on with the forgotten users in one step under the lock, so a
    ///   reader that finds the mark past a destroy finds its user forgotten; two catch-ups
    ///   that overlap apply both answers, and the mark never moves back;
    /// - a load that read a key from the store before its destroy committed may cache it
    ///   after the catch-up that drops it: a forgotten user's key is never cached, so the
    ///   late key is refused (the read that loaded it, concurrent with the destroy, may use it);
    /// - with no key cached and no load under way there is nothing to drop, and the store is
    ///   not asked: the mark stays where it is (the next catch-up reads from it, a larger but
    ///   correct answer), and a key loaded later comes from the store after the destroy;
    /// - the vault's mark starts at the store's latest when it opens, with nothing cached.
    /// The seal path does not catch up: a request sealed with a key destroyed meanwhile is
    /// stopped by its stream's version expectation, the `UserForgotten` being on that stream.
    public func catchUpWithDestroyedKeys() throws(EventStoreError) {
        let mark: Int64? = cache.withLock { cache in
            cache.keys.isEmpty && cache.loads == 0 ? nil : cache.destroyMark
        }
        guard let mark else { return }
        let destroyed: DestroyedKeys
        do {
            destroyed = try keyStore.destroyedSince(mark)
        } catch {
            throw Self.storeError(error)
        }
        guard destroyed.mark > mark else { return }
        cache.withLock { cache in
            for userId in destroyed.userIds {
                cache.keys[userId] = nil
                cache.forgotten.insert(userId)
                cache.beingForgotten.remove(userId)
            }
            cache.destroyMark = max(cache.destroyMark, destroyed.mark)
        }
    }

    /// Notes that `userId`'s `UserForgotten` is in the log (read by this process, written by
    /// any): their key leaves the cache, and is asked of the key store on every use until it
    /// reads as destroyed, so a process never serves a forgotten user's values from its cache.
    public func forgettingWasRead(_ userId: String) {
        cache.withLock { cache in
            guard !cache.forgotten.contains(userId) else { return }
            cache.keys[userId] = nil
            cache.beingForgotten.insert(userId)
        }
    }

    /// The users whose forgetting began and whose key was not destroyed yet.
    public func unfinishedForgetting() throws(EventStoreError) -> [String] {
        do {
            return try keyStore.forgettingUsers()
        } catch {
            throw Self.storeError(error)
        }
    }
}
