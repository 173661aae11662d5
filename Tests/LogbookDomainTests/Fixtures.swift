import LogbookDomain
import LogbookTestSupport
import Testing

// Builders that turn literals into valid domain values, commands and events, so tests read
// like the log. A literal these builders refuse is a mistake in the test, so they trap.

/// The "today" every test that validates a birthday uses; the domain never reads the clock.
let today = CalendarDate(year: 2026, month: 3, day: 1)!

extension Identifier {
    static func of(_ raw: String) -> Self { try! Self(raw) }
}

extension PersonName {
    static func of(_ raw: String) -> Self { try! Self(raw) }
}

extension EmailAddress {
    static func of(_ raw: String) -> Self { try! Self(raw) }
}

extension NormalizedEmail {
    static func of(_ raw: String) -> Self { try! EmailAddress(raw).normalized }
}

/// How the tests spread addresses over buckets (the service's is keyed; the domain only
/// needs some function).
let buckets = EmailBucketing.forTests

extension EmailBucket {
    /// The bucket the tests put `address` in.
    static func of(_ address: String) -> Self { buckets.bucket(of: .of(address)) }
}

extension EmailClaimState {
    /// A bucket in which each of `holders`' addresses is held by its user.
    static func holding(_ holders: [String: String]) -> Self {
        EmailClaimState(holders: Dictionary(uniqueKeysWithValues: holders.map { (.of($0.key), .of($0.value)) }))
    }
}

extension Money {
    static func of(_ raw: String) -> Self { try! Self(raw) }
}

extension Quantity {
    static func of(_ value: Int) -> Self { try! Self(value) }
}

extension Stock {
    static func of(_ value: Int) -> Self { try! Self(value) }
}

extension ProductName {
    static func of(_ raw: String) -> Self { try! Self(raw) }
}

extension PostTitle {
    static func of(_ raw: String) -> Self { try! Self(raw) }
}

extension PostContent {
    static func of(_ raw: String) -> Self { try! Self(raw) }
}

extension Birthday {
    static func of(_ raw: String) -> Self { try! Self(raw, today: today) }
}

extension DomainError {
    /// The field an `invalid_input` error names, or nil for other errors.
    var invalidField: String? {
        if case .invalidInput(let field, _) = self { field } else { nil }
    }
}

/// Expects `body` to be refused with `invalid_input` naming `field`.
func expectInvalidInput(
    field: String, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) {
    do {
        try body()
        Issue.record(
            "expected invalid_input for \(field), but it was accepted. \(comment ?? "")", sourceLocation: sourceLocation
        )
    } catch let error as DomainError {
        #expect(error.code == "invalid_input", comment, sourceLocation: sourceLocation)
        #expect(error.invalidField == field, comment, sourceLocation: sourceLocation)
        #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected a DomainError, got \(error)", sourceLocation: sourceLocation)
    }
}

// MARK: Commands

func registerUser(
    _ id: String, name: String = "Ann", email: String, gender: Gender = .unknown, birthday: String? = nil,
    subscription: Subscription = .free
) -> Command {
    .user(
        .register(
            RegisterUser(
                userId: .of(id), name: .of(name), email: .of(email), gender: gender,
                birthday: birthday.map(Birthday.of),
                subscription: subscription)))
}

func updateProfile(
    _ id: String, name: String? = nil, email: String? = nil, gender: Gender? = nil, birthday: String? = nil
) -> Command {
    .user(
        .updateProfile(
            try! UpdateUserProfile(
                userId: .of(id), name: name.map(PersonName.of), email: email.map(EmailAddress.of), gender: gender,
                birthday: birthday.map(Birthday.of))))
}

func changeSubscription(_ id: String, to subscription: Subscription) -> Command {
    .user(.changeSubscription(ChangeSubscription(userId: .of(id), subscription: subscription)))
}

func deleteUser(_ id: String) -> Command { .user(.delete(DeleteUser(userId: .of(id)))) }

func forgetUser(_ id: String) -> Command { .user(.forget(ForgetUser(userId: .of(id)))) }

func createPost(_ id: String, author: String, title: String = "Hello", content: String = "First post") -> Command {
    .post(.create(CreatePost(postId: .of(id), authorId: .of(author), title: .of(title), content: .of(content))))
}

func editPost(_ id: String, title: String? = nil, content: String? = nil) -> Command {
    .post(.edit(try! EditPost(postId: .of(id), title: title.map(PostTitle.of), content: content.map(PostContent.of))))
}

func deletePost(_ id: String) -> Command { .post(.delete(DeletePost(postId: .of(id)))) }

func addProduct(
    _ id: String, name: String = "Widget", price: String = "19.99", category: ProductCategory = .electronics,
    stock: Int = 10
) -> Command {
    .product(
        .add(AddProduct(productId: .of(id), name: .of(name), price: .of(price), category: category, stock: .of(stock))))
}

func updateProduct(_ id: String, name: String? = nil, price: String? = nil, category: ProductCategory? = nil)
    -> Command
{
    .product(
        .update(
            try! UpdateProduct(
                productId: .of(id), name: name.map(ProductName.of), price: price.map(Money.of), category: category)))
}

func restockProduct(_ id: String, quantity: Int) -> Command {
    .product(.restock(RestockProduct(productId: .of(id), quantity: .of(quantity))))
}

func removeProduct(_ id: String) -> Command { .product(.remove(RemoveProduct(productId: .of(id)))) }

func purchaseProduct(order: String, user: String, product: String, quantity: Int) -> Command {
    .product(
        .purchase(
            PurchaseProduct(orderId: .of(order), userId: .of(user), productId: .of(product), quantity: .of(quantity))))
}

// MARK: Events

func userRegistered(
    _ id: String, name: String = "Ann", email: String, gender: Gender = .unknown, birthday: String? = nil,
    subscription: Subscription = .free
) -> DomainEvent {
    .user(
        .registered(
            UserRegistered(
                userId: .of(id), name: .of(name), email: .of(email), gender: gender,
                birthday: birthday.map(Birthday.of),
                subscription: subscription)))
}

/// What the log holds after a successful registration: the user and the claim on the address.
func registration(_ id: String, name: String = "Ann", email: String, subscription: Subscription = .free)
    -> [DomainEvent]
{
    [userRegistered(id, name: name, email: email, subscription: subscription), emailClaimed(email, by: id)]
}

func profileUpdated(
    _ id: String, name: String? = nil, email: String? = nil, gender: Gender? = nil, birthday: String? = nil
) -> DomainEvent {
    .user(
        .profileUpdated(
            UserProfileUpdated(
                userId: .of(id), name: name.map(PersonName.of), email: email.map(EmailAddress.of), gender: gender,
                birthday: birthday.map(Birthday.of))))
}

func subscriptionChanged(_ id: String, from: Subscription, to: Subscription) -> DomainEvent {
    .user(.subscriptionChanged(SubscriptionChanged(userId: .of(id), from: from, to: to)))
}

func userDeleted(_ id: String) -> DomainEvent { .user(.deleted(UserDeleted(userId: .of(id)))) }

func userForgotten(_ id: String) -> DomainEvent { .user(.forgotten(UserForgotten(userId: .of(id)))) }

func erased(_ type: String, of id: String) -> DomainEvent {
    .user(.erased(ErasedUserEvent(userId: .of(id), typeName: type)))
}

func claimForgotten(_ email: String, by id: String) -> DomainEvent {
    .emailClaim(.forgotten(ForgottenEmailClaim(bucket: .of(email), userId: .of(id), typeName: "EmailClaimed")))
}

func emailClaimed(_ email: String, by id: String) -> DomainEvent {
    .emailClaim(.claimed(EmailClaimed(bucket: .of(email), email: .of(email), userId: .of(id))))
}

func emailReleased(_ email: String, by id: String) -> DomainEvent {
    .emailClaim(.released(EmailReleased(bucket: .of(email), email: .of(email), userId: .of(id))))
}

func postCreated(_ id: String, author: String, title: String = "Hello", content: String = "First post") -> DomainEvent {
    .post(.created(PostCreated(postId: .of(id), authorId: .of(author), title: .of(title), content: .of(content))))
}

func postEdited(_ id: String, title: String? = nil, content: String? = nil) -> DomainEvent {
    .post(.edited(PostEdited(postId: .of(id), title: title.map(PostTitle.of), content: content.map(PostContent.of))))
}

func postDeleted(_ id: String) -> DomainEvent { .post(.deleted(PostDeleted(postId: .of(id)))) }

func productAdded(
    _ id: String, name: String = "Widget", price: String = "19.99", category: ProductCategory = .electronics,
    stock: Int = 10
) -> DomainEvent {
    .product(
        .added(
            ProductAdded(productId: .of(id), name: .of(name), price: .of(price), category: category, stock: .of(stock)))
    )
}

func productUpdated(_ id: String, name: String? = nil, price: String? = nil, category: ProductCategory? = nil)
    -> DomainEvent
{
    .product(
        .updated(
            ProductUpdated(
                productId: .of(id), name: name.map(ProductName.of), price: price.map(Money.of), category: category)))
}

func productRestocked(_ id: String, quantity: Int, stock: Int) -> DomainEvent {
    .product(.restocked(ProductRestocked(productId: .of(id), quantity: .of(quantity), stock: .of(stock))))
}

func productRemoved(_ id: String) -> DomainEvent { .product(.removed(ProductRemoved(productId: .of(id)))) }

func productPurchased(_ product: String, order: String, user: String, quantity: Int, stock: Int) -> DomainEvent {
    .product(
        .purchased(
            ProductPurchased(
                productId: .of(product), orderId: .of(order), userId: .of(user), quantity: .of(quantity),
                stock: .of(stock))))
}

func orderPlaced(
    _ order: String, user: String, product: String, quantity: Int, unitPrice: String, totalPrice: String
) -> DomainEvent {
    .order(
        .placed(
            OrderPlaced(
                orderId: .of(order), userId: .of(user), productId: .of(product), quantity: .of(quantity),
                unitPrice: .of(unitPrice), totalPrice: .of(totalPrice), status: .pending)))
}
