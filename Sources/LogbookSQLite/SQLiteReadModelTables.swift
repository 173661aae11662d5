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
        if error.isTransient { return .unavailable("\(path): \(error)") }
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
    func transaction<T>(_ begin: String = "BEGIN", _ body: () throws(ReadModelStoreError) -> T)
        throws(ReadModelStoreError) -> T
    {
        try sql { () throws(SQLiteError) in try db.execute(begin) }
        do {
            let result = try body()
            try sql { () throws(SQLiteError) in try db.execute("COMMIT") }
            return result
        } catch {
            try? db.execute("ROLLBACK")
            throw error
        }
    }

    // MARK: Meta

    func checkpoint() throws(ReadModelStoreError) -> Int64 {
        let checkpoint = try sql { () throws(SQLiteError) in
            try db.scalar("SELECT checkpoint FROM read_model_meta WHERE id = 1")
        }
        guard let checkpoint else { throw .corrupt("\(path): the checkpoint row is missing") }
        return checkpoint
    }

    func setCheckpoint(_ position: Int64) throws(ReadModelStoreError) {
        try sql { () throws(SQLiteError) in
            try db.statement("UPDATE read_model_meta SET checkpoint = ? WHERE id = 1").run([.int(position)])
        }
    }

    func isComplete() throws(ReadModelStoreError) -> Bool {
        try sql { () throws(SQLiteError) in try db.scalar("SELECT complete FROM read_model_meta WHERE id = 1") } == 1
    }

    func markComplete() throws(ReadModelStoreError) {
        try sql { () throws(SQLiteError) in try db.execute("UPDATE read_model_meta SET complete = 1 WHERE id = 1") }
    }

    // MARK: Lookups

    private static let userColumns =
        "user_id, name, email, gender, birthday, subscription, registered_at, updated_at"
    private static let postColumns = "post_id, author_id, title, content, created_at, updated_at"
    private static let productColumns = "product_id, name, price, category, stock, updated_at"
    private static let orderColumns =
        "order_id, user_id, product_id, quantity, unit_price, total_price, status, placed_at"

    func user(_ id: UserId) throws(ReadModelStoreError) -> UserView? {
        try row("SELECT \(Self.userColumns) FROM users WHERE user_id = ?", id.rawValue, Self.user)
    }

    func post(_ id: PostId) throws(ReadModelStoreError) -> PostView? {
        try row("SELECT \(Self.postColumns) FROM posts WHERE post_id = ?", id.rawValue, Self.post)
    }

    func product(_ id: ProductId) throws(ReadModelStoreError) -> ProductView? {
        try row("SELECT \(Self.productColumns) FROM products WHERE product_id = ?", id.rawValue, Self.product)
    }

    func order(_ id: OrderId) throws(ReadModelStoreError) -> OrderView? {
        try row("SELECT \(Self.orderColumns) FROM orders WHERE order_id = ?", id.rawValue, Self.order)
    }

    func containsOrder(_ id: OrderId) throws(ReadModelStoreError) -> Bool {
        try sql { () throws(SQLiteError) in
            try db.scalar("SELECT 1 FROM orders WHERE order_id = ?", [.text(id.rawValue)]) != nil
        }
    }

    private func row<View>(
        _ query: String, _ id: String, _ decode: (SQLiteStatement) throws(DomainError) -> View
    ) throws(ReadModelStoreError) -> View? {
        let statement = try sql { () throws(SQLiteError) in try db.statement(query) }
        guard try sql({ () throws(SQLiteError) in try statement.bind([.text(id)]); return try statement.step() })
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
        try list("users", Self.userColumns, [], [], page: page, perPage: perPage, Self.user)
    }

    func posts(authorId: UserId?, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<PostView> {
        guard let authorId else { return try list("posts", Self.postColumns, [], [], page: page, perPage: perPage, Self.post) }
        return try list(
            "posts", Self.postColumns, ["author_id = ?"], [.text(authorId.rawValue)], page: page, perPage: perPage,
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
            "products", Self.productColumns, conditions, bindings, page: page, perPage: perPage, Self.product)
    }

    func orders(userId: UserId, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<OrderView> {
        try list(
            "orders", Self.orderColumns, ["user_id = ?"], [.text(userId.rawValue)], page: page, perPage: perPage,
            Self.order)
    }

    func counts() throws(ReadModelStoreError) -> ReadModelCounts {
        try sql { () throws(SQLiteError) in
            let row = try db.statement(
                "SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM posts), "
                    + "(SELECT count(*) FROM products), (SELECT count(*) FROM orders)")
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
            try db.statement(
                "INSERT INTO users (position, user_id, name, email, gender, birthday, subscription, registered_at, "
                    + "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            ).run([.int(position), .text(user.userId.rawValue)] + Self.userFields(user))
        case .updateUser(let user):
            try db.statement(
                "UPDATE users SET name = ?, email = ?, gender = ?, birthday = ?, subscription = ?, registered_at = ?, "
                    + "updated_at = ? WHERE user_id = ?"
            ).run(Self.userFields(user) + [.text(user.userId.rawValue)])
        case .removeUser(let id):
            try db.statement("DELETE FROM users WHERE user_id = ?").run([.text(id.rawValue)])
        case .insertPost(let post, let position):
            try db.statement(
                "INSERT INTO posts (position, post_id, author_id, title, content, created_at, updated_at) "
                    + "VALUES (?, ?, ?, ?, replace(?, ?, char(0)), ?, ?)"
            ).run([.int(position), .text(post.postId.rawValue)] + (try Self.postFields(post)))
        case .updatePost(let post):
            try db.statement(
                "UPDATE posts SET author_id = ?, title = ?, content = replace(?, ?, char(0)), created_at = ?, "
                    + "updated_at = ? WHERE post_id = ?"
            ).run((try Self.postFields(post)) + [.text(post.postId.rawValue)])
        case .removePost(let id):
            try db.statement("DELETE FROM posts WHERE post_id = ?").run([.text(id.rawValue)])
        case .insertProduct(let product, let position):
            try db.statement(
                "INSERT INTO products (position, product_id, name, name_folded, price, category, stock, updated_at) "
                    + "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            ).run([.int(position), .text(product.productId.rawValue)] + Self.productFields(product))
        case .updateProduct(let product):
            try db.statement(
                "UPDATE products SET name = ?, name_folded = ?, price = ?, category = ?, stock = ?, updated_at = ? "
                    + "WHERE product_id = ?"
            ).run(Self.productFields(product) + [.text(product.productId.rawValue)])
        case .removeProduct(let id):
            try db.statement("DELETE FROM products WHERE product_id = ?").run([.text(id.rawValue)])
        case .insertOrder(let order, let position):
            try db.statement(
                "INSERT INTO orders (position, order_id, user_id, product_id, quantity, unit_price, total_price, "
                    + "status, placed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            ).run([
                .int(position), .text(order.orderId.rawValue), .text(order.userId.rawValue),
                .text(order.productId.rawValue), .int(Int64(order.quantity)), .text(order.unitPrice.description),
                .text(order.totalPrice.description), .text(order.status.rawValue),
                .int(order.placedAt.millisecondsSinceEpoch),
            ])
        }
    }

    private static func userFields(_ user: UserView) -> [SQLiteValue] {
        [
            .text(user.name), .text(user.email), .text(user.gender.rawValue),
            user.birthday.map { .text($0.description) } ?? .null, .text(user.subscription.rawValue),
            .int(user.registeredAt.millisecondsSinceEpoch), .int(user.updatedAt.millisecondsSinceEpoch),
        ]
    }

    private static func postFields(_ post: PostView) throws(SQLiteError) -> [SQLiteValue] {
        let content = try NULSafeText(post.content)
        return [
            .text(post.authorId.rawValue), .text(post.title), .text(content.text), .text(content.placeholder),
            .int(post.createdAt.millisecondsSinceEpoch), .int(post.updatedAt.millisecondsSinceEpoch),
        ]
    }

    private static func productFields(_ product: ProductView) -> [SQLiteValue] {
        [
            .text(product.name), .text(ProductFilter.folded(product.name)), .text(product.price.description),
            .text(product.category.rawValue), .int(Int64(product.stock)), .int(product.updatedAt.millisecondsSinceEpoch),
        ]
    }
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
