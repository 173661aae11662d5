import LogbookApplication
import LogbookDomain
import Testing

@Suite("Stream state cache")
struct StreamStateCacheTests {
    private func stream(_ n: Int) throws -> StreamId { .product(try ProductId("p\(n)")) }

    private func entry(_ version: Int) -> StreamStateCache.Entry {
        StreamStateCache.Entry(version: version, state: .product(.initial))
    }

    @Test("it stays within its capacity and keeps the most recently used streams")
    func evictsLeastRecentlyUsed() throws {
        var cache = StreamStateCache(capacity: 8)
        for n in 0..<8 { cache.store(entry(n), for: try stream(n)) }
        _ = cache.entry(for: try stream(0))  // touch the oldest
        cache.store(entry(8), for: try stream(8))
        #expect(cache.count <= 8)
        #expect(cache.entry(for: try stream(0)) == entry(0))
        #expect(cache.entry(for: try stream(8)) == entry(8))
        #expect(cache.entry(for: try stream(1)) == nil)
    }

    @Test("remove and removeAll forget entries")
    func removal() throws {
        var cache = StreamStateCache(capacity: 4)
        cache.store(entry(1), for: try stream(1))
        cache.store(entry(2), for: try stream(2))
        cache.remove(try stream(1))
        #expect(cache.entry(for: try stream(1)) == nil)
        cache.removeAll()
        #expect(cache.count == 0)
    }
}
