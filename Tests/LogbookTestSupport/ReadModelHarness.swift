public import Foundation
public import LogbookApplication
import LogbookDomain
import LogbookMemory
import LogbookSQLite
public import Testing

/// The read-model stores every contract test runs against.
public enum ReadModelStoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory, sqlite

    public var testDescription: String { rawValue }
}

/// One store under test and the reader queries use: for SQLite a separate read-only
/// connection on the same file, opened when first read through (`OnFirstUseReader`), for
/// memory the store itself.
public final class ReadModelHarness {
    public let kind: ReadModelStoreKind
    public private(set) var store: any ReadModelStore
    public private(set) var reader: any ReadModelReader
    public let directory: URL?

    /// - Parameters:
    ///   - bulkFlushRows: for SQLite, how many rows a bulk load holds before writing.
    ///   - bulkFlushTextBytes: for SQLite, how many bytes of text a bulk load holds before writing.
    public init(_ kind: ReadModelStoreKind, bulkFlushRows: Int = 200_000, bulkFlushTextBytes: Int = 16 << 20) throws {
        self.kind = kind
        switch kind {
        case .memory:
            directory = nil
            let memory = InMemoryReadModelStore()
            store = memory
            reader = memory
        case .sqlite:
            let directory = try TemporaryDirectory.make()
            self.directory = directory
            let path = directory.appendingPathComponent("read-models.sqlite3").path
            store = try SQLiteReadModelStore(
                path: path, bulkFlushRows: bulkFlushRows, bulkFlushTextBytes: bulkFlushTextBytes)
            reader = OnFirstUseReader(path: path)
        }
    }

    deinit {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    public var path: String? { directory?.appendingPathComponent("read-models.sqlite3").path }

    /// Closes and reopens the store and its reader; the in-memory store has nothing to reopen.
    public func reopen() throws {
        guard kind == .sqlite, let path else { return }
        let placeholder = InMemoryReadModelStore()  // drop the old connections before opening new ones
        store = placeholder
        reader = placeholder
        store = try SQLiteReadModelStore(path: path)
        reader = OnFirstUseReader(path: path)
    }

    /// Applies every event of `log` the store has not applied yet, through the log's head.
    public func catchUp(_ log: Log) throws {
        let checkpoint = try store.checkpoint()
        try store.apply(log.events(after: checkpoint), through: log.head)
    }

    /// The store's rows and checkpoint as the reader sees them, to compare before and after.
    public func snapshot() throws -> Snapshot {
        Snapshot(
            checkpoint: try reader.checkpoint(), users: try reader.users(page: 1, perPage: 1000).items,
            posts: try reader.posts(authorId: nil, page: 1, perPage: 1000).items,
            products: try reader.products(ProductFilter(), page: 1, perPage: 1000).items,
            counts: try reader.counts())
    }

    /// What `snapshot()` reads: the first thousand rows of each list, the counts and the checkpoint.
    public struct Snapshot: Equatable {
        public var checkpoint: Int64
        public var users: [UserView]
        public var posts: [PostView]
        public var products: [ProductView]
        public var counts: ReadModelCounts

        public init(
            checkpoint: Int64, users: [UserView], posts: [PostView], products: [ProductView], counts: ReadModelCounts
        ) {
            self.checkpoint = checkpoint
            self.users = users
            self.posts = posts
            self.products = products
            self.counts = counts
        }
    }
}
