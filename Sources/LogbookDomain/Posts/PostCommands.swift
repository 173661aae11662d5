/// What can be asked of a post.
public enum PostCommand: Sendable, Equatable {
    case create(CreatePost)
    case edit(EditPost)
    case delete(DeletePost)

    /// The post the command is about.
    public var postId: PostId {
        switch self {
        case .create(let c): c.postId
        case .edit(let c): c.postId
        case .delete(let c): c.postId
        }
    }
}

public struct CreatePost: Sendable, Equatable {
    public var postId: PostId
    public var authorId: UserId
    public var title: PostTitle
    public var content: PostContent

    public init(postId: PostId, authorId: UserId, title: PostTitle, content: PostContent) {
        self.postId = postId
        self.authorId = authorId
        self.title = title
        self.content = content
    }
}

/// Absent fields stay as they are; at least one must be given, so an empty edit cannot be built.
public struct EditPost: Sendable, Equatable {
    public var postId: PostId
    public var title: PostTitle?
    public var content: PostContent?

    public init(postId: PostId, title: PostTitle? = nil, content: PostContent? = nil) throws(DomainError) {
        guard title != nil || content != nil else {
            throw .invalidInput(field: "data", reason: "give at least one of title, content")
        }
        self.postId = postId
        self.title = title
        self.content = content
    }
}

public struct DeletePost: Sendable, Equatable {
    public var postId: PostId

    public init(postId: PostId) { self.postId = postId }
}
