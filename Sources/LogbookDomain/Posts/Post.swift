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

/// Decides commands on one post. Creating needs the author's state: only a live user writes.
public enum PostDecider {
    public static func decide(_ command: PostCommand, state: PostState, author: UserState) throws(DomainError)
        -> [PostEvent]
    {
        switch command {
        case .create(let c):
            guard case .none = state else { throw .alreadyExists(.post, id: c.postId.rawValue) }
            guard author.liveUser != nil else { throw .notFound(.user, id: c.authorId.rawValue) }
            return [.created(PostCreated(postId: c.postId, authorId: c.authorId, title: c.title, content: c.content))]

        case .edit(let c):
            guard case .live(let post) = state else { throw .notFound(.post, id: c.postId.rawValue) }
            let change = PostEdited(
                postId: c.postId,
                title: c.title.flatMap { $0 == post.title ? nil : $0 },
                content: c.content.flatMap { $0 == post.content ? nil : $0 })
            return change.title != nil || change.content != nil ? [.edited(change)] : []

        case .delete(let c):
            guard case .live = state else { throw .notFound(.post, id: c.postId.rawValue) }
            return [.deleted(PostDeleted(postId: c.postId))]
        }
    }

    public static func evolve(_ state: PostState, _ event: PostEvent) -> PostState {
        state.evolved(by: event)
    }
}
