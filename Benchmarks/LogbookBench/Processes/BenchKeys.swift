import Glibc
import LogbookZMQ

/// A CURVE key set for a secured service under test, written in a folder of the bench's
/// scratch directory: the servers' key pair, a `reader` pair the query process uses towards
/// the worker, the bench's own `admin` pair (its load clients, subscriber and `Status`
/// calls), and the allow-list folder holding the two clients' public certificates.
struct BenchKeys {
    /// `--curve-secret` and `--clients`, for every server process.
    let serverArguments: [String]
    /// `--curve-key` and `--server-key`, for the query process's connections to the worker.
    let queryArguments: [String]
    /// What the bench's own sockets present.
    let client: CurveClientKeys

    /// Makes the set in `folder` (which must exist and hold none of its files).
    static func make(in folder: String) throws(BenchError) -> BenchKeys {
        do {
            let server = Certificate(try CurveKeyPair.generate())
            let serverFiles = try KeyFiles.writePair(server, name: "server", in: folder)
            let allowList = folder + "/clients"
            guard mkdir(allowList, 0o700) == 0 else {
                throw BenchError("cannot create the allow-list folder \(allowList) (errno \(errno))")
            }
            func client(_ name: String, _ role: ClientRole) throws -> (Certificate, String) {
                let certificate = Certificate(
                    try CurveKeyPair.generate(), metadata: [.init(ClientRole.metadataName, role.rawValue)])
                let files = try KeyFiles.writePair(certificate, name: name, in: folder)
                try KeyFiles.writePublic(certificate, to: allowList + "/" + name)
                return (certificate, files.secretPath)
            }
            let query = try client("query", .reader)
            let bench = try client("bench", .admin)
            guard let benchPair = bench.0.keyPair else { throw BenchError("the bench's key pair has no secret") }
            return BenchKeys(
                serverArguments: ["--curve-secret", serverFiles.secretPath, "--clients", allowList],
                queryArguments: ["--curve-key", query.1, "--server-key", serverFiles.publicPath],
                client: CurveClientKeys(keys: benchPair, serverKey: server.publicKey))
        } catch let error as BenchError {
            throw error
        } catch {
            throw BenchError("cannot make the CURVE keys of the secured service: \(error)")
        }
    }
}
