import CZeroMQ

/// Z85 (ZeroMQ RFC 32), the text form of CURVE keys, through libzmq's own encoder and
/// decoder: 4 bytes become 5 printable characters.
public enum Z85 {
    /// The 85 characters Z85 writes, in order of value.
    static let alphabet = Set(
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#".utf8)

    /// The text of `bytes`, whose count must be a multiple of 4.
    public static func encode(_ bytes: [UInt8]) -> String {
        precondition(bytes.count % 4 == 0, "Z85 encodes whole groups of 4 bytes")
        var text = [CChar](repeating: 0, count: bytes.count / 4 * 5 + 1)
        _ = zmq_z85_encode(&text, bytes, bytes.count)
        return String(decoding: text.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The bytes `text` stands for.
    public static func decode(_ text: String) throws(Z85Error) -> [UInt8] {
        let characters = Array(text.utf8)
        guard characters.count % 5 == 0, !characters.isEmpty else { throw .length(characters.count) }
        if let offset = characters.firstIndex(where: { !alphabet.contains($0) }) {
            throw .character(offset: offset)
        }
        var bytes = [UInt8](repeating: 0, count: characters.count / 5 * 4)
        guard zmq_z85_decode(&bytes, text) != nil else { throw .value }
        return bytes
    }
}

/// Why a text is not Z85.
public enum Z85Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// Z85 text comes in groups of 5 characters.
    case length(Int)
    /// The character at this offset (from 0) is not one of Z85's 85.
    case character(offset: Int)
    /// A group of 5 characters stands for more than 32 bits.
    case value

    public var description: String {
        switch self {
        case .length(let count): "\(count) characters is not a whole number of 5-character groups"
        case .character(let offset): "character \(offset + 1) is not a Z85 character"
        case .value: "a 5-character group is larger than 32 bits"
        }
    }
}
