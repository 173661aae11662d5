import Foundation
import LogbookApplication
import LogbookSQLite

/// Appends batches of the bench's command mix straight to `SQLiteEventStore` on a fresh
/// log and prints the thread's processor time per command inside `append`. Every id and
/// payload is fixed, so two builds given the same arguments do the same work, and under
/// `valgrind --tool=callgrind` the difference of two runs' instruction counts (N and 2N
/// batches) is what N batches cost, whatever the machine's load.
///
/// usage: append-harness LOG_PATH [BATCHES (20)] [BATCH_SIZE (800)]
struct AppendHarness {
    let store: SQLiteEventStore
    let batchSize: Int
    /// Users and products every run starts with, bought from and posted by.
    let seeded = 2_560
    private var events = 0
    private var productVersions: [Int]

    init(path: String, batchSize: Int) throws {
        store = try SQLiteEventStore(path: path)
        self.batchSize = batchSize
        productVersions = Array(repeating: 1, count: seeded)
    }

    private mutating func event(_ stream: String, _ type: String, _ data: String) -> NewEvent {
        events += 1
        return NewEvent(eventId: "e\(events)", stream: stream, type: type, data: data, recordedAt: 1_764_000_000_000)
    }

    private func request(_ id: String, _ events: [NewEvent], _ expectations: [String: ExpectedVersion])
        -> AppendRequest
    {
        AppendRequest(
            metadata: EventMetadata(commandId: id, correlationId: id, causationId: id), events: events,
            expectations: expectations)
    }

    /// One user and one product per seeded index, in batches.
    mutating func seed() throws {
        var requests: [AppendRequest] = []
        for index in 0..<seeded {
            let user = "user-su\(index)"
            let product = "product-sp\(index)"
            requests.append(
                request("su\(index)", [event(user, "UserRegistered", #"{"name":"Seeded"}"#)], [user: .noStream]))
            requests.append(
                request("sp\(index)", [event(product, "ProductAdded", #"{"stock":1000000}"#)], [product: .noStream]))
        }
        for start in stride(from: 0, to: requests.count, by: batchSize) {
            _ = try store.append(Array(requests[start..<min(start + batchSize, requests.count)]))
        }
    }

    /// The bench's cycle of four (`CommandMix`): a new user with its e-mail claim, a new
    /// product, a purchase of a seeded product writing a new order, a post by a seeded user.
    mutating func command(_ sequence: Int) -> AppendRequest {
        let own = "n\(sequence)"
        let seed = sequence / 4 % seeded
        let seededUser = "user-su\(seed)"
        switch sequence % 4 {
        case 0:
            let user = "user-u\(own)"
            let claim = "emailClaim-\(own)"
            return request(
                "c\(sequence)",
                [
                    event(user, "UserRegistered", #"{"name":"Bench User","email":"u@bench.example"}"#),
                    event(claim, "EmailClaimed", #"{"userId":"u"}"#),
                ], [user: .noStream, claim: .noStream])
        case 1:
            let product = "product-p\(own)"
            return request(
                "c\(sequence)", [event(product, "ProductAdded", #"{"name":"Bench tea","price":"2.50","stock":100}"#)],
                [product: .noStream])
        case 2:
            let product = "product-sp\(seed)"
            let order = "order-o\(own)"
            let version = productVersions[seed]
            productVersions[seed] += 1
            return request(
                "c\(sequence)",
                [
                    event(product, "ProductPurchased", #"{"quantity":1}"#),
                    event(order, "OrderPlaced", #"{"quantity":1}"#),
                ],
                [product: .exactly(version), order: .noStream, seededUser: .exactly(1)])
        default:
            let post = "post-t\(own)"
            return request(
                "c\(sequence)", [event(post, "PostCreated", #"{"title":"A bench post"}"#)],
                [post: .noStream, seededUser: .exactly(1)])
        }
    }

    static func threadMicroseconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) * 1e6 + Double(time.tv_nsec) / 1e3
    }

    /// Appends `batches` batches; the processor time per command spent in `append`.
    mutating func run(batches: Int) throws -> Double {
        var sequence = 0
        var microseconds = 0.0
        for _ in 0..<batches {
            let batch = (0..<batchSize).map { _ in
                defer { sequence += 1 }
                return command(sequence)
            }
            let start = Self.threadMicroseconds()
            let results = try store.append(batch)
            microseconds += Self.threadMicroseconds() - start
            for result in results {
                guard case .committed = result else { throw HarnessError.refused("\(result)") }
            }
        }
        return microseconds / Double(max(1, batches * batchSize))
    }
}

enum HarnessError: Error {
    case refused(String)
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: append-harness LOG_PATH [BATCHES] [BATCH_SIZE]\n".utf8))
    exit(2)
}
let batches = arguments.count > 2 ? Int(arguments[2]) ?? 20 : 20
let batchSize = arguments.count > 3 ? Int(arguments[3]) ?? 800 : 800
var harness = try AppendHarness(path: arguments[1], batchSize: batchSize)
try harness.seed()
let perCommand = try harness.run(batches: batches)
print(String(format: "%.2f µs of processor time per command in append (%d commands)", perCommand, batches * batchSize))
