import Foundation
import Glibc

/// A directory for one bench run's files: a fresh one under the system's temporary
/// directory (removed at the end), or one the user named, which must be empty or missing
/// (the bench would otherwise write into someone's event log) and is kept.
struct ScratchDirectory: Sendable {
    let path: String
    let removeAtEnd: Bool

    /// A fresh temporary directory, mode 0700, named after `prefix`.
    static func temporary(prefix: String) throws(BenchError) -> ScratchDirectory {
        var template = Array((NSTemporaryDirectory() + "/\(prefix)-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
        guard made != nil else {
            throw BenchError("cannot create a temporary directory: \(String(cString: strerror(errno)))")
        }
        let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return ScratchDirectory(path: path, removeAtEnd: true)
    }

    /// A directory the user chose; created if missing, refused if it holds anything.
    static func chosen(_ path: String) throws(BenchError) -> ScratchDirectory {
        let manager = FileManager.default
        if let entries = try? manager.contentsOfDirectory(atPath: path), !entries.isEmpty {
            throw BenchError("--data-dir \(path) is not empty; the bench needs an empty or new directory")
        }
        do {
            try manager.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw BenchError("cannot create --data-dir \(path): \(error.localizedDescription)")
        }
        return ScratchDirectory(path: path, removeAtEnd: false)
    }

    /// A path inside the directory.
    func file(_ name: String) -> String {
        (path as NSString).appendingPathComponent(name)
    }

    /// A subdirectory, created now.
    func subdirectory(_ name: String) throws(BenchError) -> String {
        let sub = file(name)
        do {
            try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
        } catch {
            throw BenchError("cannot create \(sub): \(error.localizedDescription)")
        }
        return sub
    }

    /// Removes the directory when the bench made it; returns why it could not.
    @discardableResult
    func cleanUp() -> String? {
        guard removeAtEnd, FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            try FileManager.default.removeItem(atPath: path)
            return nil
        } catch {
            return "cannot remove \(path): \(error.localizedDescription)"
        }
    }
}
