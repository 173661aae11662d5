import Foundation
public import LogbookApplication
public import LogbookDomain
import Synchronization

/// Queries the read models of a file that a `SQLiteReadModelStore` created, on a
/// connection of its own that cannot write (`PRAGMA query_only`), so the query thread
/// reads while the projection thread writes. Each call reads committed rows in a read
/// transaction of its own (a list and its total agree) and ends it before returning, so a
/// reader never holds back the writer's WAL checkpoints or sees an old snapshot.
public final class SQLiteReadModelReader: ReadModelReader {
    public let path: String
    private let connection: Mutex<SQLiteConnection>

    /// Opens the store at `path` for reading. Throws `.unavailable` when there is no such
    /// file, `.notAReadModel` for a file that is not a read-model store (or one still
    /// empty), and `.unsupportedSchema` for a newer one.
    public init(path: String, busyTimeoutMilliseconds: Int = 5_000) throws(ReadModelStoreError) {
        self.path = path
        guard FileManager.default.fileExists(atPath: path) else {
            throw .unavailable("\(path) does not exist", cause: .cannotOpen)
        }
        let db = try SQLiteReadModelTables.open(path)
        let tables = SQLiteReadModelTables(db: db, path: path)
        try tables.sql { () throws(SQLiteError) in
            try db.execute("PRAGMA query_only = 1; PRAGMA busy_timeout = \(busyTimeoutMilliseconds);")
        }
        guard case .readModel = try tables.identity() else {
            throw .notAReadModel(path: path, reason: "it holds no read model yet (a SQLiteReadModelStore creates one)")
        }
        connection = Mutex(db)
    }

    /// Runs `body` in a read transaction of its own.
    private func read<T: Sendable>(_ body: (SQLiteReadModelTables) throws(ReadModelStoreError) -> T)
        throws(ReadModelStoreError) -> T
    {
        try connection.withLock { (db: inout SQLiteConnection) throws(ReadModelStoreError) -> T in
            let tables = SQLiteReadModelTables(db: db, path: path)
            return try tables.transaction { () throws(ReadModelStoreError) in try body(tables) }
        }
    }

    public func checkpoint() throws(ReadModelStoreError) -> Int64 {
        try read { (tables) throws(ReadModelStoreError) in try tables.checkpoint() }
    }

    public func user(_ id: UserId) throws(ReadModelStoreError) -> UserView? {
        try read { (tables) throws(ReadModelStoreError) in try tables.user(id) }
    }

    public func users(page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<UserView> {
        try read { (tables) throws(ReadModelStoreError) in try tables.users(page: page, perPage: perPage) }
    }

    public func post(_ id: PostId) throws(ReadModelStoreError) -> PostView? {
        try read { (tables) throws(ReadModelStoreError) in try tables.post(id) }
    }

    public func posts(authorId: UserId?, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<PostView> {
        try read { (tables) throws(ReadModelStoreError) in
            try tables.posts(authorId: authorId, page: page, perPage: perPage)
        }
    }

    public func product(_ id: ProductId) throws(ReadModelStoreError) -> ProductView? {
        try read { (tables) throws(ReadModelStoreError) in try tables.product(id) }
    }

    public func products(_ filter: ProductFilter, page: Int, perPage: Int) throws(ReadModelStoreError)
        -> Page<ProductView>
    {
        try read { (tables) throws(ReadModelStoreError) in try tables.products(filter, page: page, perPage: perPage) }
    }

    public func orders(userId: UserId, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<OrderView> {
        try read { (tables) throws(ReadModelStoreError) in
            try tables.orders(userId: userId, page: page, perPage: perPage)
        }
    }

    public func counts() throws(ReadModelStoreError) -> ReadModelCounts {
        try read { (tables) throws(ReadModelStoreError) in try tables.counts() }
    }
}
