public import LogbookDomain

/// The read side of the read models, for answering queries. Each call sees committed
/// rows only, and sees every batch committed before it started; nothing stays open
/// between calls. A checkpoint read before a lookup is a lower bound of what the lookup
/// sees. Lists are ordered by the position of the event that created each row, oldest
/// first; `page` and `perPage` below 1 are served as 1.
///
/// A reader serves one thread at a time (the query thread); its calls block on I/O.
public protocol ReadModelReader: AnyObject, Sendable {
    /// The position the read models have applied through, 0 when nothing was applied.
    func checkpoint() throws(ReadModelStoreError) -> Int64

    /// The live user, or nil when there is none (never registered, or deleted).
    func user(_ id: UserId) throws(ReadModelStoreError) -> UserView?

    func users(page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<UserView>

    /// The live post, or nil.
    func post(_ id: PostId) throws(ReadModelStoreError) -> PostView?

    /// Live posts, only those of `authorId` when it is given.
    func posts(authorId: UserId?, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<PostView>

    /// The product on sale, or nil (never added, or removed).
    func product(_ id: ProductId) throws(ReadModelStoreError) -> ProductView?

    /// Products on sale that match `filter` (see `ProductFilter` for the search rule).
    func products(_ filter: ProductFilter, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<ProductView>

    /// The orders `userId` placed.
    func orders(userId: UserId, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<OrderView>

    /// How many live rows each read model holds.
    func counts() throws(ReadModelStoreError) -> ReadModelCounts
}

extension ReadModelReader {
    /// Products on sale, filtered as `ProductFilter` describes.
    public func products(
        category: ProductCategory? = nil, inStockOnly: Bool = false, search: String? = nil, page: Int, perPage: Int
    ) throws(ReadModelStoreError) -> Page<ProductView> {
        try products(
            ProductFilter(category: category, inStockOnly: inStockOnly, search: search), page: page, perPage: perPage)
    }
}
