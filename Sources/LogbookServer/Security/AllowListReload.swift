import LogbookZMQ

/// What SIGHUP does in every process with server sockets: reads its allow-list again and
/// says so in its diagnostics. A process without security has no list, and says that.
enum AllowListReload {
    /// Reads `security`'s allow-list again and says so in `diagnostics`: the number of keys
    /// now in force, or why the directory was refused (the old list then stays in force).
    static func perform(_ security: ServerSecurity?, reporting diagnostics: Diagnostics) {
        guard let security else { return diagnostics.info("no allow-list to reload: security is off") }
        do {
            let list = try security.reload()
            diagnostics.info(
                "allow-list reloaded", ["keys": "\(list.entries.count)", "clients": security.clientsDirectory])
        } catch {
            diagnostics.error("allow-list not reloaded; the old one stays in force", ["error": error.description])
        }
    }
}
