import Foundation
import Glibc
import LogbookClient
import LogbookJSON
import Testing

/// A worker whose log sits on a full disk (a 1 MiB tmpfs of the test's own, filled up):
/// clients get `unavailable` with the cause, never the server's path; the worker's log
/// names the path; once space is freed the same worker serves again.
@Suite("End to end: a full disk", .serialized, .enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
struct FullDiskTests {
    @Test("a command on a full disk gets 'the event log is unavailable: disk full', without the path")
    func fullDisk() async throws {
        let cluster = try ServiceCluster()
        let folder = cluster.directory.appendingPathComponent("worker").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try #require(mount("tmpfs", folder, "tmpfs", 0, "size=1m") == 0, "mount: \(String(cString: strerror(errno)))")
        defer { umount2(folder, Int32(MNT_DETACH)) }
        try await cluster.startWorker()
        defer { cluster.stopWorker(SIGKILL) }
        let client = try cluster.client(timeout: .seconds(5), attempts: 1)
        defer { client.close() }
        _ = try await client.send(type: "AddProduct", data: Fixture.product("before"))

        let filler = folder + "/filler"
        Self.fill(filler)
        var refused: ServiceErrorReply?
        for index in 0..<200 where refused == nil {
            do {
                _ = try await client.send(type: "AddProduct", data: Fixture.product("full\(index)"))
            } catch {
                guard case .rejected(let reply) = error else { throw error }
                refused = reply
            }
        }
        let reply = try #require(refused, "no command was refused on a full disk")
        #expect(reply.code == "unavailable")
        #expect(reply.message == "the event log is unavailable: disk full")
        #expect(!reply.message.contains("/"), "the message names a path: \(reply.message)")
        let logged = await eventually(within: patience) {
            cluster.stderr(of: "worker").contains("\(folder)/events.sqlite3")
        }
        #expect(logged, "the worker's log does not name the path: \(cluster.stderr(of: "worker"))")

        // Space again: the same worker goes on.
        unlink(filler)
        _ = try await client.send(type: "AddProduct", data: Fixture.product("after"))
    }

    /// Writes into `path` until the file system is full.
    private static func fill(_ path: String) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0x2A, count: 16 << 10)
        while chunk.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }
}
