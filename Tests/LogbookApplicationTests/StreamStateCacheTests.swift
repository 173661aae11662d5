import LogbookApplication
import LogbookDomain
import LogbookTestSupport
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

    /// A live post whose text is `bytes` of UTF-8 (two-byte characters: at most 100,000).
    private func longPost(_ n: Int, bytes: Int) throws -> (StreamId, StreamStateCache.Entry) {
        let id = try PostId("post\(n)")
        let post = Post(
            id: id, authorId: try UserId("u1"), title: try PostTitle("t\(n)"),
            content: try PostContent(String(repeating: "é", count: bytes / 2)))
        return (.post(id), StreamStateCache.Entry(version: 1, state: .post(.live(post))))
    }

    @Test("long posts are bounded by bytes: the least recently used leave once the states pass the budget")
    func boundedByBytes() throws {
        var cache = StreamStateCache(capacity: 1_000, byteBudget: 1 << 20)
        var streams: [StreamId] = []
        for n in 0..<30 {
            let (stream, entry) = try longPost(n, bytes: 100_000)
            cache.store(entry, for: stream)
            streams.append(stream)
            #expect(cache.bytes <= cache.byteBudget, "after \(n + 1) posts: \(cache.bytes) bytes")
        }
        #expect(cache.count == 10, "ten posts of 100,000 bytes fit in 1 MiB, not eleven")
        #expect(try cache.entry(for: streams[29]) == longPost(29, bytes: 100_000).1)
        #expect(cache.entry(for: streams[19]) == nil)
        // Small states fill what the posts leave, and the bytes stay exact as entries go.
        for stream in streams { cache.remove(stream) }
        #expect(cache.bytes == 0 && cache.count == 0)
    }

    @Test("a state larger than the whole budget is not cached, and replaces no older entry of its stream")
    func tooLargeForTheBudget() throws {
        var cache = StreamStateCache(capacity: 10, byteBudget: 10_000)
        let (stream, small) = try longPost(1, bytes: 100)
        cache.store(small, for: stream)
        #expect(cache.entry(for: stream) == small)
        let (_, huge) = try longPost(1, bytes: 20_000)
        cache.store(huge, for: stream)
        #expect(cache.entry(for: stream) == nil, "the stale small state must not stay either")
        #expect(cache.bytes == 0)
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

    @Test("random stores, reads and removals keep exactly the most recently used streams")
    func matchesAReferenceModel() throws {
        var generator = SeededGenerator(seed: 13)
        var cache = StreamStateCache(capacity: 16)
        // The reference: streams from least to most recently used, with their entries.
        var model: [(stream: Int, version: Int)] = []
        for step in 0..<20_000 {
            let n = Int.random(in: 0..<40, using: &generator)
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<5:
                cache.store(entry(step), for: try stream(n))
                model.removeAll { $0.stream == n }
                model.append((n, step))
                if model.count > 16 { model.removeFirst() }
            case 5..<9:
                let found = cache.entry(for: try stream(n))
                if let at = model.firstIndex(where: { $0.stream == n }) {
                    #expect(found == entry(model[at].version))
                    model.append(model.remove(at: at))
                } else {
                    #expect(found == nil)
                }
            default:
                cache.remove(try stream(n))
                model.removeAll { $0.stream == n }
            }
            #expect(cache.count == model.count)
            if step % 5_000 == 4_999 {
                cache.removeAll()
                model.removeAll()
            }
        }
    }

    @Test("a full cache keeps its capacity: each new stream drops only the least recently used")
    func dropsOneAtATime() throws {
        var cache = StreamStateCache(capacity: 100)
        for n in 0..<1_000 {
            cache.store(entry(n), for: try stream(n))
            #expect(cache.count == min(n + 1, 100))
        }
        #expect(cache.entry(for: try stream(899)) == nil)
        for n in 900..<1_000 { #expect(cache.entry(for: try stream(n)) == entry(n)) }
    }
}
