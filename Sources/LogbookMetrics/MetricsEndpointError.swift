/// Why the metrics endpoint could not start: its host did not resolve, its socket could not
/// be bound (a port in use, an address not on this machine) or the HTTP server would not
/// start. `description` is one line naming the address.
public struct MetricsEndpointError: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ address: MetricsAddress, _ reason: String) {
        description = "cannot serve metrics on \(address): \(reason)"
    }
}
