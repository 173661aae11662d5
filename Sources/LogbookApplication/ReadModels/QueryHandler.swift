import LogbookDomain
public import LogbookJSON

/// Answers a `Query` from a `ReadModelReader` with the `result` of the wire reply: the
/// view for `Get…` (`not_found`, with `details.entity` and `details.id`, when the thing
/// does not exist or was deleted) and `{"items", "page", "perPage", "total"}` for lists.
/// A failing reader answers `unavailable`.
public enum QueryHandler {
    public static func answer(_ query: Query, from reader: some ReadModelReader) throws(ServiceError) -> JSONValue {
        do {
            return try result(query, reader)
        } catch let failure {
            switch failure {
            case .missing(let error): throw ServiceError(error)
            case .reader(let error): throw ServiceError(error)
            }
        }
    }

    private enum Failure: Error {
        case missing(DomainError)
        case reader(ReadModelStoreError)
    }

    private static func result(_ query: Query, _ reader: some ReadModelReader) throws(Failure) -> JSONValue {
        func read<T>(_ body: () throws(ReadModelStoreError) -> T) throws(Failure) -> T {
            do { return try body() } catch { throw .reader(error) }
        }
        func found<V: ReadModelView>(_ view: V?, _ kind: EntityKind, _ id: String) throws(Failure) -> JSONValue {
            guard let view else { throw .missing(.notFound(kind, id: id)) }
            return view.json
        }
        switch query {
        case .getUser(let id):
            return try found(try read { () throws(ReadModelStoreError) in try reader.user(id) }, .user, id.rawValue)
        case .listUsers(let page):
            return try read { () throws(ReadModelStoreError) in
                try reader.users(page: page.page, perPage: page.perPage)
            }.json
        case .getPost(let id):
            return try found(try read { () throws(ReadModelStoreError) in try reader.post(id) }, .post, id.rawValue)
        case .listPosts(let authorId, let page):
            return try read { () throws(ReadModelStoreError) in
                try reader.posts(authorId: authorId, page: page.page, perPage: page.perPage)
            }.json
        case .getProduct(let id):
            return try found(
                try read { () throws(ReadModelStoreError) in try reader.product(id) }, .product, id.rawValue)
        case .listProducts(let filter, let page):
            return try read { () throws(ReadModelStoreError) in
                try reader.products(filter, page: page.page, perPage: page.perPage)
            }.json
        case .listOrders(let userId, let page):
            return try read { () throws(ReadModelStoreError) in
                try reader.orders(userId: userId, page: page.page, perPage: page.perPage)
            }.json
        }
    }
}
