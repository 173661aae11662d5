import Glibc

/// The master key file: one line, `logbook-master-key-v1 <key>\n`, the key's 32 bytes in
/// URL-safe base64 without padding. Key bytes read or written pass through one buffer,
/// zeroed when done; errors never quote the file's contents.
extension MasterKey {
    /// The first word of a key file, naming its format.
    static var fileFormat: String { "logbook-master-key-v1" }
    /// No key file is larger; a larger file is refused without being parsed.
    static var largestFile: Int { 4096 }

    /// The text of a key file holding this key: `logbook-master-key-v1 <base64>\n`.
    /// The string cannot be zeroed: prefer `write(to:)`, which never makes one.
    public var fileText: String {
        var contents = fileContents()
        defer { Sodium.zero(&contents) }
        return String(decoding: contents, as: UTF8.self)
    }

    /// The master key in the text of a key file (a missing final newline is accepted).
    /// Throws `malformedKeyFile` with a one-line reason that quotes none of the text.
    public static func parse(fileText: String) throws(CryptoError) -> MasterKey {
        try Sodium.check()
        var text = fileText
        switch text.withUTF8({ parse($0) }) {
        case .key(let key): return key
        case .malformed(let reason): throw .malformedKeyFile(reason)
        }
    }

    /// The master key in the key file at `path`. Throws `unreadableKeyFile` (with the
    /// system's reason) when it cannot be opened or read, `malformedKeyFile` (with the path
    /// and the reason) when its text is not a key file.
    public static func read(path: String) throws(CryptoError) -> MasterKey {
        try Sodium.check()
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadableKeyFile(path: path, reason: systemError(errno)) }
        defer { Glibc.close(descriptor) }
        var contents = [UInt8](repeating: 0, count: largestFile + 1)
        defer { Sodium.zero(&contents) }
        var count = 0
        while count < contents.count {
            let (result, error) = contents.withUnsafeMutableBytes { buffer in
                let result = Glibc.read(descriptor, buffer.baseAddress! + count, buffer.count - count)
                return (result, errno)
            }
            if result > 0 {
                count += result
            } else if result == 0 {
                break
            } else if error != EINTR {
                throw .unreadableKeyFile(path: path, reason: systemError(error))
            }
        }
        guard count <= largestFile else {
            throw .malformedKeyFile("\(path): it is larger than a key file (\(largestFile) bytes at most)")
        }
        let parsed = contents.withUnsafeBufferPointer { parse(UnsafeBufferPointer(rebasing: $0[..<count])) }
        switch parsed {
        case .key(let key): return key
        case .malformed(let reason): throw .malformedKeyFile("\(path): \(reason)")
        }
    }

    /// Writes this key to a new key file at `path`, readable and writable by its owner only
    /// (mode 0600), then makes the file and its directory entry durable (`fsync`). Never
    /// replaces a file: an existing one is refused (`O_EXCL`). Throws `unwritableKeyFile`;
    /// a file this call created is removed again when a later step fails.
    public func write(to path: String) throws(CryptoError) {
        try Sodium.check()
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .unwritableKeyFile(path: path, reason: Self.systemError(errno)) }
        var contents = fileContents()
        defer { Sodium.zero(&contents) }
        // The mode given to open is narrowed by the umask; set it exactly.
        var problem = fchmod(descriptor, 0o600) == 0 ? nil : "fchmod: \(Self.systemError(errno))"
        if problem == nil { problem = Self.writeAll(contents, to: descriptor) }
        if problem == nil, fsync(descriptor) != 0 { problem = "fsync: \(Self.systemError(errno))" }
        if Glibc.close(descriptor) != 0, problem == nil { problem = "close: \(Self.systemError(errno))" }
        if problem == nil { problem = Self.syncDirectory(of: path) }
        if let problem {
            unlink(path)
            throw .unwritableKeyFile(path: path, reason: problem)
        }
    }

    // MARK: Parsing and writing

    /// A key file's text, parsed.
    enum ParsedKeyFile {
        case key(MasterKey)
        /// Why the text is not a key file, in one line that quotes none of it.
        case malformed(String)
    }

    /// Parses a key file's text.
    static func parse(_ text: UnsafeBufferPointer<UInt8>) -> ParsedKeyFile {
        let newline = UInt8(ascii: "\n")
        let space = UInt8(ascii: " ")
        var line = text[...]
        if line.last == newline { line = line.dropLast() }
        guard !line.isEmpty else { return .malformed("the file is empty") }
        let format = line.prefix { $0 != space }
        guard format.elementsEqual(fileFormat.utf8) else {
            let versioned = Array("logbook-master-key-".utf8)
            let isFormatName = format.count <= 40 && format.allSatisfy { $0 > space && $0 < 0x7F }
            if format.starts(with: versioned), isFormatName {
                let name = String(decoding: format, as: UTF8.self)
                return .malformed("its format is \(name); this build reads \(fileFormat)")
            }
            return .malformed("it does not start with \"\(fileFormat) \"")
        }
        let encoded = line.dropFirst(format.count + 1)
        guard !encoded.isEmpty else { return .malformed("the key is missing after \"\(fileFormat) \"") }
        if encoded.contains(newline) { return .malformed("it has more than one line") }
        if encoded.contains(where: { $0 == space || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }) {
            return .malformed("the key has spaces, tabs or a carriage return around it")
        }
        guard var bytes = Base64.decode(UnsafeBufferPointer(rebasing: encoded)) else {
            return .malformed("the key is not URL-safe base64 without padding")
        }
        defer { Sodium.zero(&bytes) }
        guard bytes.count == SecretKey.byteCount else {
            return .malformed("the key is \(bytes.count) bytes, not \(SecretKey.byteCount)")
        }
        let key = SecretKey(filling: { target in bytes.withUnsafeBytes { target.copyMemory(from: $0) } })
        return .key(MasterKey(key))
    }

    /// The bytes of this key's file; the caller zeroes them.
    private func fileContents() -> [UInt8] {
        let header = Array((Self.fileFormat + " ").utf8)
        let encodedCount = Base64.encodedByteCount(SecretKey.byteCount)
        // The header, the key, and its terminating zero, which becomes the newline.
        var contents = [UInt8](repeating: 0, count: header.count + encodedCount + 1)
        contents.withUnsafeMutableBufferPointer { buffer in
            _ = buffer.update(fromContentsOf: header)
            key.withUnsafeBytes { key in
                Base64.encode(key, into: UnsafeMutableBufferPointer(rebasing: buffer[header.count...]))
            }
            buffer[buffer.count - 1] = UInt8(ascii: "\n")
        }
        return contents
    }

    /// Writes all of `contents`; nil, or what went wrong.
    private static func writeAll(_ contents: [UInt8], to descriptor: Int32) -> String? {
        contents.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written >= 0 {
                    offset += written
                } else if errno != EINTR {
                    return "write: \(systemError(errno))"
                }
            }
            return nil
        }
    }

    /// Makes the directory entry of `path` durable; nil, or what went wrong.
    private static func syncDirectory(of path: String) -> String? {
        let directory: String
        if let slash = path.lastIndex(of: "/") {
            directory = slash == path.startIndex ? "/" : String(path[..<slash])
        } else {
            directory = "."
        }
        let descriptor = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return "opening its directory: \(systemError(errno))" }
        defer { Glibc.close(descriptor) }
        // EINVAL: the file system does not sync directories (its entries are durable as written).
        if fsync(descriptor) != 0, errno != EINVAL { return "syncing its directory: \(systemError(errno))" }
        return nil
    }

    /// The system's text for an `errno` value.
    static func systemError(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
