public import LogbookDomain

/// One row write the `Projector` asks of a store. A store carries it out as told and adds
/// no logic of its own:
///
/// - an insert adds a row placed by the position of the creating event (its place in every
///   list), unless a row with that id exists, which it leaves as it is;
/// - an update sets the fields its changes give (`nil` leaves a field as it is) and
///   `updatedAt` on the row with that id, and does nothing when there is no such row;
/// - a remove deletes the row with that id, and does nothing when there is none.
public enum ReadModelChange: Sendable, Equatable {
    case insertUser(UserView, position: Int64)
    case updateUser(UserId, UserChanges)
    case removeUser(UserId)
    case insertPost(PostView, position: Int64)
    case updatePost(PostId, PostChanges)
    case removePost(PostId)
    case insertProduct(ProductView, position: Int64)
    case updateProduct(ProductId, ProductChanges)
    case removeProduct(ProductId)
    case insertOrder(OrderView, position: Int64)
}

/// New values for some fields of a user; `nil` leaves a field as it is.
public struct UserChanges: Sendable, Equatable {
    public var name: String?
    public var email: String?
    public var gender: Gender?
    public var birthday: Birthday?
    public var subscription: Subscription?
    public var updatedAt: Timestamp

    public init(
        name: String? = nil, email: String? = nil, gender: Gender? = nil, birthday: Birthday? = nil,
        subscription: Subscription? = nil, updatedAt: Timestamp
    ) {
        self.name = name
        self.email = email
        self.gender = gender
        self.birthday = birthday
        self.subscription = subscription
        self.updatedAt = updatedAt
    }

    /// `user` with these changes made.
    public func applied(to user: UserView) -> UserView {
        var user = user
        user.name = name ?? user.name
        user.email = email ?? user.email
        user.gender = gender ?? user.gender
        user.birthday = birthday ?? user.birthday
        user.subscription = subscription ?? user.subscription
        user.updatedAt = updatedAt
        return user
    }
}

/// New values for some fields of a post; `nil` leaves a field as it is.
public struct PostChanges: Sendable, Equatable {
    public var title: String?
    public var content: String?
    public var updatedAt: Timestamp

    public init(title: String? = nil, content: String? = nil, updatedAt: Timestamp) {
        self.title = title
        self.content = content
        self.updatedAt = updatedAt
    }

    /// `post` with these changes made.
    public func applied(to post: PostView) -> PostView {
        var post = post
        post.title = title ?? post.title
        post.content = content ?? post.content
        post.updatedAt = updatedAt
        return post
    }
}

/// New values for some fields of a product; `nil` leaves a field as it is.
public struct ProductChanges: Sendable, Equatable {
    public var name: String?
    public var price: Money?
    public var category: ProductCategory?
    public var stock: Int?
    public var updatedAt: Timestamp

    public init(
        name: String? = nil, price: Money? = nil, category: ProductCategory? = nil, stock: Int? = nil,
        updatedAt: Timestamp
    ) {
        self.name = name
        self.price = price
        self.category = category
        self.stock = stock
        self.updatedAt = updatedAt
    }

    /// True when only the stock (and `updatedAt`) changes, as for restocks and purchases.
    public var changesOnlyStock: Bool { name == nil && price == nil && category == nil && stock != nil }

    /// `product` with these changes made.
    public func applied(to product: ProductView) -> ProductView {
        var product = product
        product.name = name ?? product.name
        product.price = price ?? product.price
        product.category = category ?? product.category
        product.stock = stock ?? product.stock
        product.updatedAt = updatedAt
        return product
    }
}
