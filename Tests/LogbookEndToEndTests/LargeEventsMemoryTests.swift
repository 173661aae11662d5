import Foundation
import LogbookClient
import LogbookJSON
import Testing

/// A log of large events (posts of 200,000 bytes, the most a post may hold) must not make
/// the query process hold the log in memory: its catch-up gathers pages up to a number of
/// bytes, not only of events, and a rebuild's bulk load writes its rows once their texts
/// reach a number of bytes, not only of rows.
@Suite("End to end: a log of large posts", .serialized)
struct LargeEventsMemoryTests {
    /// 400 posts of 200,000 bytes: 80 MB of payloads, which a catch-up gathering 20,000
    /// events (or a rebuild holding 50,000 rows) would have held all at once, twice over
    /// (the pages, then the rows' texts). The bounds below sit between what the query
    /// process holds with the byte bounds and what it held without them, with room for a
    /// loaded machine, in the debug build the tests use.
    static let posts = 400
    static let content = String(repeating: "\u{1D11E}", count: 50_000)  // four UTF-8 bytes each

    @Test("catching up and rebuilding 80 MB of posts, the query process's peak stays far under the log's size")
    func catchUpAndRebuildHoldBoundedMemory() async throws {
        let cluster = try ServiceCluster()
        try await cluster.startWorker()
        let client = try cluster.client(timeout: .seconds(20))
        defer { client.close() }
        _ = try await client.send(type: "RegisterUser", data: Fixture.user("author"))
        for index in 1...Self.posts {
            _ = try await client.send(
                type: "CreatePost", data: Fixture.post("big-\(index)", author: "author", content: Self.content))
        }
        let head = try await cluster.head()

        // Started on an empty read-model store, the query process catches up from the log.
        try await cluster.startQuery()
        let status = try await cluster.queryStatus(after: head)
        #expect(status["readModels"]?["posts"] == .int(Self.posts))
        let pid = try #require(cluster.queryProcessIdentifier)
        let afterCatchUp = try Self.peakMegabytes(pid)
        #expect(afterCatchUp < 130, "the query process peaked at \(afterCatchUp) MB catching up 80 MB of posts")

        // The rebuild's own peak: `VmHWM` starts again from the resident set now.
        try Self.resetPeak(pid)
        let result = try await cluster.run(["rebuild"])
        #expect(result.status == 0, "\(result.stderr)")
        let answer = try await client.query(type: "GetPost", data: ["postId": .string("big-\(Self.posts)")])
        #expect(answer.result["content"] == JSONValue.string(Self.content))
        let afterRebuild = try Self.peakMegabytes(pid)
        #expect(afterRebuild < 125, "the query process peaked at \(afterRebuild) MB rebuilding 80 MB of posts")
        #expect(cluster.errorLines(of: "query").isEmpty, "\(cluster.stderr(of: "query"))")
    }

    /// Makes the process's `VmHWM` start again from its resident set now (`clear_refs`, 5).
    static func resetPeak(_ pid: pid_t) throws {
        try "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)
    }

    /// The process's peak resident set (`VmHWM`), in megabytes.
    static func peakMegabytes(_ pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kilobytes = try #require(Int(line.split(whereSeparator: \.isWhitespace)[1]))
        return kilobytes / 1024
    }
}
