import Foundation
import LogbookCommandLine
import LogbookCrypto
import LogbookJSON
import LogbookZMQ

/// `logbook keygen NAME [--role writer|reader|admin] [--dir DIR]`: makes a CURVE key pair
/// and writes it as CZMQ's certificate pair, `DIR/NAME` (public) and `DIR/NAME_secret`
/// (mode 0600), never replacing a file. Prints `{"public","secret","publicKey","role"?}`.
/// `logbook keygen --master FILE` makes a master key for personal data instead, and prints
/// `{"masterKey":FILE}`.
enum KeygenCommand: Subcommand {
    static let role = OptionSpec.option(
        "role", "ROLE", "writer, reader or admin: what a client with this key may do (none for a server's key)")
    static let directory = OptionSpec.option("dir", "DIR", "where to write the two files", default: ".")
    static let master = OptionSpec.option(
        "master", "FILE", "make the master key that seals people's data keys, in FILE (mode 0600), instead of a pair")

    static let spec = CommandSpec(
        name: "keygen", usage: "NAME [options]",
        listings: [.init("keygen NAME", "a CURVE key pair NAME, NAME_secret; --master FILE: a master key")],
        section: .security,
        description: """
            Makes a CURVE key pair and writes it in CZMQ's certificate format (as pyzmq's
            zmq.auth reads it): DIR/NAME, the public certificate, to copy into a server's
            --clients folder, and DIR/NAME_secret (mode 0600), to keep. With --role the role
            is written into both certificates' metadata. An existing file is never replaced.
            With --master FILE it makes instead the master key that seals each person's data
            key (32 random bytes, mode 0600), for run's --master-key; keep it apart from the
            data directory and its backups, since whoever holds both reads every person's data.
            """,
        options: [role, directory, master])

    static func main(_ words: [String], in logbook: Logbook) -> ExitStatus {
        logbook.runner.run(spec, words) { arguments throws(CLIError) in
            if let path = arguments.value(master) {
                guard arguments.positionals.isEmpty, arguments.value(role) == nil else {
                    throw .usage("keygen --master FILE takes no NAME and no --role")
                }
                do {
                    try MasterKey.generate().write(to: path)
                } catch {
                    throw .unavailable("\(error)")
                }
                logbook.output.out(JSONWriter.string(.object(["masterKey": .string(path)])))
                return .success
            }
            guard arguments.positionals.count == 1, let name = arguments.positionals.first else {
                throw .usage("expected the key's name, e.g. keygen alice --role writer")
            }
            try checkName(name)
            var metadata: [Certificate.Property] = []
            if let roleName = arguments.value(role) {
                guard let role = ClientRole(rawValue: roleName) else {
                    throw .usage("role '\(roleName)' is not one of writer, reader, admin")
                }
                metadata.append(Certificate.Property(ClientRole.metadataName, role.rawValue))
            }
            let folder = arguments.value(directory) ?? "."
            let written = try write(name: name, metadata: metadata, in: folder)
            var report: JSONObject = [
                "public": .string(written.publicPath), "secret": .string(written.secretPath),
                "publicKey": .string(written.certificate.publicKey.z85),
            ]
            report["role"] = written.certificate.metadata(ClientRole.metadataName).map(JSONValue.string)
            logbook.output.out(JSONWriter.string(.object(report)))
            return .success
        }
    }

    /// Makes a pair and writes it; the folder is created (mode 0700) when missing.
    static func write(name: String, metadata: [Certificate.Property], in folder: String) throws(CLIError) -> (
        certificate: Certificate, publicPath: String, secretPath: String
    ) {
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .unavailable("cannot create \(folder): \(error.localizedDescription)")
        }
        let certificate: Certificate
        do {
            certificate = Certificate(try CurveKeyPair.generate(), metadata: metadata)
        } catch {
            throw .unavailable("cannot make a key pair: \(error)")
        }
        do {
            let paths = try KeyFiles.writePair(certificate, name: name, in: folder)
            return (certificate, paths.publicPath, paths.secretPath)
        } catch {
            throw .unavailable(error.description)
        }
    }

    /// A name is one file name: not empty, no `/`, not hidden, not ending in `_secret`.
    private static func checkName(_ name: String) throws(CLIError) {
        guard !name.isEmpty, !name.contains("/"), !name.hasPrefix("."), !name.hasSuffix("_secret") else {
            throw .usage("'\(name)' cannot name a key: use a file name without '/', not starting with '.'")
        }
    }
}
