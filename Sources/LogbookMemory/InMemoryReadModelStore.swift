public import LogbookApplication
public import LogbookDomain
import Synchronization

/// Read models held in memory: a `ReadModelStore` and its own `ReadModelReader`, with the
/// same promises as the SQLite store except durability. Each call takes a lock, so one
/// thread may apply while another queries. `apply` checks and decodes the whole batch
/// before it writes anything, and writing in memory cannot fail, so a refused batch
/// leaves no trace. Lists scan their table, which is fine for tests and small data sets.
public final class InMemoryReadModelStore: ReadModelStore, ReadModelReader {
    private let state = Mutex(Tables())

    public init() {}

    public func checkpoint() throws(ReadModelStoreError) -> Int64 {
        state.withLock { $0.checkpoint }
    }

    public func apply(_ events: some EventBatch, through position: Int64) throws(ReadModelStoreError) {
        try state.withLock { (tables: inout Tables) throws(ReadModelStoreError) in
            try Projector.project(events, through: position, checkpoint: tables.checkpoint, into: &tables)
            tables.checkpoint = position
        }
    }

    public var isComplete: Bool {
        get throws(ReadModelStoreError) { state.withLock { $0.isComplete } }
    }

    public func markComplete() throws(ReadModelStoreError) {
        state.withLock { $0.isComplete = true }
    }

    // MARK: Reader

    public func user(_ id: UserId) throws(ReadModelStoreError) -> UserView? {
        state.withLock { $0.users.row(id) }
    }

    public func users(page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<UserView> {
        state.withLock { $0.users.page(page: page, perPage: perPage) { _ in true } }
    }

    public func post(_ id: PostId) throws(ReadModelStoreError) -> PostView? {
        state.withLock { $0.posts.row(id) }
    }

    public func posts(authorId: UserId?, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<PostView> {
        state.withLock { tables in
            tables.posts.page(page: page, perPage: perPage) { authorId == nil || $0.authorId == authorId }
        }
    }

    public func product(_ id: ProductId) throws(ReadModelStoreError) -> ProductView? {
        state.withLock { $0.products.row(id) }
    }

    public func products(_ filter: ProductFilter, page: Int, perPage: Int) throws(ReadModelStoreError)
        -> Page<ProductView>
    {
        state.withLock { $0.products.page(page: page, perPage: perPage, where: filter.matches) }
    }

    public func orders(userId: UserId, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<OrderView> {
        state.withLock { $0.orders.page(page: page, perPage: perPage) { $0.userId == userId } }
    }

    public func counts() throws(ReadModelStoreError) -> ReadModelCounts {
        state.withLock { tables in
            ReadModelCounts(
                users: tables.users.count, posts: tables.posts.count, products: tables.products.count,
                orders: tables.orders.count)
        }
    }
}

/// Every table and the checkpoint; the writer the `Projector` writes through.
private struct Tables: ReadModelWriter {
    var users = Table<UserId, UserView>()
    var posts = Table<PostId, PostView>()
    var products = Table<ProductId, ProductView>()
    var orders = Table<OrderId, OrderView>()
    var checkpoint: Int64 = 0
    var isComplete = false

    mutating func write(_ change: ReadModelChange) {
        switch change {
        case .insertUser(let user, let position): users.insert(user, id: user.userId, position: position)
        case .updateUser(let id, let changes): users.update(id, changes.applied(to:))
        case .removeUser(let id): users.remove(id)
        case .insertPost(let post, let position): posts.insert(post, id: post.postId, position: position)
        case .updatePost(let id, let changes): posts.update(id, changes.applied(to:))
        case .removePost(let id): posts.remove(id)
        case .insertProduct(let product, let position):
            products.insert(product, id: product.productId, position: position)
        case .updateProduct(let id, let changes): products.update(id, changes.applied(to:))
        case .removeProduct(let id): products.remove(id)
        case .insertOrder(let order, let position): orders.insert(order, id: order.orderId, position: position)
        }
    }
}

/// Rows by id, and their ids in the order of the positions that created them.
private struct Table<Key: Hashable, View> {
    private var rows: [Key: (position: Int64, view: View)] = [:]
    private var order: [(position: Int64, key: Key)] = []

    var count: Int { rows.count }

    func row(_ key: Key) -> View? { rows[key]?.view }

    /// Adds the row unless one with this id exists.
    mutating func insert(_ view: View, id key: Key, position: Int64) {
        guard rows[key] == nil else { return }
        rows[key] = (position, view)
        let index = self.index(of: position)
        order.insert((position, key), at: index)
    }

    /// Changes the row with this id, if there is one.
    mutating func update(_ key: Key, _ change: (View) -> View) {
        guard let row = rows[key] else { return }
        rows[key] = (row.position, change(row.view))
    }

    mutating func remove(_ key: Key) {
        guard let old = rows.removeValue(forKey: key) else { return }
        removeFromOrder(old.position)
    }

    func page(page: Int, perPage: Int, where include: (View) -> Bool) -> Page<View> {
        let window = Page<View>.window(page: page, perPage: perPage)
        var items: [View] = []
        var total = 0
        for entry in order {
            guard let view = rows[entry.key]?.view, include(view) else { continue }
            if total >= window.offset && items.count < window.perPage { items.append(view) }
            total += 1
        }
        return Page(items: items, page: window.page, perPage: window.perPage, total: total)
    }

    private mutating func removeFromOrder(_ position: Int64) {
        let index = index(of: position)
        if index < order.count && order[index].position == position { order.remove(at: index) }
    }

    /// The first index whose position is not below `position` (binary search).
    private func index(of position: Int64) -> Int {
        var low = 0
        var high = order.count
        while low < high {
            let middle = (low + high) / 2
            if order[middle].position < position { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
