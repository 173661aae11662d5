import LogbookZMQ

extension ServerSecurity {
    /// Reads the allow-list again (SIGHUP) and says so in `diagnostics`: the number of keys
    /// now in force, or why the directory was refused (the old list then stays in force).
    func reload(reporting diagnostics: Diagnostics) {
        do {
            let list = try reload()
            diagnostics.info("allow-list reloaded", ["keys": "\(list.entries.count)", "clients": clientsDirectory])
        } catch {
            diagnostics.error("allow-list not reloaded; the old one stays in force", ["error": error.description])
        }
    }
}
