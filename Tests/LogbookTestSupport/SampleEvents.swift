public import LogbookDomain

/// One event of every kind, with the awkward values worth covering (quotes, line breaks,
/// non-ASCII text, zero stock, cents), for codec and envelope tests.
public enum SampleEvents {
    public static let all: [DomainEvent] = {
        do {
            let u1 = try UserId("u1")
            let p1 = try ProductId("p1")
            let o1 = try OrderId("o1")
            let email = try EmailAddress("Ann@Example.com")
            let bucket = EmailBucketing.forTests.bucket(of: email.normalized)
            return [
                .user(
                    .registered(
                        UserRegistered(
                            userId: u1, name: try PersonName("Ann"), email: email, gender: .female,
                            birthday: try Birthday(recorded: "1990-02-28"), subscription: .premium))),
                .user(
                    .registered(
                        UserRegistered(
                            userId: u1, name: try PersonName("Ann"), email: email, gender: .unknown, birthday: nil,
                            subscription: .free))),
                .user(.profileUpdated(UserProfileUpdated(userId: u1, name: try PersonName("Annie")))),
                .user(
                    .profileUpdated(
                        UserProfileUpdated(
                            userId: u1, email: try EmailAddress("a@b.co"), gender: .other,
                            birthday: try Birthday(recorded: "2000-01-01")))),
                .user(.subscriptionChanged(SubscriptionChanged(userId: u1, from: .free, to: .enterprise))),
                .user(.deleted(UserDeleted(userId: u1))),
                .emailClaim(.claimed(EmailClaimed(bucket: bucket, email: email.normalized, userId: u1))),
                .emailClaim(.released(EmailReleased(bucket: bucket, email: email.normalized, userId: u1))),
                .post(
                    .created(
                        PostCreated(
                            postId: try PostId("post-1"), authorId: u1, title: try PostTitle("Hi \"there\""),
                            content: try PostContent("line 1\nline 2 ✓")))),
                .post(.edited(PostEdited(postId: try PostId("post-1"), content: try PostContent("")))),
                .post(.deleted(PostDeleted(postId: try PostId("post-1")))),
                .product(
                    .added(
                        ProductAdded(
                            productId: p1, name: try ProductName("Tea"), price: try Money("19.9"), category: .food,
                            stock: try Stock(0)))),
                .product(.updated(ProductUpdated(productId: p1, price: try Money("0.05"), category: .clothing))),
                .product(.restocked(ProductRestocked(productId: p1, quantity: try Quantity(5), stock: try Stock(5)))),
                .product(.removed(ProductRemoved(productId: p1))),
                .product(
                    .purchased(
                        ProductPurchased(
                            productId: p1, orderId: o1, userId: u1, quantity: try Quantity(2), stock: try Stock(3)))),
                .order(
                    .placed(
                        OrderPlaced(
                            orderId: o1, userId: u1, productId: p1, quantity: try Quantity(3),
                            unitPrice: try Money("0.10"),
                            totalPrice: try Money("0.30"), status: .pending))),
                .user(.forgotten(UserForgotten(userId: u1))),
            ]
        } catch {
            fatalError("bad sample: \(error)")
        }
    }()
}
