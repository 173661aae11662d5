/// A ZAP request (ZeroMQ RFC 27) as the handler's REP socket receives it: version, request
/// id, domain, address, routing identity, mechanism, then the mechanism's credentials (for
/// CURVE, the client's 32-byte long-term public key).
struct ZAPRequest {
    let requestId: [UInt8]
    let domain: String
    let address: String
    let mechanism: String
    let credentials: [[UInt8]]

    /// Nil when the frames are not a version 1.0 request.
    init?(frames: [[UInt8]]) {
        guard frames.count >= 6, String(decoding: frames[0], as: UTF8.self) == "1.0" else { return nil }
        requestId = frames[1]
        domain = String(decoding: frames[2], as: UTF8.self)
        address = String(decoding: frames[3], as: UTF8.self)
        mechanism = String(decoding: frames[5], as: UTF8.self)
        credentials = Array(frames[6...])
    }
}

/// The handler's answer: status 200 (admitted, with a user id and metadata), 400 (refused)
/// or 500 (the request could not be read).
struct ZAPReply: Equatable {
    let status: Int
    let text: String
    let userId: String
    let metadata: [Certificate.Property]

    static func admitted(userId: String, metadata: [Certificate.Property]) -> ZAPReply {
        ZAPReply(status: 200, text: "OK", userId: userId, metadata: metadata)
    }

    static func refused(_ reason: String) -> ZAPReply {
        ZAPReply(status: 400, text: reason, userId: "", metadata: [])
    }

    /// The reply frames for request `requestId`.
    func frames(requestId: [UInt8]) -> [[UInt8]] {
        [
            Array("1.0".utf8), requestId, Array(String(status).utf8), Array(text.utf8), Array(userId.utf8),
            ZAPMetadata.encode(metadata),
        ]
    }
}

/// ZAP metadata in ZMTP's property format: per property, its name's length (1 byte), the
/// name, its value's length (4 bytes, network order), the value. libzmq attaches these to
/// every message of the connection (`zmq_msg_gets`).
public enum ZAPMetadata {
    /// The property that carries a client's role.
    public static let roleProperty = "Role"

    static func encode(_ properties: [Certificate.Property]) -> [UInt8] {
        var bytes: [UInt8] = []
        for property in properties {
            let name = Array(property.name.utf8)
            let value = Array(property.value.utf8)
            precondition(name.count <= 255, "a ZMTP property name is at most 255 bytes")
            bytes.append(UInt8(name.count))
            bytes += name
            let length = UInt32(value.count)
            bytes += [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            bytes += value
        }
        return bytes
    }
}
