public import LogbookDomain

/// A query of the wire contract (ARCHITECTURE §5), with valid values. `QueryParser`
/// builds it from a request; `QueryHandler` answers it.
public enum Query: Sendable, Equatable {
    case getUser(UserId)
    case listUsers(PageRequest)
    case getPost(PostId)
    /// All live posts, or those of one author.
    case listPosts(authorId: UserId?, PageRequest)
    case getProduct(ProductId)
    case listProducts(ProductFilter, PageRequest)
    case listOrders(userId: UserId, PageRequest)

    /// The query's type name on the wire (`GetUser`, …).
    public var typeName: String {
        switch self {
        case .getUser: "GetUser"
        case .listUsers: "ListUsers"
        case .getPost: "GetPost"
        case .listPosts: "ListPosts"
        case .getProduct: "GetProduct"
        case .listProducts: "ListProducts"
        case .listOrders: "ListOrders"
        }
    }
}
