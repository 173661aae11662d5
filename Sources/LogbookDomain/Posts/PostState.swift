/// A live post.
public struct Post: Sendable, Equatable {
    public var id: PostId
    public var authorId: UserId
    public var title: PostTitle
    public var content: PostContent

    public init(id: PostId, authorId: UserId, title: PostTitle, content: PostContent) {
        self.id = id
        self.authorId = authorId
        self.title = title
        self.content = content
    }
}

/// A post stream folded.
public enum PostState: Sendable, Equatable {
    case none
    case live(Post)
    case deleted

    public static let initial = PostState.none

    public func evolved(by event: PostEvent) -> PostState {
        switch (self, event) {
        case (.none, .created(let e)):
            return .live(Post(id: e.postId, authorId: e.authorId, title: e.title, content: e.content))
        case (.live(var post), .edited(let e)):
            post.title = e.title ?? post.title
            post.content = e.content ?? post.content
            return .live(post)
        case (.live, .deleted):
            return .deleted
        default:
            return self
        }
    }
}
