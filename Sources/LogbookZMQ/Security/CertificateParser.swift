/// Reads CZMQ's certificate text (ZPL, ZeroMQ RFC 4, as `zcert` and pyzmq's `zmq.auth` write
/// it), strictly: comments and blank lines, the top-level sections `metadata` and `curve`
/// (each once), and under them, indented by 4 spaces, `name = value` lines whose value is
/// quoted (`"…"` or `'…'`) or a bare word. `curve` holds `public-key` and, in a secret
/// certificate, `secret-key`, each 40 characters of Z85; anything else is an error.
public enum CertificateParser {
    public static func parse(_ text: String) throws(CertificateError) -> Certificate {
        guard !text.isEmpty else { throw .empty }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.last == "" else { throw .truncated(line: lines.count) }
        lines.removeLast()
        var sections: [String: [(name: String, value: String, line: Int)]] = [:]
        var current: String?
        for (offset, raw) in lines.enumerated() {
            let number = offset + 1
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            let indent = line.prefix(while: { $0 == " " }).count
            let content = line.dropFirst(indent)
            if content.isEmpty || content.hasPrefix("#") { continue }
            if content.first == "\t" { throw .malformed(line: number, "indented with a tab") }
            switch indent {
            case 0:
                let name = String(content.prefix(while: { $0 != " " && $0 != "#" }))
                guard name == "metadata" || name == "curve" else {
                    throw .malformed(line: number, "'\(name)' is not a section of a certificate (metadata, curve)")
                }
                guard sections[name] == nil else { throw .malformed(line: number, "a second '\(name)' section") }
                try expectNothingAfter(content.dropFirst(name.count), line: number)
                sections[name] = []
                current = name
            case 4:
                guard let section = current else {
                    throw .malformed(line: number, "a property before any section")
                }
                let (name, value) = try property(content, line: number)
                guard sections[section]?.contains(where: { $0.name == name }) == false else {
                    throw .malformed(line: number, "'\(name)' is given twice")
                }
                sections[section]?.append((name, value, number))
            default:
                throw .malformed(line: number, "indented by \(indent) spaces; ZPL indents by 4")
            }
        }
        guard let metadata = sections["metadata"] else { throw .missingSection("metadata") }
        guard let curve = sections["curve"] else { throw .missingSection("curve") }
        if let other = curve.first(where: { $0.name != "public-key" && $0.name != "secret-key" }) {
            throw .malformed(line: other.line, "'\(other.name)' is not a key of the 'curve' section")
        }
        guard let publicEntry = curve.first(where: { $0.name == "public-key" }) else {
            throw .missingKey("public-key")
        }
        let publicKey = try key(publicEntry)
        let secretKey = try curve.first(where: { $0.name == "secret-key" }).map { entry throws(CertificateError) in
            try key(entry)
        }
        if let secretKey {
            guard (try? CurveKeyPair(secretKey: secretKey))?.publicKey == publicKey else { throw .mismatchedKeys }
        }
        return Certificate(
            publicKey: publicKey, secretKey: secretKey,
            metadata: metadata.map { Certificate.Property($0.name, $0.value) })
    }

    private static func key(_ entry: (name: String, value: String, line: Int)) throws(CertificateError) -> CurveKey {
        let length = entry.value.utf8.count
        guard length == CurveKey.textLength else {
            throw .wrongLength(key: entry.name, line: entry.line, length: length)
        }
        do {
            return try CurveKey(z85: entry.value)
        } catch {
            guard case .z85(let problem) = error else {
                throw .wrongLength(key: entry.name, line: entry.line, length: length)
            }
            throw .badZ85(key: entry.name, line: entry.line, problem)
        }
    }

    /// ZPL's name characters.
    private static func isNameCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "$-_@.&+/".contains(character))
    }

    /// `name = value`, the value quoted or a bare word, then at most a comment.
    private static func property(_ content: Substring, line: Int) throws(CertificateError) -> (String, String) {
        let name = content.prefix(while: isNameCharacter)
        guard !name.isEmpty else { throw .malformed(line: line, "expected a property name") }
        var rest = content.dropFirst(name.count).drop(while: { $0 == " " })
        guard rest.first == "=" else { throw .malformed(line: line, "expected '=' after '\(name)'") }
        rest = rest.dropFirst().drop(while: { $0 == " " })
        let value: Substring
        if let quote = rest.first, quote == "\"" || quote == "'" {
            let body = rest.dropFirst()
            guard let end = body.firstIndex(of: quote) else {
                throw .malformed(line: line, "the value of '\(name)' has no closing \(quote)")
            }
            value = body[..<end]
            rest = body[body.index(after: end)...]
        } else {
            value = rest.prefix(while: { $0 != " " && $0 != "#" })
            rest = rest.dropFirst(value.count)
        }
        try expectNothingAfter(rest, line: line)
        return (String(name), String(value))
    }

    /// Only blanks and a comment may follow.
    private static func expectNothingAfter(_ rest: Substring, line: Int) throws(CertificateError) {
        let trimmed = rest.drop(while: { $0 == " " })
        guard trimmed.isEmpty || trimmed.hasPrefix("#") else {
            throw .malformed(line: line, "unexpected '\(trimmed)'")
        }
    }
}
