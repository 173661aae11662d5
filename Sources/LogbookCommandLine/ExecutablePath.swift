import Glibc

/// Where the running program's executable is, and the programs installed beside it
/// (`logbook` and `logbook-bench` are built into one folder and find each other there).
public enum ExecutablePath {
    /// The running executable's path, from `/proc/self/exe` (links resolved).
    public static func own() throws(CLIError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { throw .unavailable("cannot find the running executable (/proc/self/exe)") }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The path of the program `name` in the running executable's folder; fails, naming
    /// the path, when there is no executable file there.
    public static func sibling(_ name: String) throws(CLIError) -> String {
        let own = try own()
        let folder = own.lastIndex(of: "/").map { String(own[..<$0]) } ?? "."
        let path = folder + "/" + name
        try requireExecutable(path, "\(name) is not beside \(own.split(separator: "/").last ?? "")")
        return path
    }

    /// Fails with `problem` and the path unless `path` is an executable file.
    public static func requireExecutable(_ path: String, _ problem: String) throws(CLIError) {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(path, X_OK) == 0 else {
            throw .unavailable("\(problem): no executable file at \(path)")
        }
    }
}
