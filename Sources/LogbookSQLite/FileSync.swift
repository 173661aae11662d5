import Foundation

/// Syncing files and directories to the disk outside SQLite (the deferred-sync horizon, the
/// backup, a bulk load's marker), with the failure as a sentence naming the path, or nil
/// when it worked.
enum FileSync {
    /// `fdatasync` (or, with `dataOnly` false, `fsync`) of an open descriptor, retried when
    /// a signal interrupts it.
    static func sync(_ descriptor: Int32, path: String, dataOnly: Bool) -> String? {
        while (dataOnly ? fdatasync(descriptor) : fsync(descriptor)) != 0 {
            if errno == EINTR { continue }
            return "cannot sync \(path): \(String(cString: strerror(errno)))"
        }
        return nil
    }

    /// Opens `path` (a file, or a directory for its entries), `fsync`s it and closes it; a
    /// missing file is no failure with `missingIsFine`.
    static func sync(path: String, missingIsFine: Bool) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT && missingIsFine { return nil }
            return "cannot open \(path) to sync it: \(String(cString: strerror(errno)))"
        }
        defer { close(descriptor) }
        return sync(descriptor, path: path, dataOnly: false)
    }

    /// `fsync`s the directory that holds `path` (the current one for a bare name), so that
    /// a file created, linked or removed there stays so after a crash.
    static func syncDirectory(containing path: String) -> String? {
        let directory = (path as NSString).deletingLastPathComponent
        return sync(path: directory.isEmpty ? "." : directory, missingIsFine: false)
    }
}
