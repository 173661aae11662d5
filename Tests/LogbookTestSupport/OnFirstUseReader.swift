public import LogbookApplication
public import LogbookDomain
import LogbookSQLite
import Synchronization

/// A `SQLiteReadModelReader` opened when a test first reads through it, not when the
/// harness is made: a bulk load leaves the WAL only while no other connection has the file
/// open, so a test that bulk loads first also tests the store written without a journal.
public final class OnFirstUseReader: ReadModelReader {
    private let path: String
    private let opened = Mutex<SQLiteReadModelReader?>(nil)

    public init(path: String) {
        self.path = path
    }

    private func reader() throws(ReadModelStoreError) -> SQLiteReadModelReader {
        try opened.withLock { (reader: inout SQLiteReadModelReader?) throws(ReadModelStoreError) in
            if let reader { return reader }
            let made = try SQLiteReadModelReader(path: path)
            reader = made
            return made
        }
    }

    public func checkpoint() throws(ReadModelStoreError) -> Int64 { try reader().checkpoint() }
    public func user(_ id: UserId) throws(ReadModelStoreError) -> UserView? { try reader().user(id) }
    public func users(page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<UserView> {
        try reader().users(page: page, perPage: perPage)
    }
    public func post(_ id: PostId) throws(ReadModelStoreError) -> PostView? { try reader().post(id) }
    public func posts(authorId: UserId?, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<PostView> {
        try reader().posts(authorId: authorId, page: page, perPage: perPage)
    }
    public func product(_ id: ProductId) throws(ReadModelStoreError) -> ProductView? { try reader().product(id) }
    public func products(_ filter: ProductFilter, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<
        ProductView
    > {
        try reader().products(filter, page: page, perPage: perPage)
    }
    public func orders(userId: UserId, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<OrderView> {
        try reader().orders(userId: userId, page: page, perPage: perPage)
    }
    public func counts() throws(ReadModelStoreError) -> ReadModelCounts { try reader().counts() }
}
