import LogbookCommandLine

/// The blocks of `logbook help`, in the order their first command appears in `Logbook.commands`.
extension CommandSpec.Section {
    static let processes = Self("processes", title: "processes")
    static let clientCommands = Self(
        "client commands", title: "client commands (talk to running processes over ZeroMQ)")
    static let workerFiles = Self("worker files", title: "on the worker's files")
    static let security = Self("security", title: "security (CURVE keys)")
    static let measuring = Self("measuring", title: nil)
    static let about = Self("about", title: nil)
}
