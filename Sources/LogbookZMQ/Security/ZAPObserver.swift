/// A refused handshake, as the ZAP handler reports it.
public struct ZAPRefusal: Sendable, Equatable {
    /// The client's public key in Z85; nil when it offered none (another mechanism).
    public var key: String?
    public var address: String
    public var domain: String
    public var reason: String

    public init(key: String?, address: String, domain: String, reason: String) {
        self.key = key
        self.address = address
        self.domain = domain
        self.reason = reason
    }
}

/// What a ZAP handler tells its process: each refused handshake, each admitted one, and
/// about once a second without requests (so a rate-limited log can report what it held back).
/// Called on the handler's thread only.
public protocol ZAPObserver: Sendable {
    func refused(_ refusal: ZAPRefusal)
    func admitted(key: String, role: ClientRole, address: String, domain: String)
    func quiet()
}
