import LogbookDomain

/// Collects the row changes of many events and gives back fewer that have the same
/// effect, for a store being filled from the start of the log (a rebuild), where most
/// events change a row that an earlier event of the same batch created or changed.
///
/// Per row id it keeps a net change: remove the row first (or not), then insert a row if
/// none exists, then one update whose fields are the later-wins merge of every update
/// since. Carrying that out equals carrying out the original changes in order, because
/// updates of one row merge (a later value wins, `updatedAt` is the last one), an insert
/// after an insert is a no-op, and after a remove the row is known to be gone. The one
/// case a net change cannot hold, an insert after updates of a row that may or may not
/// exist, is handed back as it came (`drain()` returns it first, in order). Rows of
/// different ids never affect each other, so the order across ids is free.
public struct ReadModelChangeBuffer: ReadModelWriter {
    private var users: [UserId: NetChange<UserView, UserChanges>] = [:]
    private var posts: [PostId: NetChange<PostView, PostChanges>] = [:]
    private var products: [ProductId: NetChange<ProductView, ProductChanges>] = [:]
    private var orders: [OrderId: (view: OrderView, position: Int64)] = [:]
    /// Changes handed back as they came, in order; `drain()` gives them first.
    private var inOrder: [ReadModelChange] = []

    public init() {}

    /// How many rows (and changes kept in order) the buffer holds.
    public var count: Int { users.count + posts.count + products.count + orders.count + inOrder.count }

    /// The UTF-8 bytes of the texts the buffer holds: its rows' ids, names, e-mails, titles
    /// and contents, and its updates' changed texts (a text a later change replaced is no
    /// longer counted; the ids of rows only updated or removed are not counted either). A
    /// bound on it bounds the buffer's memory where a bound on `count` cannot: one post's
    /// content may be 200,000 bytes.
    public private(set) var textBytes = 0

    /// Writes `changes` in order (what `Projector.apply` does, without a generic writer).
    public mutating func write(contentsOf changes: [ReadModelChange]) {
        for change in changes { write(change) }
    }

    public mutating func write(_ change: ReadModelChange) {
        switch change {
        case .insertUser(let view, let position):
            Self.fold(&users, &inOrder, &textBytes, view.userId, .insert(view, position)) {
                .updateUser(view.userId, $0)
            }
        case .updateUser(let id, let changes):
            Self.fold(&users, &inOrder, &textBytes, id, .update(changes)) { .updateUser(id, $0) }
        case .removeUser(let id): Self.fold(&users, &inOrder, &textBytes, id, .remove) { .updateUser(id, $0) }
        case .insertPost(let view, let position):
            Self.fold(&posts, &inOrder, &textBytes, view.postId, .insert(view, position)) {
                .updatePost(view.postId, $0)
            }
        case .updatePost(let id, let changes):
            Self.fold(&posts, &inOrder, &textBytes, id, .update(changes)) { .updatePost(id, $0) }
        case .removePost(let id): Self.fold(&posts, &inOrder, &textBytes, id, .remove) { .updatePost(id, $0) }
        case .insertProduct(let view, let position):
            Self.fold(&products, &inOrder, &textBytes, view.productId, .insert(view, position)) {
                .updateProduct(view.productId, $0)
            }
        case .updateProduct(let id, let changes):
            Self.fold(&products, &inOrder, &textBytes, id, .update(changes)) { .updateProduct(id, $0) }
        case .removeProduct(let id): Self.fold(&products, &inOrder, &textBytes, id, .remove) { .updateProduct(id, $0) }
        case .insertOrder(let view, let position):
            // Orders are only inserted: the first insert of an id wins, as in a store.
            if orders.index(forKey: view.orderId) == nil {
                orders[view.orderId] = (view, position)
                textBytes += view.textBytes
            }
        }
    }

    /// Folds `step` into the net change of `id`, keeping `textBytes` in step; an insert
    /// after updates of a row that may not exist first hands those updates back in order
    /// (`spill` makes the change).
    private static func fold<Id: Hashable, View: TextSized, Changes: MergeableChanges>(
        _ table: inout [Id: NetChange<View, Changes>], _ inOrder: inout [ReadModelChange], _ textBytes: inout Int,
        _ id: Id, _ step: NetChange<View, Changes>.Step, spill: (Changes) -> ReadModelChange
    ) {
        // One lookup: the net change is folded in place, and hands back what it cannot hold.
        if let pending = table[id, default: NetChange()].foldSpilling(step, heldTextBytes: &textBytes) {
            inOrder.append(spill(pending))
            textBytes += pending.textBytes
        }
    }

    /// Every change to carry out, in an order with the same effect as the changes written,
    /// and empties the buffer: changes kept in order first, then removes, inserts by
    /// position, and updates.
    public mutating func drain() -> [ReadModelChange] {
        var changes: [ReadModelChange] = []
        drain { changes.append($0) }
        return changes
    }

    /// `drain()` handing each change to `write` in turn, without an array of them all. The
    /// buffer is empty afterwards, also when `write` throws.
    public mutating func drain<Failure: Error>(_ write: (ReadModelChange) throws(Failure) -> Void) throws(Failure) {
        // The tables keep their room: the next batch of rows fills them without growing again.
        let buffer = self
        defer { removeAll() }
        for change in buffer.inOrder { try write(change) }
        for (id, net) in buffer.users where net.removesFirst { try write(.removeUser(id)) }
        for (id, net) in buffer.posts where net.removesFirst { try write(.removePost(id)) }
        for (id, net) in buffer.products where net.removesFirst { try write(.removeProduct(id)) }
        // Inserts by position: only the positions and where each row is are sorted.
        var inserts: [(position: Int64, row: InsertedRow)] = []
        inserts.reserveCapacity(buffer.users.count + buffer.posts.count + buffer.products.count + buffer.orders.count)
        for index in buffer.users.indices {
            if let position = buffer.users.values[index].insert?.position { inserts.append((position, .user(index))) }
        }
        for index in buffer.posts.indices {
            if let position = buffer.posts.values[index].insert?.position { inserts.append((position, .post(index))) }
        }
        for index in buffer.products.indices {
            if let position = buffer.products.values[index].insert?.position {
                inserts.append((position, .product(index)))
            }
        }
        for index in buffer.orders.indices { inserts.append((buffer.orders.values[index].position, .order(index))) }
        inserts.sort { $0.position < $1.position }
        for (position, row) in inserts {
            switch row {
            case .user(let index):
                if let view = buffer.users.values[index].insert?.view {
                    try write(.insertUser(view, position: position))
                }
            case .post(let index):
                if let view = buffer.posts.values[index].insert?.view {
                    try write(.insertPost(view, position: position))
                }
            case .product(let index):
                if let view = buffer.products.values[index].insert?.view {
                    try write(.insertProduct(view, position: position))
                }
            case .order(let index): try write(.insertOrder(buffer.orders.values[index].view, position: position))
            }
        }
        for (id, net) in buffer.users { if let changes = net.update { try write(.updateUser(id, changes)) } }
        for (id, net) in buffer.posts { if let changes = net.update { try write(.updatePost(id, changes)) } }
        for (id, net) in buffer.products {
            if let changes = net.update { try write(.updateProduct(id, changes)) }
        }
    }

    private mutating func removeAll() {
        users.removeAll(keepingCapacity: true)
        posts.removeAll(keepingCapacity: true)
        products.removeAll(keepingCapacity: true)
        orders.removeAll(keepingCapacity: true)
        inOrder.removeAll()
        textBytes = 0
    }

    /// Where an inserted row is kept, for writing the inserts in position order.
    private enum InsertedRow {
        case user(Dictionary<UserId, NetChange<UserView, UserChanges>>.Index)
        case post(Dictionary<PostId, NetChange<PostView, PostChanges>>.Index)
        case product(Dictionary<ProductId, NetChange<ProductView, ProductChanges>>.Index)
        case order(Dictionary<OrderId, (view: OrderView, position: Int64)>.Index)
    }
}

/// The net effect of several changes of one row: remove it first (or not), then insert a
/// row unless one exists, then apply one update.
private struct NetChange<View: TextSized, Changes: MergeableChanges> {
    enum Step {
        case insert(View, Int64)
        case update(Changes)
        case remove
    }

    var removesFirst = false
    var insert: (view: View, position: Int64)?
    var update: Changes?

    /// The UTF-8 bytes of the texts it holds.
    var textBytes: Int { (insert?.view.textBytes ?? 0) + (update?.textBytes ?? 0) }

    /// The pending update when nothing is known about whether the row exists.
    var updateOfUnknownRow: Changes? { !removesFirst && insert == nil ? update : nil }

    /// `fold`, first taking out the update of an unknown row when `step` is an insert (an
    /// insert after it is not foldable): the caller hands that update back, before the rest.
    /// Adds the change in the texts it holds to `heldTextBytes`.
    mutating func foldSpilling(_ step: Step, heldTextBytes: inout Int) -> Changes? {
        let before = textBytes
        defer { heldTextBytes += textBytes - before }
        var pending: Changes?
        if case .insert = step, let update = updateOfUnknownRow {
            pending = update
            self = NetChange()
        }
        fold(step)
        return pending
    }

    /// Adds a later change. An insert after an update of an unknown row is not foldable;
    /// the caller hands the update back first.
    mutating func fold(_ step: Step) {
        switch step {
        case .remove:
            self = NetChange()
            removesFirst = true
        case .update(let changes):
            // After a remove with no insert since, there is no row to update.
            guard !(removesFirst && insert == nil) else { return }
            update = update.map { $0.merged(with: changes) } ?? changes
        case .insert(let view, let position):
            // After an insert the row exists: a second insert changes nothing.
            guard insert == nil else { return }
            insert = (view, position)
        }
    }
}

/// Field changes that can be merged: applying `merged(with: later)` equals applying
/// `self`, then `later`.
protocol MergeableChanges: TextSized {
    func merged(with later: Self) -> Self
}

/// A row or its changes, which know how many bytes of text they hold.
protocol TextSized {
    /// The UTF-8 bytes of its ids, names, e-mail, title and content.
    var textBytes: Int { get }
}

extension UserView: TextSized {
    var textBytes: Int { userId.rawValue.utf8.count + name.utf8.count + email.utf8.count }
}

extension PostView: TextSized {
    var textBytes: Int {
        postId.rawValue.utf8.count + authorId.rawValue.utf8.count + title.utf8.count + content.utf8.count
    }
}

extension ProductView: TextSized {
    var textBytes: Int { productId.rawValue.utf8.count + name.utf8.count }
}

extension OrderView: TextSized {
    var textBytes: Int { orderId.rawValue.utf8.count + userId.rawValue.utf8.count + productId.rawValue.utf8.count }
}

extension UserChanges: TextSized {
    var textBytes: Int { (name?.utf8.count ?? 0) + (email?.utf8.count ?? 0) }
}

extension PostChanges: TextSized {
    var textBytes: Int { (title?.utf8.count ?? 0) + (content?.utf8.count ?? 0) }
}

extension ProductChanges: TextSized {
    var textBytes: Int { name?.utf8.count ?? 0 }
}

extension UserChanges: MergeableChanges {
    func merged(with later: UserChanges) -> UserChanges {
        UserChanges(
            name: later.name ?? name, email: later.email ?? email, gender: later.gender ?? gender,
            birthday: later.birthday ?? birthday, subscription: later.subscription ?? subscription,
            updatedAt: later.updatedAt)
    }
}

extension PostChanges: MergeableChanges {
    func merged(with later: PostChanges) -> PostChanges {
        PostChanges(title: later.title ?? title, content: later.content ?? content, updatedAt: later.updatedAt)
    }
}

extension ProductChanges: MergeableChanges {
    func merged(with later: ProductChanges) -> ProductChanges {
        ProductChanges(
            name: later.name ?? name, price: later.price ?? price, category: later.category ?? category,
            stock: later.stock ?? stock, updatedAt: later.updatedAt)
    }
}
