import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookMemory
import LogbookTestSupport
import Synchronization
import Testing

/// A clock that says what the test tells it to.
final class FixedClock: Clock {
    private let current: Mutex<Timestamp>

    init(_ milliseconds: Int64 = 1_764_000_000_000) { current = Mutex(Timestamp(millisecondsSinceEpoch: milliseconds)) }

    func now() -> Timestamp { current.withLock { $0 } }

    func advance(milliseconds: Int64) {
        current.withLock { $0 = Timestamp(millisecondsSinceEpoch: $0.millisecondsSinceEpoch + milliseconds) }
    }
}

/// Event ids `e1`, `e2`, … in order.
final class SequentialIDs: IDGenerator {
    private let next = Mutex(0)

    func newEventId() -> String {
        let number = next.withLock { value in
            value += 1
            return value
        }
        return "e\(number)"
    }
}

/// A handler over a fresh in-memory log.
struct HandlerHarness {
    let store: any EventStore
    let clock = FixedClock()
    let handler: CommandHandler

    init(store: any EventStore = InMemoryEventStore(), buckets: EmailBucketing = .forTests, cacheCapacity: Int = 1000) {
        self.store = store
        handler = CommandHandler(
            store: store, clock: clock, ids: SequentialIDs(), buckets: buckets, cacheCapacity: cacheCapacity)
    }

    @discardableResult
    func send(_ id: String, _ type: String, _ data: JSONValue, expecting: ExpectedVersion = .any) -> CommandOutcome {
        handler.handle(CommandRequest(commandId: id, type: type, data: data, expectedVersion: expecting))
    }

    func head() throws -> Int64 { try store.headPosition() }

    func types() throws -> [String] { try store.read(fromPosition: 1, limit: 10_000, categories: nil).map(\.type) }
}

/// Request bodies, so each test names only what it is about.
enum Body {
    static func user(_ id: String, email: String, name: String = "Ann") -> JSONValue {
        ["userId": .string(id), "name": .string(name), "email": .string(email)]
    }

    static func product(_ id: String, price: String = "2.50", stock: Int = 10) -> JSONValue {
        ["productId": .string(id), "name": "Tea", "price": .string(price), "category": "food", "stock": .int(stock)]
    }

    static func purchase(_ order: String, user: String, product: String, quantity: Int) -> JSONValue {
        ["orderId": .string(order), "userId": .string(user), "productId": .string(product), "quantity": .int(quantity)]
    }
}

extension CommandOutcome {
    var code: ErrorCode? { error?.code }
    var eventTypes: [String] { accepted?.events.map(\.type) ?? [] }
}

/// The payload of a recorded event, parsed.
func payload(_ event: RecordedEvent) throws -> JSONObject {
    try #require(try JSONParser.parse(event.data).objectValue)
}
