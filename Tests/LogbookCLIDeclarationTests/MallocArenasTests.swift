import Testing

@testable import logbook

/// The malloc arena limit each `logbook run` role sets: the worker's threads hand memory to
/// one another on every command and get arenas of their own; the query and feed processes
/// keep two, which bounds the query process's peak RSS during a rebuild.
@Suite("MallocArenas: the arena limit of each role")
struct MallocArenasTests {
    @Test("the worker may have eight arenas; the query and feed processes keep the standard two")
    func limits() {
        #expect(MallocArenas.standard == 2)
        #expect(MallocArenas.limit(forRole: "worker") == 8)
        #expect(MallocArenas.limit(forRole: "query") == MallocArenas.standard)
        #expect(MallocArenas.limit(forRole: "feed") == MallocArenas.standard)
    }
}
