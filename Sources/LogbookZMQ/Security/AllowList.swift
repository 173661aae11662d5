import Foundation

/// The client keys a server admits and the role of each, read from a directory of public
/// certificates (`--clients DIR`). A certificate directly in DIR names its role in its
/// metadata (`role = "writer"`); one in `DIR/writer/`, `DIR/reader/` or `DIR/admin/` has
/// that folder's role (so pyzmq's public files, which carry no metadata, go in unchanged),
/// and a `role` it names must agree. Files whose name starts with `.` are skipped; a secret
/// certificate, a missing or unknown role, a key listed twice and an empty list are errors.
public struct AllowList: Sendable, Equatable {
    /// One admitted key.
    public struct Entry: Sendable, Equatable {
        public var role: ClientRole
        /// The file it came from, for diagnostics.
        public var path: String

        public init(role: ClientRole, path: String) {
            self.role = role
            self.path = path
        }
    }

    /// By public key in Z85 (the user id Logbook's ZAP handler gives a connection).
    public let entries: [String: Entry]

    public init(entries: [String: Entry]) {
        self.entries = entries
    }

    /// The role of a key, or nil when the list does not hold it.
    public func role(of key: String) -> ClientRole? { entries[key]?.role }

    /// Reads the directory.
    public static func load(directory: String) throws(AllowListError) -> AllowList {
        var entries: [String: Entry] = [:]
        for (path, folderRole) in try files(in: directory) {
            let certificate: Certificate
            do {
                certificate = try KeyFiles.certificate(at: path)
            } catch {
                throw .certificate(error)
            }
            guard certificate.secretKey == nil else { throw .secretCertificate(path) }
            let named = certificate.metadata(ClientRole.metadataName)
            var role = folderRole
            if let named {
                guard let given = ClientRole(rawValue: named) else { throw .unknownRole(path, named) }
                if let folder = folderRole, folder != given { throw .roleMismatch(path, named: given, folder: folder) }
                role = given
            }
            guard let role else { throw .missingRole(path) }
            let key = certificate.publicKey.z85
            if let earlier = entries[key] { throw .duplicateKey(path, earlier.path) }
            entries[key] = Entry(role: role, path: path)
        }
        guard !entries.isEmpty else { throw .empty(directory) }
        return AllowList(entries: entries)
    }

    /// The certificate files of the directory and its role folders, in name order.
    private static func files(in directory: String) throws(AllowListError) -> [(String, ClientRole?)] {
        var found: [(String, ClientRole?)] = []
        for name in try names(in: directory) {
            let path = (directory as NSString).appendingPathComponent(name)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { continue }
            if !isFolder.boolValue {
                found.append((path, nil))
            } else if let role = ClientRole(rawValue: name) {
                for inner in try names(in: path) {
                    let innerPath = (path as NSString).appendingPathComponent(inner)
                    var innerIsFolder: ObjCBool = false
                    if FileManager.default.fileExists(atPath: innerPath, isDirectory: &innerIsFolder),
                        !innerIsFolder.boolValue
                    {
                        found.append((innerPath, role))
                    }
                }
            } else {
                throw .strayFolder(path)
            }
        }
        return found
    }

    private static func names(in directory: String) throws(AllowListError) -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directory).filter { !$0.hasPrefix(".") }.sorted()
        } catch {
            throw .unreadableDirectory(directory, (error as NSError).localizedDescription)
        }
    }
}

/// Why an allow-list directory cannot be used.
public enum AllowListError: Error, Sendable, Equatable, CustomStringConvertible {
    case unreadableDirectory(String, String)
    /// No certificate at all: a server would admit no one.
    case empty(String)
    case certificate(KeyFileError)
    /// A client's secret certificate does not belong on the server.
    case secretCertificate(String)
    case missingRole(String)
    case unknownRole(String, String)
    case roleMismatch(String, named: ClientRole, folder: ClientRole)
    case duplicateKey(String, String)
    /// A folder that is not a role's.
    case strayFolder(String)

    public var description: String {
        let roles = ClientRole.allCases.map(\.rawValue).joined(separator: ", ")
        switch self {
        case .unreadableDirectory(let path, let reason): return "cannot read the allow-list \(path): \(reason)"
        case .empty(let path): return "the allow-list \(path) holds no client certificate"
        case .certificate(let error): return error.description
        case .secretCertificate(let path):
            return "\(path): a secret certificate; the allow-list takes clients' public certificates only"
        case .missingRole(let path):
            return
                "\(path): no role; add role = \"…\" (\(roles)) to its metadata or put it in a folder named after its role"
        case .unknownRole(let path, let role): return "\(path): role '\(role)' is not one of \(roles)"
        case .roleMismatch(let path, let named, let folder):
            return "\(path): its metadata says role \(named) but it is in the \(folder) folder"
        case .duplicateKey(let path, let earlier): return "\(path): the same key as \(earlier)"
        case .strayFolder(let path): return "\(path): a folder that is not a role (\(roles))"
        }
    }
}
