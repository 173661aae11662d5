import Testing

@testable import LogbookMetrics

@Suite("The --metrics address")
struct MetricsAddressTests {
    @Test("HOST:PORT, a name, an IPv6 address in brackets, port 0")
    func valid() throws {
        #expect(try MetricsAddress(parsing: "127.0.0.1:9464") == MetricsAddress(host: "127.0.0.1", port: 9464))
        #expect(try MetricsAddress(parsing: "localhost:1") == MetricsAddress(host: "localhost", port: 1))
        #expect(try MetricsAddress(parsing: "[::1]:9464") == MetricsAddress(host: "::1", port: 9464))
        #expect(try MetricsAddress(parsing: "[::1]:9464").description == "[::1]:9464")
        #expect(try MetricsAddress(parsing: "0.0.0.0:0").port == 0)
    }

    @Test(
        "no port, a port out of range, no host, a bare IPv6 address: refused with the reason",
        arguments: [
            ("127.0.0.1", "expected HOST:PORT"), ("127.0.0.1:70000", "not a number from 0 to 65535"),
            ("127.0.0.1:", "not a number"), (":9464", "with a host"), ("::1:9464", "in brackets"),
            ("tcp://127.0.0.1:9464", "with a host"), ("host:+1", "not a number"),
        ])
    func invalid(text: String, reason: String) {
        #expect {
            try MetricsAddress(parsing: text)
        } throws: { error in
            "\(error)".contains(reason)
        }
    }
}
