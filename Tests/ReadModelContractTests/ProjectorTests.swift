import LogbookApplication
import LogbookDomain
import LogbookTestSupport
import Testing

/// The projector on its own: each event becomes at most one change, decided from the
/// event alone.
@Suite("Projector")
struct ProjectorTests {
    private static func projected(_ event: DomainEvent, at position: Int64 = 7) -> ProjectedEvent {
        ProjectedEvent(
            position: position, recordedAt: Timestamp(millisecondsSinceEpoch: 1_000 * position), event: event)
    }

    @Test func changesCarryOnlyWhatTheEventSays() throws {
        let at = Timestamp(millisecondsSinceEpoch: 7_000)
        #expect(
            Projector.change(for: Self.projected(try Events.profileUpdated("u1", gender: .female)))
                == .updateUser(try UserId("u1"), UserChanges(gender: .female, updatedAt: at)))
        #expect(
            Projector.change(for: Self.projected(try Events.subscriptionChanged("u1", from: .free, to: .premium)))
                == .updateUser(try UserId("u1"), UserChanges(subscription: .premium, updatedAt: at)))
        #expect(
            Projector.change(
                for: Self.projected(try Events.productPurchased("p1", order: "o1", user: "u1", quantity: 2, stock: 3)))
                == .updateProduct(try ProductId("p1"), ProductChanges(stock: 3, updatedAt: at)))
        #expect(
            Projector.change(for: Self.projected(try Events.productRestocked("p1", quantity: 2, stock: 9)))
                == .updateProduct(try ProductId("p1"), ProductChanges(stock: 9, updatedAt: at)))
        #expect(
            Projector.change(for: Self.projected(try Events.postEdited("x1", content: "")))
                == .updatePost(try PostId("x1"), PostChanges(content: "", updatedAt: at)))
        #expect(Projector.change(for: Self.projected(try Events.userDeleted("u1"))) == .removeUser(try UserId("u1")))
        #expect(Projector.change(for: Self.projected(try Events.emailClaimed("a@b.example", by: "u1"))) == nil)
        guard
            case .insertOrder(let order, let position)? = Projector.change(
                for: Self.projected(
                    try Events.orderPlaced("o1", user: "u1", product: "p1", quantity: 3, unitPrice: "0.10")))
        else {
            Issue.record("OrderPlaced must insert an order")
            return
        }
        #expect(position == 7)
        #expect(order.totalPrice.description == "0.30")
        #expect(order.placedAt == at)
    }

    @Test func stockOnlyChangesAreTold() {
        let at = Timestamp(millisecondsSinceEpoch: 0)
        #expect(ProductChanges(stock: 0, updatedAt: at).changesOnlyStock)
        #expect(!ProductChanges(name: "X", stock: 1, updatedAt: at).changesOnlyStock)
        #expect(!ProductChanges(category: .food, updatedAt: at).changesOnlyStock)
        #expect(!ProductChanges(updatedAt: at).changesOnlyStock)
    }

    @Test func decodingSkipsCategoriesWithoutReadModels() throws {
        var log = Log()
        let claim = log.record(try Events.emailClaimed("a@b.example", by: "u1"))
        let other = log.record(type: "Whatever", stream: "audit-1", data: "{")
        let noDash = log.record(type: "Whatever", stream: "user", data: "{")
        #expect(try Projector.decode(claim) == nil)
        #expect(try Projector.decode(other) == nil)
        #expect(throws: ReadModelStoreError.self) { try Projector.decode(noDash) }
        let user = log.record(try Events.registered("u1"))
        #expect(try Projector.decode(user)?.position == user.position)
        #expect(try Projector.prepare(log.events(after: 3), through: log.head, checkpoint: 3).count == 1)
    }
}
