public import LogbookDomain
public import LogbookJSON

/// A live post as queries show it. Deleted posts have no view. `createdAt` is the
/// recording time of `PostCreated`, `updatedAt` that of the last edit (or `createdAt`).
public struct PostView: ReadModelView {
    public var postId: PostId
    public var authorId: UserId
    public var title: String
    public var content: String
    public var createdAt: Timestamp
    public var updatedAt: Timestamp

    public init(
        postId: PostId, authorId: UserId, title: String, content: String, createdAt: Timestamp,
        updatedAt: Timestamp
    ) {
        self.postId = postId
        self.authorId = authorId
        self.title = title
        self.content = content
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// `{postId, authorId, title, content, createdAt, updatedAt}`.
    public var json: JSONValue {
        [
            "postId": .string(postId.rawValue), "authorId": .string(authorId.rawValue), "title": .string(title),
            "content": .string(content), "createdAt": .string(createdAt.rfc3339),
            "updatedAt": .string(updatedAt.rfc3339),
        ]
    }
}
