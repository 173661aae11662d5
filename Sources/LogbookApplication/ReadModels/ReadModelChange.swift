public import LogbookDomain

/// One row write the `Projector` asks of a store. A store carries it out as told and adds
/// no logic of its own: an insert names the position of the creating event (the row's
/// place in every list), an update replaces every field of the row with that id but keeps
/// its place, a remove deletes the row with that id (nothing when there is none).
public enum ReadModelChange: Sendable, Equatable {
    case insertUser(UserView, position: Int64)
    case updateUser(UserView)
    case removeUser(UserId)
    case insertPost(PostView, position: Int64)
    case updatePost(PostView)
    case removePost(PostId)
    case insertProduct(ProductView, position: Int64)
    case updateProduct(ProductView)
    case removeProduct(ProductId)
    case insertOrder(OrderView, position: Int64)
}
