import CSQLite
import Foundation
import LogbookApplication
import LogbookDomain

/// The SQL behind `SQLiteReadModelStore` and `SQLiteReadModelReader`: opening and checking
/// the file, reading rows back into views, the list queries, and carrying out the
/// `Projector`'s changes (as a `ReadModelWriter`, inside the store's transaction).
struct SQLiteReadModelTables: ReadModelWriter {
    let db: SQLiteConnection
    let path: String

    // MARK: Opening

    /// What a file holds, as far as opening it is concerned.
    enum Identity {
        /// A new, empty database.
        case empty
        /// A Logbook read-model store of a schema this build reads.
        case readModel
    }

    /// Opens `path` (creating an empty file when there is none).
    static func open(_ path: String) throws(ReadModelStoreError) -> SQLiteConnection {
        do {
            return try SQLiteConnection(path: path)
        } catch {
            throw storeError(error, path: path)
        }
    }

    /// Tells an empty database from a read-model store; throws for anything else, having
    /// written nothing.
    func identity() throws(ReadModelStoreError) -> Identity {
        let (tableCount, applicationId, version) = try sql { () throws(SQLiteError) in
            (
                try db.scalar("SELECT count(*) FROM sqlite_schema") ?? 0,
                try db.scalar("PRAGMA application_id") ?? 0, try db.scalar("PRAGMA user_version") ?? 0
            )
        }
        if tableCount == 0 && applicationId == 0 { return .empty }
        if applicationId == SQLiteSchema.applicationId {
            throw .notAReadModel(path: path, reason: "it is a Logbook event log")
        }
        guard applicationId == SQLiteReadModelSchema.applicationId else {
            throw .notAReadModel(
                path: path, reason: "it is another program's SQLite database (application_id \(applicationId))")
        }
        guard version <= SQLiteReadModelSchema.version else {
            throw .unsupportedSchema(found: Int(version), supported: Int(SQLiteReadModelSchema.version))
        }
        return .readModel
    }

    static func storeError(_ error: SQLiteError, path: String) -> ReadModelStoreError {
        if error.code & 0xFF == SQLITE_NOTADB {
            return .notAReadModel(path: path, reason: "it is not a SQLite database")
        }
        if error.isCorruption { return .corrupt("\(path): \(error)") }
        if error.isTransient { return .unavailable("\(path): \(error)", cause: error.cause) }
        return .failed("\(path): \(error)")
    }

    /// Runs SQLite calls, turning their errors into the store's.
    func sql<T>(_ body: () throws(SQLiteError) -> T) throws(ReadModelStoreError) -> T {
        do {
            return try body()
        } catch {
            throw Self.storeError(error, path: path)
        }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    /// `BEGIN` and `COMMIT` are statements prepared once: the live projection runs a
    /// transaction per feed batch, and parsing them each time showed in its profile.
    func transaction<T>(_ begin: String = "BEGIN", _ body: () throws(ReadModelStoreError) -> T)
        throws(ReadModelStoreError) -> T
    {
        try sql { () throws(SQLiteError) in try db.statement(begin).run([]) }
        do {
            let result = try body()
            try sql { () throws(SQLiteError) in try db.statement("COMMIT").run([]) }
            return result
        } catch {
            try? db.execute("ROLLBACK")
            throw error
        }
    }

    // MARK: Meta

    func checkpoint() throws(ReadModelStoreError) -> Int64 {
        let checkpoint = try sql { () throws(SQLiteError) in
            try db.scalar(SQL.checkpoint)
        }
        guard let checkpoint else { throw .corrupt("\(path): the checkpoint row is missing") }
        return checkpoint
    }

    func setCheckpoint(_ position: Int64) throws(ReadModelStoreError) {
        try sql { () throws(SQLiteError) in
            try db.statement(SQL.setCheckpoint).run([.int(position)])
        }
    }

    func isComplete() throws(ReadModelStoreError) -> Bool {
        try sql { () throws(SQLiteError) in try db.scalar("SELECT complete FROM read_model_meta WHERE id = 1") } == 1
    }

    func markComplete() throws(ReadModelStoreError) {
        try sql { () throws(SQLiteError) in try db.execute("UPDATE read_model_meta SET complete = 1 WHERE id = 1") }
    }

    // MARK: Lookups

    func user(_ id: UserId) throws(ReadModelStoreError) -> UserView? {
        try row(SQL.user, id.rawValue, Self.user)
    }

    func post(_ id: PostId) throws(ReadModelStoreError) -> PostView? {
        try row(SQL.post, id.rawValue, Self.post)
    }

    func product(_ id: ProductId) throws(ReadModelStoreError) -> ProductView? {
        try row(SQL.product, id.rawValue, Self.product)
    }

    private func row<View>(
        _ query: String, _ id: String, _ decode: (SQLiteStatement) throws(DomainError) -> View
    ) throws(ReadModelStoreError) -> View? {
        let statement = try sql { () throws(SQLiteError) in try db.statement(query) }
        defer { statement.reset() }
        guard
            try sql({ () throws(SQLiteError) in
                try statement.bind([.text(id)])
                return try statement.step()
            })
        else { return nil }
        return try decoded(statement, decode)
    }

    private func decoded<View>(_ statement: SQLiteStatement, _ decode: (SQLiteStatement) throws(DomainError) -> View)
        throws(ReadModelStoreError) -> View
    {
        do {
            return try decode(statement)
        } catch {
            throw .corrupt("\(path): a stored row is unreadable: \(error.message)")
        }
    }

    // MARK: Lists

    func users(page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<UserView> {
        try list("users", SQL.userColumns, [], [], page: page, perPage: perPage, Self.user)
    }

    func posts(authorId: UserId?, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<PostView> {
        guard let authorId else {
            return try list("posts", SQL.postColumns, [], [], page: page, perPage: perPage, Self.post)
        }
        return try list(
            "posts", SQL.postColumns, ["author_id = ?"], [.text(authorId.rawValue)], page: page, perPage: perPage,
            Self.post)
    }

    func products(_ filter: ProductFilter, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<ProductView> {
        var conditions: [String] = []
        var bindings: [SQLiteValue] = []
        if let category = filter.category {
            conditions.append("category = ?")
            bindings.append(.text(category.rawValue))
        }
        if filter.inStockOnly { conditions.append("stock > 0") }
        if let search = filter.search, !search.isEmpty {
            // SQLite reads bound text up to its first NUL; no name holds one, so nothing matches.
            guard !search.utf8.contains(0) else {
                let window = Page<ProductView>.window(page: page, perPage: perPage)
                return Page(items: [], page: window.page, perPage: window.perPage, total: 0)
            }
            conditions.append("instr(name_folded, ?) > 0")
            bindings.append(.text(ProductFilter.folded(search)))
        }
        return try list(
            "products", SQL.productColumns, conditions, bindings, page: page, perPage: perPage, Self.product)
    }

    func orders(userId: UserId, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<OrderView> {
        try list(
            "orders", SQL.orderColumns, ["user_id = ?"], [.text(userId.rawValue)], page: page, perPage: perPage,
            Self.order)
    }

    func counts() throws(ReadModelStoreError) -> ReadModelCounts {
        try sql { () throws(SQLiteError) in
            let row = try db.statement(SQL.counts)
            defer { row.reset() }
            _ = try row.step()
            return ReadModelCounts(
                users: Int(row.int64(0)), posts: Int(row.int64(1)), products: Int(row.int64(2)),
                orders: Int(row.int64(3)))
        }
    }

    /// One page of `table` in creation order, and the number of rows matching `conditions`.
    /// The caller runs it in a transaction so that both agree.
    private func list<View>(
        _ table: String, _ columns: String, _ conditions: [String], _ bindings: [SQLiteValue], page: Int,
        perPage: Int, _ decode: (SQLiteStatement) throws(DomainError) -> View
    ) throws(ReadModelStoreError) -> Page<View> {
        let window = Page<View>.window(page: page, perPage: perPage)
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let total = try sql { () throws(SQLiteError) in
            try db.scalar("SELECT count(*) FROM \(table)\(filter)", bindings) ?? 0
        }
        let statement = try sql { () throws(SQLiteError) in
            let statement = try db.statement(
                "SELECT \(columns) FROM \(table)\(filter) ORDER BY position LIMIT ? OFFSET ?")
            try statement.bind(bindings + [.int(Int64(window.perPage)), .int(Int64(window.offset))])
            return statement
        }
        defer { statement.reset() }
        var items: [View] = []
        while try sql({ () throws(SQLiteError) in try statement.step() }) {
            items.append(try decoded(statement, decode))
        }
        return Page(items: items, page: window.page, perPage: window.perPage, total: Int(total))
    }

    // MARK: Rows

    private static func user(_ row: SQLiteStatement) throws(DomainError) -> UserView {
        UserView(
            userId: try UserId(row.string(0)), name: row.string(1), email: row.string(2),
            gender: try Gender.parse(row.string(3), field: "gender"),
            birthday: row.isNull(4) ? nil : try Birthday(recorded: row.string(4)),
            subscription: try Subscription.parse(row.string(5), field: "subscription"),
            registeredAt: Timestamp(millisecondsSinceEpoch: row.int64(6)),
            updatedAt: Timestamp(millisecondsSinceEpoch: row.int64(7)))
    }

    private static func post(_ row: SQLiteStatement) throws(DomainError) -> PostView {
        PostView(
            postId: try PostId(row.string(0)), authorId: try UserId(row.string(1), field: "authorId"),
            title: row.string(2), content: row.string(3), createdAt: Timestamp(millisecondsSinceEpoch: row.int64(4)),
            updatedAt: Timestamp(millisecondsSinceEpoch: row.int64(5)))
    }

    private static func product(_ row: SQLiteStatement) throws(DomainError) -> ProductView {
        ProductView(
            productId: try ProductId(row.string(0)), name: row.string(1), price: try Money(recorded: row.string(2)),
            category: try ProductCategory.parse(row.string(3), field: "category"), stock: Int(row.int64(4)),
            updatedAt: Timestamp(millisecondsSinceEpoch: row.int64(5)))
    }

    private static func order(_ row: SQLiteStatement) throws(DomainError) -> OrderView {
        OrderView(
            orderId: try OrderId(row.string(0)), userId: try UserId(row.string(1)),
            productId: try ProductId(row.string(2)), quantity: Int(row.int64(3)),
            unitPrice: try Money(recorded: row.string(4), field: "unitPrice"),
            totalPrice: try Money(recorded: row.string(5), field: "totalPrice"),
            status: try OrderStatus.parse(row.string(6), field: "status"),
            placedAt: Timestamp(millisecondsSinceEpoch: row.int64(7)))
    }

    // MARK: Writes

    func write(_ change: ReadModelChange) throws(ReadModelStoreError) {
        try sql { () throws(SQLiteError) in try perform(change) }
    }

    private func perform(_ change: ReadModelChange) throws(SQLiteError) {
        switch change {
        case .insertUser(let user, let position):
            try db.statement(SQL.insertUser).run([
                .int(position), .text(user.userId.rawValue), .text(user.name), .text(user.email),
                .text(user.gender.rawValue), Self.text(user.birthday?.description), .text(user.subscription.rawValue),
                .int(user.registeredAt.millisecondsSinceEpoch), .int(user.updatedAt.millisecondsSinceEpoch),
            ])
        case .updateUser(let id, let changes):
            try db.statement(SQL.updateUser).run([
                Self.text(changes.name), Self.text(changes.email), Self.text(changes.gender?.rawValue),
                Self.text(changes.birthday?.description), Self.text(changes.subscription?.rawValue),
                .int(changes.updatedAt.millisecondsSinceEpoch), .text(id.rawValue),
            ])
        case .removeUser(let id):
            try db.statement(SQL.removeUser).run([.text(id.rawValue)])
        case .insertPost(let post, let position):
            let content = try NULSafeText(post.content)
            try db.statement(SQL.insertPost).run([
                .int(position), .text(post.postId.rawValue), .text(post.authorId.rawValue), .text(post.title),
                .text(content.text), .text(content.placeholder), .int(post.createdAt.millisecondsSinceEpoch),
                .int(post.updatedAt.millisecondsSinceEpoch),
            ])
        case .updatePost(let id, let changes):
            var content: NULSafeText?
            if let text = changes.content { content = try NULSafeText(text) }
            try db.statement(SQL.updatePost).run([
                Self.text(changes.title), Self.text(content?.text), .text(content?.placeholder ?? ""),
                .int(changes.updatedAt.millisecondsSinceEpoch), .text(id.rawValue),
            ])
        case .removePost(let id):
            try db.statement(SQL.removePost).run([.text(id.rawValue)])
        case .insertProduct(let product, let position):
            try db.statement(SQL.insertProduct).run([
                .int(position), .text(product.productId.rawValue), .text(product.name),
                .text(ProductFilter.folded(product.name)), .text(product.price.description),
                .text(product.category.rawValue), .int(Int64(product.stock)),
                .int(product.updatedAt.millisecondsSinceEpoch),
            ])
        case .updateProduct(let id, let changes) where changes.changesOnlyStock:
            // Restocks and purchases: a statement that leaves the category index alone.
            try db.statement(SQL.updateProductStock).run([
                .int(Int64(changes.stock ?? 0)), .int(changes.updatedAt.millisecondsSinceEpoch), .text(id.rawValue),
            ])
        case .updateProduct(let id, let changes):
            try db.statement(SQL.updateProduct).run([
                Self.text(changes.name), Self.text(changes.name.map(ProductFilter.folded)),
                Self.text(changes.price?.description), Self.text(changes.category?.rawValue),
                changes.stock.map { .int(Int64($0)) } ?? .null, .int(changes.updatedAt.millisecondsSinceEpoch),
                .text(id.rawValue),
            ])
        case .removeProduct(let id):
            try db.statement(SQL.removeProduct).run([.text(id.rawValue)])
        case .insertOrder(let order, let position):
            try db.statement(SQL.insertOrder).run([
                .int(position), .text(order.orderId.rawValue), .text(order.userId.rawValue),
                .text(order.productId.rawValue), .int(Int64(order.quantity)), .text(order.unitPrice.description),
                .text(order.totalPrice.description), .text(order.status.rawValue),
                .int(order.placedAt.millisecondsSinceEpoch),
            ])
        }
    }

    /// A value, or NULL for none (in an update: "leave the column as it is", by `coalesce`).
    private static func text(_ value: String?) -> SQLiteValue { value.map { .text($0) } ?? .null }
}

/// The statements of the read-model store, built once: the connection caches a prepared
/// statement per SQL text, so a text must not be rebuilt for every row. An insert leaves
/// an existing row with the same id alone, as `ReadModelChange` says; a clash of positions
/// is an error.
private enum SQL {
    static let userColumns = "user_id, name, email, gender, birthday, subscription, registered_at, updated_at"
    static let postColumns = "post_id, author_id, title, content, created_at, updated_at"
    static let productColumns = "product_id, name, price, category, stock, updated_at"
    static let orderColumns = "order_id, user_id, product_id, quantity, unit_price, total_price, status, placed_at"

    static let checkpoint = "SELECT checkpoint FROM read_model_meta WHERE id = 1"
    static let setCheckpoint = "UPDATE read_model_meta SET checkpoint = ? WHERE id = 1"
    static let counts =
        "SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM posts), (SELECT count(*) FROM products), "
        + "(SELECT count(*) FROM orders)"

    static let user = "SELECT \(userColumns) FROM users WHERE user_id = ?"
    static let post = "SELECT \(postColumns) FROM posts WHERE post_id = ?"
    static let product = "SELECT \(productColumns) FROM products WHERE product_id = ?"

    static let insertUser =
        "INSERT INTO users (position, user_id, name, email, gender, birthday, subscription, registered_at, updated_at) "
        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (user_id) DO NOTHING"
    static let updateUser =
        "UPDATE users SET name = coalesce(?, name), email = coalesce(?, email), gender = coalesce(?, gender), "
        + "birthday = coalesce(?, birthday), subscription = coalesce(?, subscription), updated_at = ? "
        + "WHERE user_id = ?"
    static let removeUser = "DELETE FROM users WHERE user_id = ?"
    static let insertPost =
        "INSERT INTO posts (position, post_id, author_id, title, content, created_at, updated_at) "
        + "VALUES (?, ?, ?, ?, replace(?, ?, char(0)), ?, ?) ON CONFLICT (post_id) DO NOTHING"
    static let updatePost =
        "UPDATE posts SET title = coalesce(?, title), content = coalesce(replace(?, ?, char(0)), content), "
        + "updated_at = ? WHERE post_id = ?"
    static let removePost = "DELETE FROM posts WHERE post_id = ?"
    static let insertProduct =
        "INSERT INTO products (position, product_id, name, name_folded, price, category, stock, updated_at) "
        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (product_id) DO NOTHING"
    static let updateProduct =
        "UPDATE products SET name = coalesce(?, name), name_folded = coalesce(?, name_folded), "
        + "price = coalesce(?, price), category = coalesce(?, category), stock = coalesce(?, stock), updated_at = ? "
        + "WHERE product_id = ?"
    static let updateProductStock = "UPDATE products SET stock = ?, updated_at = ? WHERE product_id = ?"
    static let removeProduct = "DELETE FROM products WHERE product_id = ?"
    static let insertOrder =
        "INSERT INTO orders (position, order_id, user_id, product_id, quantity, unit_price, total_price, status, "
        + "placed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (order_id) DO NOTHING"
}

/// Text bound through `replace(text, placeholder, char(0))`. `SQLiteStatement.bind` hands
/// SQLite a C string, which ends at the first NUL, and a post's content may hold NULs: each
/// becomes `placeholder`, one scalar the text does not contain, and SQL turns it back.
/// Text without NUL goes as it is, with an empty placeholder (`replace` then changes nothing).
struct NULSafeText {
    let text: String
    let placeholder: String

    /// Throws only for a text (longer than any post content) that uses every private-use scalar.
    init(_ original: String) throws(SQLiteError) {
        guard original.utf8.contains(0) else {
            text = original
            placeholder = ""
            return
        }
        // Private-use scalars: 6,400 in the BMP and 65,534 in plane 15; using them all takes
        // more than the 200,000 bytes a post's content may have.
        let used = Set(original.unicodeScalars)
        let candidates = (UInt32(0xE000)...0xF8FF).lazy.compactMap(Unicode.Scalar.init)
        let more = (UInt32(0xF0000)...0xFFFFD).lazy.compactMap(Unicode.Scalar.init)
        guard let free = candidates.first(where: { !used.contains($0) }) ?? more.first(where: { !used.contains($0) })
        else {
            throw SQLiteError(code: SQLITE_TOOBIG, message: "a text using every private-use scalar cannot hold a NUL")
        }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: original.unicodeScalars.lazy.map { $0.value == 0 ? free : $0 })
        text = String(scalars)
        placeholder = String(free)
    }
}
