import LogbookApplication
import LogbookDomain
import LogbookSQLite
import Synchronization

/// A `SQLiteReadModelReader` opened when a test first reads through it, not when the
/// harness is made: a bulk load leaves the WAL only while no other connection has the file
/// open, so a test that bulk loads first also tests the store written without a journal.
final class OnFirstUseReader: ReadModelReader {
    private let path: String
    private let opened = Mutex<SQLiteReadModelReader?>(nil)

    init(path: String) {
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

    func checkpoint() throws(ReadModelStoreError) -> Int64 { try reader().checkpoint() }
    func user(_ id: UserId) throws(ReadModelStoreError) -> UserView? { try reader().user(id) }
    func users(page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<UserView> {
        try reader().users(page: page, perPage: perPage)
    }
    func post(_ id: PostId) throws(ReadModelStoreError) -> PostView? { try reader().post(id) }
    func posts(authorId: UserId?, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<PostView> {
        try reader().posts(authorId: authorId, page: page, perPage: perPage)
    }
    func product(_ id: ProductId) throws(ReadModelStoreError) -> ProductView? { try reader().product(id) }
    func products(_ filter: ProductFilter, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<ProductView> {
        try reader().products(filter, page: page, perPage: perPage)
    }
    func orders(userId: UserId, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<OrderView> {
        try reader().orders(userId: userId, page: page, perPage: perPage)
    }
    func counts() throws(ReadModelStoreError) -> ReadModelCounts { try reader().counts() }
}
