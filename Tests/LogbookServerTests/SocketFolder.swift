import Foundation
import LogbookZMQ

/// A fresh folder under the temporary directory, for a test's ipc sockets and files; the
/// test removes it.
enum SocketFolder {
    static func make(_ prefix: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}

extension ServiceEndpoints {
    /// The four endpoints as ipc sockets in `folder`, each named after its role.
    static func ipc(in folder: URL) -> ServiceEndpoints {
        let base = "ipc://\(folder.path)/"
        return ServiceEndpoints(
            commands: base + "commands", feed: base + "feed", queries: base + "queries", log: base + "log")
    }
}
