import LogbookCommandLine
import LogbookZMQ

/// The CURVE settings read into what the processes and clients use. Servers turn CURVE on
/// with `--curve-secret` and `--clients` together; clients with `--curve-key` and
/// `--server-key` together. One without the other is a usage error (exit 2); a key file
/// or folder that cannot be used is exit 3, before anything starts.
extension Configuration {
    /// The server side: nil when `--curve-secret` and `--clients` are both absent.
    func serverSecurity() throws(CLIError) -> ServerSecurity? {
        switch (curveSecret, clients) {
        case (nil, nil): return nil
        case (nil, _?):
            throw .usage(
                "\(OptionSpec.clients.flag) needs \(OptionSpec.curveSecret.flag) (the server's secret certificate)")
        case (_?, nil):
            throw .usage(
                "\(OptionSpec.curveSecret.flag) needs \(OptionSpec.clients.flag) (the allow-list of client keys)")
        case (let secret?, let clients?):
            do {
                return try ServerSecurity(secretCertificate: secret, clientsDirectory: clients)
            } catch {
                throw .unavailable(error.description)
            }
        }
    }

    /// The client side: nil when `--curve-key` and `--server-key` are both absent.
    func clientKeys() throws(CLIError) -> CurveClientKeys? {
        switch (curveKey, serverKey) {
        case (nil, nil): return nil
        case (nil, _?):
            throw .usage(
                "\(OptionSpec.serverKey.flag) needs \(OptionSpec.curveKey.flag) (this client's secret certificate)")
        case (_?, nil):
            throw .usage(
                "\(OptionSpec.curveKey.flag) needs \(OptionSpec.serverKey.flag) (the server's public certificate)")
        case (let key?, let server?):
            do {
                return try CurveClientKeys(clientSecretCertificate: key, serverCertificate: server)
            } catch {
                throw .unavailable("client key: \(error)")
            }
        }
    }
}
