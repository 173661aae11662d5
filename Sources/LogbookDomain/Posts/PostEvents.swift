/// Something that happened to a post, on the stream `post-<postId>`.
public enum PostEvent: Sendable, Equatable {
    case created(PostCreated)
    case edited(PostEdited)
    case deleted(PostDeleted)
}

public struct PostCreated: Sendable, Equatable {
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

/// Only the fields that changed are present.
public struct PostEdited: Sendable, Equatable {
    public var postId: PostId
    public var title: PostTitle?
    public var content: PostContent?

    public init(postId: PostId, title: PostTitle? = nil, content: PostContent? = nil) {
        self.postId = postId
        self.title = title
        self.content = content
    }
}

public struct PostDeleted: Sendable, Equatable {
    public var postId: PostId

    public init(postId: PostId) { self.postId = postId }
}
