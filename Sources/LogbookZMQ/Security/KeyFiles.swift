import Foundation
import Glibc

/// Certificate files on disk: reading a public or a secret certificate (a secret one must
/// not be open to other users), and writing a new pair, `NAME` and `NAME_secret`, without
/// ever replacing a file that exists.
public enum KeyFiles {
    /// Reads any certificate (public or secret) at `path`.
    public static func certificate(at path: String) throws(KeyFileError) -> Certificate {
        let text = try read(path)
        do {
            return try CertificateParser.parse(text)
        } catch {
            throw KeyFileError(path, .invalid(error))
        }
    }

    /// Reads a secret certificate: it must hold a secret key, and no one but its owner (and
    /// group) may read or write it.
    public static func secretCertificate(at path: String) throws(KeyFileError) -> Certificate {
        var info = stat()
        guard stat(path, &info) == 0 else { throw KeyFileError(path, .unreadable(String(cString: strerror(errno)))) }
        guard info.st_mode & 0o007 == 0 else { throw KeyFileError(path, .exposed(mode: UInt32(info.st_mode))) }
        let certificate = try certificate(at: path)
        guard certificate.secretKey != nil else { throw KeyFileError(path, .notSecret) }
        return certificate
    }

    /// The name of the secret file beside the public file `path`.
    public static func secretPath(_ path: String) -> String { path + "_secret" }

    /// Writes `certificate` as `DIRECTORY/NAME` (public, mode 0644) and `DIRECTORY/NAME_secret`
    /// (mode 0600). Fails, writing nothing, when either exists.
    @discardableResult
    public static func writePair(_ certificate: Certificate, name: String, in directory: String)
        throws(KeyFileError) -> (publicPath: String, secretPath: String)
    {
        let publicPath = (directory as NSString).appendingPathComponent(name)
        let secretPath = secretPath(publicPath)
        for path in [publicPath, secretPath] where FileManager.default.fileExists(atPath: path) {
            throw KeyFileError(path, .unreadable("it exists already; a certificate is never overwritten"))
        }
        try create(secretPath, CertificateWriter.secretText(certificate), mode: 0o600)
        do {
            try create(publicPath, CertificateWriter.publicText(certificate), mode: 0o644)
        } catch {
            unlink(secretPath)
            throw error
        }
        return (publicPath, secretPath)
    }

    /// Writes the public certificate of `certificate` at `path` (mode 0644), which must not exist
    /// (copying a client's key into an allow-list).
    public static func writePublic(_ certificate: Certificate, to path: String) throws(KeyFileError) {
        try create(path, CertificateWriter.publicText(certificate), mode: 0o644)
    }

    /// Creates `path` (never an existing file) with exactly `mode` and writes `text`.
    static func create(_ path: String, _ text: String, mode: mode_t) throws(KeyFileError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw KeyFileError(path, .unreadable(String(cString: strerror(errno)))) }
        defer { close(descriptor) }
        // The mode is exact whatever the umask.
        fchmod(descriptor, mode)
        var bytes = Array(text.utf8)
        let written = bytes.withUnsafeMutableBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            unlink(path)
            throw KeyFileError(path, .unreadable("cannot write it: \(String(cString: strerror(errno)))"))
        }
    }

    private static func read(_ path: String) throws(KeyFileError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = access(path, F_OK) == 0 ? String(cString: strerror(EACCES)) : "no such file"
            throw KeyFileError(path, .unreadable(reason))
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw KeyFileError(path, .invalid(.malformed(line: 1, "the file is not UTF-8 text")))
        }
        return text
    }
}
