import Foundation
import LogbookCommandLine
import LogbookZMQ

/// The key set `logbook up --secure` makes in the data directory (once; later runs use it
/// again): the servers' pair, a `reader` pair for the query and groups processes'
/// connections to the worker, an `admin` pair for the command line, and the allow-list folder holding the two
/// clients' public certificates. All under `DIR/keys`, mode 0700.
struct DevelopmentKeys {
    let folder: String

    init(dataDirectory: String) {
        folder = (dataDirectory as NSString).appendingPathComponent("keys")
    }

    func path(_ name: String) -> String { (folder as NSString).appendingPathComponent(name) }

    var serverSecret: String { path("server_secret") }
    var serverPublic: String { path("server") }
    var clients: String { path("clients") }
    var querySecret: String { path("query_secret") }
    var cliSecret: String { path("cli_secret") }

    /// Makes whatever of the set is missing.
    func ensure() throws(CLIError) {
        for (name, role) in [("server", nil), ("query", ClientRole.reader), ("cli", .admin)] as [(String, ClientRole?)]
        {
            if !FileManager.default.fileExists(atPath: path(name)) {
                let metadata = role.map { [Certificate.Property(ClientRole.metadataName, $0.rawValue)] } ?? []
                _ = try KeygenCommand.write(name: name, metadata: metadata, in: folder)
            }
            guard let role else { continue }
            let listed = (clients as NSString).appendingPathComponent(name)
            guard !FileManager.default.fileExists(atPath: listed) else { continue }
            do {
                try FileManager.default.createDirectory(
                    atPath: clients, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                let certificate = try KeyFiles.certificate(at: path(name))
                guard certificate.metadata(ClientRole.metadataName) == role.rawValue else {
                    throw CLIError.unavailable("\(path(name)) is not the \(role) key up --secure made")
                }
                try KeyFiles.writePublic(certificate, to: listed)
            } catch let error as CLIError {
                throw error
            } catch {
                throw .unavailable("cannot write the allow-list \(clients): \(error)")
            }
        }
    }

    /// The settings of each child: the servers' keys and allow-list for every one, and the
    /// `reader` key the query and groups processes use towards the worker.
    func arguments(for role: String) -> [String] {
        var words = [OptionSpec.curveSecret.flag, serverSecret, OptionSpec.clients.flag, clients]
        if role == "query" || role == "groups" {
            words += [OptionSpec.curveKey.flag, querySecret, OptionSpec.serverKey.flag, serverPublic]
        }
        return words
    }

    /// How to point the command line at the secured processes.
    var hint: String {
        """
        up: CURVE is on; keys are in \(folder). Use the command line with:
          export LOGBOOK_CURVE_KEY=\(cliSecret) LOGBOOK_SERVER_KEY=\(serverPublic)
        """
    }
}
