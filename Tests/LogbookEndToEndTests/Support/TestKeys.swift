import Foundation
import LogbookZMQ

/// A cluster's CURVE keys in `DIR/keys`: the servers' pair, and client pairs made on
/// demand, each written as `NAME`/`NAME_secret` with its role, its public certificate also
/// in the allow-list folder `DIR/keys/clients` unless asked otherwise.
struct TestKeys: Sendable {
    let folder: String
    let server: CurveKeyPair

    init(in directory: URL) throws {
        folder = directory.appendingPathComponent("keys").path
        try FileManager.default.createDirectory(atPath: folder + "/clients", withIntermediateDirectories: true)
        server = try CurveKeyPair.generate()
        try KeyFiles.writePair(Certificate(server), name: "server", in: folder)
    }

    var clients: String { folder + "/clients" }

    /// A new client pair `name` of `role`; listed in the allow-list when `listed`.
    @discardableResult
    func make(_ name: String, _ role: ClientRole, listed: Bool = true) throws -> CurveClientKeys {
        let pair = try CurveKeyPair.generate()
        let certificate = Certificate(pair, metadata: [Certificate.Property(ClientRole.metadataName, role.rawValue)])
        try KeyFiles.writePair(certificate, name: name, in: folder)
        if listed { try KeyFiles.writePublic(certificate, to: clients + "/" + name) }
        return CurveClientKeys(keys: pair, serverKey: server.publicKey)
    }

    /// Takes `name` out of the allow-list (the process must reload to notice).
    func revoke(_ name: String) throws { try FileManager.default.removeItem(atPath: clients + "/" + name) }

    /// A server's CURVE settings.
    var serverFlags: [String] { ["--curve-secret", folder + "/server_secret", "--clients", clients] }

    /// A client's CURVE settings for the key `name`.
    func clientFlags(_ name: String) -> [String] {
        ["--curve-key", folder + "/\(name)_secret", "--server-key", folder + "/server"]
    }
}

extension ServiceCluster {
    /// A worker and a query process with CURVE on: the query process reaches the worker
    /// with a `reader` key of its own, and the cluster's clients use an `admin` key; the
    /// `clients` named are listed too (the allow-list is read at start), their keys returned by name.
    static func secured(_ clients: KeyValuePairs<String, ClientRole> = [:]) async throws -> (
        ServiceCluster, TestKeys, [String: CurveClientKeys]
    ) {
        let cluster = try ServiceCluster()
        let keys = try TestKeys(in: cluster.directory)
        try keys.make("query", .reader)
        cluster.clientKeys = try keys.make("admin", .admin)
        var made: [String: CurveClientKeys] = [:]
        for (name, role) in clients { made[name] = try keys.make(name, role) }
        cluster.workerFlags = keys.serverFlags
        cluster.queryFlags = keys.serverFlags + keys.clientFlags("query")
        try await cluster.startWorker()
        try await cluster.startQuery()
        return (cluster, keys, made)
    }
}
