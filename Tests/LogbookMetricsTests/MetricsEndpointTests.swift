import Foundation
import Glibc
import Testing

@testable import LogbookMetrics

/// The endpoint with a real libmicrohttpd server and a real HTTP client (curl).
@Suite("The metrics endpoint", .serialized)
struct MetricsEndpointTests {
    @Test("GET /metrics returns what render writes, with the exposition content type; other paths 404")
    func serves() throws {
        let endpoint = try MetricsEndpoint(MetricsAddress(host: "127.0.0.1", port: 0)) {
            ExpositionWriter.text([.counter("logbook_test_total", "A test.", 7)])
        }
        defer { endpoint.stop() }
        #expect(endpoint.boundAddress.port != 0)
        let url = "http://\(endpoint.boundAddress)/metrics"
        let scrape = try curl(["-sS", "-D", "-", url])
        #expect(scrape.status == 0, "\(scrape.output)")
        #expect(scrape.output.hasPrefix("HTTP/1.1 200"))
        #expect(scrape.output.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8"))
        #expect(scrape.output.hasSuffix("logbook_test_total 7\n"))
        let missing = try curl(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "http://\(endpoint.boundAddress)/"])
        #expect(missing.output == "404")
        let posted = try curl(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", url])
        #expect(posted.output == "405")
    }

    @Test("a port in use: init throws one line naming the address and the reason; stop releases the port")
    func portTaken() throws {
        let first = try MetricsEndpoint(MetricsAddress(host: "127.0.0.1", port: 0)) { "" }
        let address = first.boundAddress
        #expect {
            _ = try MetricsEndpoint(address) { "" }
        } throws: { error in
            "\(error)" == "cannot serve metrics on \(address): Address already in use"
        }
        first.stop()
        let again = try MetricsEndpoint(address) { "" }
        again.stop()
    }

    @Test("a host that does not resolve is refused")
    func unresolvable() {
        #expect {
            _ = try MetricsEndpoint(MetricsAddress(host: "no-such-host.invalid", port: 0)) { "" }
        } throws: { error in
            "\(error)".hasPrefix("cannot serve metrics on no-such-host.invalid:0: cannot resolve")
        }
    }

    private func curl(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["--max-time", "30"] + arguments
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus,
            String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
        )
    }
}
