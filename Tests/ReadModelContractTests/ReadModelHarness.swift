import Foundation
import LogbookApplication
import LogbookDomain
import LogbookMemory
import LogbookSQLite
import Testing

/// The read-model stores every contract test runs against.
enum ReadModelStoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory, sqlite

    var testDescription: String { rawValue }
}

/// One store under test and the reader queries use: for SQLite a separate read-only
/// connection on the same file, opened when first read through (`OnFirstUseReader`), for
/// memory the store itself.
final class ReadModelHarness {
    let kind: ReadModelStoreKind
    private(set) var store: any ReadModelStore
    private(set) var reader: any ReadModelReader
    let directory: URL?

    /// - Parameters:
    ///   - bulkFlushRows: for SQLite, how many rows a bulk load holds before writing.
    ///   - bulkFlushTextBytes: for SQLite, how many bytes of text a bulk load holds before writing.
    init(_ kind: ReadModelStoreKind, bulkFlushRows: Int = 200_000, bulkFlushTextBytes: Int = 16 << 20) throws {
        self.kind = kind
        switch kind {
        case .memory:
            directory = nil
            let memory = InMemoryReadModelStore()
            store = memory
            reader = memory
        case .sqlite:
            let directory = try TemporaryDirectory.make()
            self.directory = directory
            let path = directory.appendingPathComponent("read-models.sqlite3").path
            store = try SQLiteReadModelStore(
                path: path, bulkFlushRows: bulkFlushRows, bulkFlushTextBytes: bulkFlushTextBytes)
            reader = OnFirstUseReader(path: path)
        }
    }

    deinit {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    var path: String? { directory?.appendingPathComponent("read-models.sqlite3").path }

    /// Closes and reopens the store and its reader; the in-memory store has nothing to reopen.
    func reopen() throws {
        guard kind == .sqlite, let path else { return }
        let placeholder = InMemoryReadModelStore()  // drop the old connections before opening new ones
        store = placeholder
        reader = placeholder
        store = try SQLiteReadModelStore(path: path)
        reader = OnFirstUseReader(path: path)
    }

    /// Applies every event of `log` the store has not applied yet, through the log's head.
    func catchUp(_ log: Log) throws {
        let checkpoint = try store.checkpoint()
        try store.apply(log.events(after: checkpoint), through: log.head)
    }

    /// The store's rows and checkpoint as the reader sees them, to compare before and after.
    func snapshot() throws -> Snapshot {
        Snapshot(
            checkpoint: try reader.checkpoint(), users: try reader.users(page: 1, perPage: 1000).items,
            posts: try reader.posts(authorId: nil, page: 1, perPage: 1000).items,
            products: try reader.products(ProductFilter(), page: 1, perPage: 1000).items,
            counts: try reader.counts())
    }
}

struct Snapshot: Equatable {
    var checkpoint: Int64
    var users: [UserView]
    var posts: [PostView]
    var products: [ProductView]
    var counts: ReadModelCounts
}

enum TemporaryDirectory {
    static func make() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("logbook-read-model-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// A log built in memory from domain events, encoded by the real `EventCodec`, with
/// positions, stream versions and recording times as the event store would assign them.
struct Log {
    /// 2025-11-24T16:00:00.000Z; each event is recorded one second after the previous one.
    static let start: Int64 = 1_764_000_000_000

    private(set) var all: [RecordedEvent] = []
    private(set) var head: Int64 = 0
    private var versions: [String: Int] = [:]
    private(set) var clock = Log.start

    /// Records `event` at the next position, one second later than the previous one.
    @discardableResult
    mutating func record(_ event: DomainEvent) -> RecordedEvent {
        let stream = event.stream.name
        return record(type: event.typeName, stream: stream, data: EventCodec.encodedText(event))
    }

    /// Records raw text, for events the codec would never write.
    @discardableResult
    mutating func record(type: String, stream: String, data: String) -> RecordedEvent {
        head += 1
        clock += 1_000
        versions[stream, default: 0] += 1
        let event = RecordedEvent(
            position: head, eventId: "e\(head)", stream: stream, version: versions[stream]!, type: type, data: data,
            metadata: EventMetadata(commandId: "c\(head)", correlationId: "c\(head)", causationId: "c\(head)"),
            recordedAt: clock)
        all.append(event)
        return event
    }

    /// Moves the head past `count` positions whose events this log does not show (another
    /// category a subscriber did not ask for, say).
    mutating func skipPositions(_ count: Int64) {
        head += count
    }

    func events(after position: Int64) -> [RecordedEvent] { all.filter { $0.position > position } }

    /// The recording time of the event at `position`, as views show it.
    func time(of position: Int64) -> Timestamp {
        Timestamp(millisecondsSinceEpoch: all.first { $0.position == position }!.recordedAt)
    }
}
