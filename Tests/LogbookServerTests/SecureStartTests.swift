import Foundation
import LogbookApplication
import LogbookMemory
import LogbookSQLite
import LogbookTestSupport
import LogbookZMQ
import Testing

@testable import LogbookServer

/// With CURVE asked for, a process whose ZAP handler cannot start must not listen: a CURVE
/// server without a handler would admit every key.
@Suite("Secured processes: the ZAP handler comes first", .serialized)
struct SecureStartTests {
    @Test func aWorkerWhoseZAPHandlerCannotBindRefusesToStartAndBindsNothing() throws {
        let folder = try SocketFolder.make("logbook-zap")
        defer { try? FileManager.default.removeItem(at: folder) }
        let endpoints = ServiceEndpoints.ipc(in: folder)
        let context = try ZMQContext()
        // Someone else holds the handler's endpoint in this context: the worker's handler cannot bind.
        let squatter = try ZMQSocket(context, .reply)
        try squatter.bind(ZAPHandler.endpoint)
        let store = InMemoryEventStore()
        let worker = try WorkerService(
            context: context, endpoints: endpoints,
            log: .syncingEachCommit({ () throws(EventStoreError) -> any EventStore in store }, buckets: .forTests),
            clock: StepClock(),
            ids: CountingIds(),
            diagnostics: Diagnostics(process: "test", threshold: .error, clock: StepClock()), maximumBatch: 16,
            security: try Self.security())
        #expect(throws: ServiceStartError.self) { try worker.start() }
        do {
            try worker.start()
        } catch {
            #expect(error.component == "ZAP handler")
        }
        for name in ["commands", "feed", "log"] {
            #expect(!FileManager.default.fileExists(atPath: folder.path + "/" + name), "\(name) was bound")
        }

        let query = try QueryService(
            context: context, endpoints: endpoints,
            generations: SQLiteReadModelGenerations(directory: folder.path),
            clock: StepClock(), diagnostics: Diagnostics(process: "test", threshold: .error, clock: StepClock()),
            security: try Self.security(), clientKeys: nil)
        #expect(throws: ServiceStartError.self) { try query.start() }
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/queries"), "queries was bound")
    }

    @Test func refusalLinesAreLimitedPerSecondAndWhatWasHeldBackIsCounted() {
        var limit = LineRateLimit(linesPerSecond: 3)
        let first = (0..<10).map { _ in limit.admit(atSecond: 7) }
        #expect(first.filter(\.write).count == 3)
        #expect(first.allSatisfy { $0.heldBackBefore == 0 })
        #expect(limit.settle(atSecond: 7) == 0, "the second is not over")
        let next = limit.admit(atSecond: 8)
        #expect(next.write && next.heldBackBefore == 7)
        #expect(limit.settle(atSecond: 9) == 0, "nothing held back in second 8")
    }

    @Test func requestsAreCheckedAgainstTheCurrentAllowList() throws {
        let security = try Self.security()
        let requestGuard = RequestGuard(security: security)
        let reader = MessageMetadata(userId: Self.readerKey.z85, role: "reader")
        #expect(requestGuard.admit(reader, for: .query) == .serve)
        guard case .unauthorized(let error) = requestGuard.admit(reader, for: .command) else {
            Issue.record("a reader's command must be unauthorized")
            return
        }
        #expect(error.code == .unauthorized)
        #expect(requestGuard.admit(MessageMetadata(userId: "not listed"), for: .query) == .drop)
        #expect(requestGuard.admit(MessageMetadata(), for: .query) == .drop)
        #expect(RequestGuard(security: nil).admit(MessageMetadata(), for: .command) == .serve)
    }

    static let readerKey = try! CurveKeyPair.generate().publicKey

    static func security() throws -> ServerSecurity {
        ServerSecurity(
            keys: try CurveKeyPair.generate(),
            allowList: AllowList(entries: [readerKey.z85: AllowList.Entry(role: .reader, path: "reader")]),
            from: "unused")
    }
}
