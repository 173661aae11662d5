public import Foundation

/// A fresh folder under the system's temporary directory, for a test's files.
public enum TemporaryDirectory {
    public static func make() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("logbook-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
