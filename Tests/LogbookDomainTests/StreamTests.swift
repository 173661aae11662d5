import LogbookDomain
import Testing

@Suite("Streams")
struct StreamTests {
    static let streams: [StreamId] = [
        .user(.of("u1")), .post(.of("p-1")), .product(.of("pr_1")), .order(.of("550e8400-e29b-41d4-a716-446655440000")),
        .email(try! EmailBucket("3fa2")),
    ]

    @Test func namesAreCategoryDashId() {
        #expect(
            Self.streams.map(\.name) == [
                "user-u1", "post-p-1", "product-pr_1", "order-550e8400-e29b-41d4-a716-446655440000",
                "email-3fa2",
            ])
        #expect(Self.streams.map(\.category) == ["user", "post", "product", "order", "email"])
        #expect(Self.streams.map(\.description) == Self.streams.map(\.name))
    }

    @Test(arguments: streams)
    func namesReadBack(_ stream: StreamId) {
        #expect(StreamId(name: stream.name) == stream)
    }

    @Test(arguments: [
        "", "user", "user-", "user-a b", "users-u1", "customer-u1", "User-u1", "-u1", "email-Ann@example.com",
        "email-ann@example.com", "email-3FA2", "email-3fa", "email-3fa2b", "email-not-an-address",
        "order-" + String(repeating: "o", count: 65), "post-p.1",
    ])
    func refusesOtherNames(_ name: String) {
        #expect(StreamId(name: name) == nil)
    }

    @Test func everyEventNamesItsStreamAndType() {
        let cases: [(DomainEvent, String, String)] = [
            (userRegistered("u1", email: "a@b.co"), "user-u1", "UserRegistered"),
            (profileUpdated("u1", name: "B"), "user-u1", "UserProfileUpdated"),
            (subscriptionChanged("u1", from: .free, to: .premium), "user-u1", "SubscriptionChanged"),
            (userDeleted("u1"), "user-u1", "UserDeleted"),
            (emailClaimed("A@B.co", by: "u1"), "email-\(EmailBucket.of("a@b.co"))", "EmailClaimed"),
            (emailReleased("a@b.co", by: "u1"), "email-\(EmailBucket.of("a@b.co"))", "EmailReleased"),
            (postCreated("p1", author: "u1"), "post-p1", "PostCreated"),
            (postEdited("p1", title: "t"), "post-p1", "PostEdited"),
            (postDeleted("p1"), "post-p1", "PostDeleted"),
            (productAdded("pr1"), "product-pr1", "ProductAdded"),
            (productUpdated("pr1", price: "1"), "product-pr1", "ProductUpdated"),
            (productRestocked("pr1", quantity: 1, stock: 1), "product-pr1", "ProductRestocked"),
            (productRemoved("pr1"), "product-pr1", "ProductRemoved"),
            (
                productPurchased("pr1", order: "o1", user: "u1", quantity: 1, stock: 0), "product-pr1",
                "ProductPurchased"
            ),
            (
                orderPlaced("o1", user: "u1", product: "pr1", quantity: 1, unitPrice: "1", totalPrice: "1"), "order-o1",
                "OrderPlaced"
            ),
        ]
        for (event, stream, type) in cases {
            #expect(event.stream.name == stream)
            #expect(event.typeName == type)
        }
    }

    @Test func everyCommandNamesItsTypeAndPrimaryStream() {
        let cases: [(Command, String, String)] = [
            (registerUser("u1", email: "a@b.co"), "RegisterUser", "user-u1"),
            (updateProfile("u1", name: "B"), "UpdateUserProfile", "user-u1"),
            (changeSubscription("u1", to: .premium), "ChangeSubscription", "user-u1"),
            (deleteUser("u1"), "DeleteUser", "user-u1"),
            (forgetUser("u1"), "ForgetUser", "user-u1"),
            (createPost("p1", author: "u1"), "CreatePost", "post-p1"),
            (editPost("p1", title: "t"), "EditPost", "post-p1"),
            (deletePost("p1"), "DeletePost", "post-p1"),
            (addProduct("pr1"), "AddProduct", "product-pr1"),
            (updateProduct("pr1", name: "n"), "UpdateProduct", "product-pr1"),
            (restockProduct("pr1", quantity: 1), "RestockProduct", "product-pr1"),
            (removeProduct("pr1"), "RemoveProduct", "product-pr1"),
            (purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 1), "PurchaseProduct", "product-pr1"),
        ]
        for (command, type, stream) in cases {
            #expect(command.typeName == type)
            #expect(command.primaryStream.name == stream)
            #expect(command.streamsRead(given: AggregateStates(), buckets: buckets).first == command.primaryStream)
        }
    }
}

@Suite("Streams a command reads")
struct StreamsReadTests {
    let known = AggregateStates(folding: registration("u1", email: "Ann@Example.com"))

    func names(_ command: Command, _ states: AggregateStates) -> [String] {
        command.streamsRead(given: states, buckets: buckets).map(\.name)
    }

    @Test func registeringReadsTheUserAndTheNewAddress() {
        #expect(
            names(registerUser("u1", email: "Ann@Example.com"), AggregateStates()) == [
                "user-u1", "email-\(EmailBucket.of("ann@example.com"))",
            ])
    }

    @Test func theCurrentAddressIsReadOnceTheUserIsKnown() {
        #expect(names(deleteUser("u1"), AggregateStates()) == ["user-u1"])
        #expect(names(deleteUser("u1"), known) == ["user-u1", "email-\(EmailBucket.of("ann@example.com"))"])
        #expect(
            names(changeSubscription("u1", to: .premium), known) == [
                "user-u1", "email-\(EmailBucket.of("ann@example.com"))",
            ])
        #expect(
            names(updateProfile("u1", name: "Bo"), known) == ["user-u1", "email-\(EmailBucket.of("ann@example.com"))"])
        #expect(
            names(updateProfile("u1", email: "bo@example.com"), known)
                == [
                    "user-u1", "email-\(EmailBucket.of("bo@example.com"))",
                    "email-\(EmailBucket.of("ann@example.com"))",
                ])
    }

    @Test func theCurrentAddressIsNotReadTwice() {
        let bucket = "email-\(EmailBucket.of("ann@example.com"))"
        #expect(names(updateProfile("u1", email: "ANN@example.com"), known) == ["user-u1", bucket])
        #expect(names(registerUser("u1", email: "ann@example.com"), known) == ["user-u1", bucket])
    }

    @Test func loadingUntilNothingNewIsNamedFindsTheCurrentAddress() {
        #expect(streamsRead(by: deleteUser("u1"), in: known) == [.user(.of("u1")), .email(.of("ann@example.com"))])
        #expect(streamsRead(by: forgetUser("u1"), in: known) == [.user(.of("u1")), .email(.of("ann@example.com"))])
    }

    @Test func deletedUsersHaveNoCurrentAddress() {
        let deleted = AggregateStates(
            folding: registration("u1", email: "ann@example.com") + [
                userDeleted("u1"), emailReleased("ann@example.com", by: "u1"),
            ])
        #expect(names(deleteUser("u1"), deleted) == ["user-u1"])
    }

    @Test func postsAndProductsReadWhatTheyCheck() {
        #expect(names(createPost("p1", author: "u1"), AggregateStates()) == ["post-p1", "user-u1"])
        #expect(names(editPost("p1", title: "t"), AggregateStates()) == ["post-p1"])
        #expect(names(deletePost("p1"), AggregateStates()) == ["post-p1"])
        #expect(
            names(purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 1), AggregateStates())
                == ["product-pr1", "order-o1", "user-u1"])
        #expect(names(restockProduct("pr1", quantity: 1), AggregateStates()) == ["product-pr1"])
    }
}

@Suite("Aggregate states")
struct AggregateStatesTests {
    @Test func absentStreamsReadAsNew() {
        let states = AggregateStates()
        #expect(states.user(.of("u1")) == .unregistered)
        #expect(states.emailClaims(.of("a@b.co")) == .initial)
        #expect(states.post(.of("p1")) == PostState.none)
        #expect(states.product(.of("pr1")) == ProductState.none)
        #expect(states.order(.of("o1")) == OrderState.none)
        #expect(states.byStream.isEmpty)
        for stream in StreamTests.streams { #expect(states[stream] == AggregateState.initial(for: stream)) }
    }

    @Test func foldingKeepsStreamsApart() {
        let states = AggregateStates(
            folding: registration("u1", email: "ann@example.com")
                + registration("u2", name: "Bo", email: "bo@example.com")
                + [userDeleted("u1"), productAdded("pr1", stock: 3), productRestocked("pr1", quantity: 2, stock: 5)])
        #expect(states.user(.of("u1")) == .deleted)
        #expect(states.user(.of("u2")).liveUser?.name == PersonName.of("Bo"))
        #expect(states.emailClaims(.of("bo@example.com")).holder(of: .of("bo@example.com")) == .of("u2"))
        #expect(states.product(.of("pr1")).liveProduct?.stock == Stock.of(5))
        #expect(states.byStream.count == 5)
    }

    @Test func anEventOfAnotherKindLeavesAStateAlone() {
        let state = AggregateState.user(.unregistered)
        #expect(state.evolved(by: productAdded("pr1")) == state)
        #expect(AggregateState.order(.none).evolved(by: userDeleted("u1")) == .order(.none))
    }
}
