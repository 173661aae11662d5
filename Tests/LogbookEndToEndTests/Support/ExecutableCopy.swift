import Foundation

/// Copies the executable at `source` to `destination` with `cp` in a child process, never by
/// writing the file from this process.
///
/// A file this process holds open for writing is inherited by every child that another test
/// forks meanwhile, and stays open for writing in that child until it calls `exec`; running
/// the copy then fails with `ETXTBSY` ("Text file busy"). A copy written by another process
/// leaves no descriptor for it in this one, so no later fork can carry one.
func copyExecutable(_ source: URL, to destination: URL) async throws {
    let result = try await runLogbook(
        ["--", source.path, destination.path], executable: URL(fileURLWithPath: "/bin/cp"))
    guard result.status == 0 else {
        throw ExecutableCopyError(source: source.path, destination: destination.path, stderr: result.stderr)
    }
}

/// `cp` could not copy an executable for a test.
struct ExecutableCopyError: Error, CustomStringConvertible {
    let source: String
    let destination: String
    let stderr: String

    var description: String { "cannot copy \(source) to \(destination): \(stderr)" }
}
