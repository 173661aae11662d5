import LogbookDomain
import Testing

/// `Command.streamsCreated`: the streams a command brings into being, which the handler may
/// take as new without reading them, because the append's expectation checks it.
@Suite("Streams a command creates")
struct StreamsCreatedTests {
    static let ann = registration("u1", email: "ann@example.com")
    static let shop = ann + [productAdded("pr1", stock: 10)]

    @Test("the creating commands name their new stream, and it is among the streams they read")
    func creatingCommands() {
        let cases: [(Command, [StreamId])] = [
            (registerUser("u2", email: "bo@example.com"), [.user(.of("u2"))]),
            (createPost("p1", author: "u1"), [.post(.of("p1"))]),
            (addProduct("pr2"), [.product(.of("pr2"))]),
            (purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 1), [.order(.of("o1"))]),
        ]
        for (command, created) in cases {
            #expect(command.streamsCreated == created, "\(command.typeName)")
            let read = command.streamsRead(given: AggregateStates(folding: Self.shop), buckets: buckets)
            #expect(created.allSatisfy(read.contains), "\(command.typeName) reads \(read)")
            // It succeeds on the log as it is, where the stream has no events.
            #expect(
                (try? CommandDecider.decide(command, given: AggregateStates(folding: Self.shop), buckets: buckets))
                    != nil)
        }
    }

    @Test("a creating command fails with already_exists once its stream has events, whatever they left")
    func failsOnAnExistingStream() {
        let histories: [(Command, [DomainEvent])] = [
            (registerUser("u1", email: "bo@example.com"), Self.shop),
            (registerUser("u1", email: "bo@example.com"), Self.shop + [userDeleted("u1")]),
            (createPost("p1", author: "u1"), Self.shop + [postCreated("p1", author: "u1")]),
            (addProduct("pr1"), Self.shop),
            (addProduct("pr1"), Self.shop + [productRemoved("pr1")]),
            (
                purchaseProduct(order: "o1", user: "u1", product: "pr1", quantity: 1),
                Self.shop + [
                    orderPlaced("o1", user: "u1", product: "pr1", quantity: 1, unitPrice: "19.99", totalPrice: "19.99")
                ]
            ),
        ]
        for (command, history) in histories {
            switch given(history).when(command).outcome {
            case .failure(let error): #expect(error.code == "already_exists", "\(command.typeName): \(error)")
            case .success(let events): Issue.record("\(command.typeName) succeeded on an existing stream: \(events)")
            }
        }
    }

    @Test("no other command creates a stream")
    func otherCommands() {
        let others: [Command] = [
            updateProfile("u1", name: "Bo"), changeSubscription("u1", to: .premium), deleteUser("u1"),
            editPost("p1", title: "t"), deletePost("p1"), updateProduct("pr1", price: "1"),
            restockProduct("pr1", quantity: 1), removeProduct("pr1"),
        ]
        for command in others { #expect(command.streamsCreated.isEmpty, "\(command.typeName)") }
    }
}
