import LogbookDomain
import Testing

@Suite("Posts")
struct PostTests {
    let ann = registration("u1", email: "ann@example.com")

    @Test func aLiveUserCreatesAPost() {
        given(ann)
            .when(createPost("p1", author: "u1", title: "  Hello  ", content: ""))
            .then([postCreated("p1", author: "u1", title: "Hello", content: "")])
    }

    @Test func theAuthorMustBeALiveUser() {
        given([])
            .when(createPost("p1", author: "u1"))
            .thenError(.notFound(.user, id: "u1"))
        given(ann + [userDeleted("u1"), emailReleased("ann@example.com", by: "u1")])
            .when(createPost("p1", author: "u1"))
            .thenError(.notFound(.user, id: "u1"))
    }

    @Test func aPostIdIsUsedOnceEvenAfterDelete() {
        given(ann + [postCreated("p1", author: "u1")])
            .when(createPost("p1", author: "u1"))
            .thenError(.alreadyExists(.post, id: "p1"))
        given(ann + [postCreated("p1", author: "u1"), postDeleted("p1")])
            .when(createPost("p1", author: "u1"))
            .thenError(.alreadyExists(.post, id: "p1"))
    }

    @Test func editingRecordsOnlyTheChangedFields() {
        given(ann + [postCreated("p1", author: "u1", title: "Hello", content: "One")])
            .when(editPost("p1", title: "Hello", content: "Two"))
            .then([postEdited("p1", content: "Two")])
        given(ann + [postCreated("p1", author: "u1", title: "Hello", content: "One")])
            .when(editPost("p1", title: "Bye"))
            .then([postEdited("p1", title: "Bye")])
    }

    @Test func editingToEmptyContentIsAllowed() {
        given(ann + [postCreated("p1", author: "u1", content: "One")])
            .when(editPost("p1", content: ""))
            .then([postEdited("p1", content: "")])
    }

    @Test func editingWithUnchangedFieldsRecordsNothing() {
        given(ann + [postCreated("p1", author: "u1", title: "Hello", content: "One")])
            .when(editPost("p1", title: " Hello", content: "One"))
            .thenNothingHappens()
    }

    @Test func anEditWithNoFieldsCannotBeBuilt() {
        #expect(throws: DomainError.invalidInput(field: "data", reason: "give at least one of title, content")) {
            try EditPost(postId: .of("p1"))
        }
    }

    @Test func editingOrDeletingAMissingPostIsNotFound() {
        let deleted = ann + [postCreated("p1", author: "u1"), postDeleted("p1")]
        given([]).when(editPost("p1", title: "x")).thenError(.notFound(.post, id: "p1"))
        given(deleted).when(editPost("p1", title: "x")).thenError(.notFound(.post, id: "p1"))
        given([]).when(deletePost("p1")).thenError(.notFound(.post, id: "p1"))
        given(deleted).when(deletePost("p1")).thenError(.notFound(.post, id: "p1"))
    }

    @Test func deletingALivePost() {
        given(ann + [postCreated("p1", author: "u1")]).when(deletePost("p1")).then([postDeleted("p1")])
    }

    @Test func aPostStaysEditableAfterItsAuthorIsDeleted() {
        // Not a rule of the spec, the current behaviour: editing reads only the post stream.
        given(ann + [postCreated("p1", author: "u1"), userDeleted("u1"), emailReleased("ann@example.com", by: "u1")])
            .when(editPost("p1", title: "Edited"))
            .then([postEdited("p1", title: "Edited")])
    }
}

@Suite("PostDecider and post state")
struct PostDeciderTests {
    let create = CreatePost(postId: .of("p1"), authorId: .of("u1"), title: .of("Hi"), content: .of("Body"))
    let author = UserState.live(
        User(
            id: .of("u1"), name: .of("Ann"), email: .of("ann@example.com"), gender: .unknown, birthday: nil,
            subscription: .free))

    @Test func createChecksTheIdBeforeTheAuthor() {
        #expect(throws: DomainError.alreadyExists(.post, id: "p1")) {
            try PostDecider.decide(.create(create), state: .deleted, author: .unregistered)
        }
        #expect(throws: DomainError.notFound(.user, id: "u1")) {
            try PostDecider.decide(.create(create), state: .none, author: .deleted)
        }
    }

    @Test func evolvingFollowsTheLifecycle() throws {
        var state = PostState.initial
        for event in try PostDecider.decide(.create(create), state: state, author: author) {
            state = PostDecider.evolve(state, event)
        }
        #expect(state == .live(Post(id: .of("p1"), authorId: .of("u1"), title: .of("Hi"), content: .of("Body"))))
        state = PostDecider.evolve(state, .edited(PostEdited(postId: .of("p1"), content: .of(""))))
        #expect(state == .live(Post(id: .of("p1"), authorId: .of("u1"), title: .of("Hi"), content: .of(""))))
        state = PostDecider.evolve(state, .deleted(PostDeleted(postId: .of("p1"))))
        #expect(state == .deleted)
        #expect(
            state.evolved(
                by: .created(PostCreated(postId: .of("p1"), authorId: .of("u1"), title: .of("x"), content: .of(""))))
                == .deleted)
        #expect(PostState.none.evolved(by: .edited(PostEdited(postId: .of("p1"), title: .of("x")))) == .none)
    }
}
