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
