/// The Redis protocol (RESP2), as much as the comparison needs: commands written as arrays
/// of bulk strings, and replies measured (how many bytes one complete reply takes) without
/// building values.
enum RESP {
    /// `*N\r\n` then `$len\r\narg\r\n` for each argument.
    static func command(_ arguments: [String]) -> [UInt8] {
        var bytes = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            let utf8 = Array(argument.utf8)
            bytes += Array("$\(utf8.count)\r\n".utf8)
            bytes += utf8
            bytes += [13, 10]
        }
        return bytes
    }

    /// What the start of a buffer holds.
    enum Scan: Equatable {
        /// One whole reply of `length` bytes; `isError` for a `-ERR …` reply.
        case reply(length: Int, isError: Bool)
        /// Not all of it has arrived yet.
        case incomplete
        /// Not RESP.
        case malformed
    }

    /// Measures the reply that starts at `start`.
    static func scan(_ bytes: [UInt8], from start: Int = 0) -> Scan {
        guard start < bytes.count else { return .incomplete }
        guard let lineEnd = endOfLine(bytes, from: start + 1) else { return .incomplete }
        let header = lineEnd + 2 - start
        switch bytes[start] {
        case UInt8(ascii: "+"), UInt8(ascii: ":"):
            return .reply(length: header, isError: false)
        case UInt8(ascii: "-"):
            return .reply(length: header, isError: true)
        case UInt8(ascii: "$"):
            guard let size = integer(bytes, start + 1, lineEnd) else { return .malformed }
            if size < 0 { return .reply(length: header, isError: false) }  // a null bulk string
            let total = header + size + 2
            return bytes.count - start >= total ? .reply(length: total, isError: false) : .incomplete
        case UInt8(ascii: "*"):
            guard let count = integer(bytes, start + 1, lineEnd) else { return .malformed }
            var length = header
            for _ in 0..<max(0, count) {
                switch scan(bytes, from: start + length) {
                case .reply(let element, _): length += element
                case let other: return other
                }
            }
            return .reply(length: length, isError: false)
        default:
            return .malformed
        }
    }

    /// The index of the `\r` of the first `\r\n` at or after `from`.
    private static func endOfLine(_ bytes: [UInt8], from: Int) -> Int? {
        var index = from
        while index + 1 < bytes.count {
            if bytes[index] == 13 && bytes[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }

    private static func integer(_ bytes: [UInt8], _ from: Int, _ to: Int) -> Int? {
        Int(String(decoding: bytes[from..<to], as: UTF8.self))
    }
}
