import Foundation
import FoundationNetworking
import Testing

@testable import LogbookMetrics

/// The endpoint with a real libmicrohttpd server and a real HTTP client (Foundation's
/// URLSession, libcurl underneath), awaited without blocking a thread of the pool.
@Suite("The metrics endpoint", .serialized)
struct MetricsEndpointTests {
    @Test("GET /metrics returns what render writes, with the exposition content type; other paths 404")
    func serves() async throws {
        let endpoint = try MetricsEndpoint(MetricsAddress(host: "127.0.0.1", port: 0)) {
            ExpositionWriter.text([.counter("logbook_test_total", "A test.", 7)])
        }
        defer { endpoint.stop() }
        #expect(endpoint.boundAddress.port != 0)
        let url = try #require(URL(string: "http://\(endpoint.boundAddress)/metrics"))
        let (body, response) = try await Self.fetch(URLRequest(url: url))
        #expect(response.statusCode == 200)
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        #expect(String(decoding: body, as: UTF8.self).hasSuffix("logbook_test_total 7\n"))
        let missing = try #require(URL(string: "http://\(endpoint.boundAddress)/"))
        #expect(try await Self.fetch(URLRequest(url: missing)).1.statusCode == 404)
        var post = URLRequest(url: url)
        post.httpMethod = "POST"
        #expect(try await Self.fetch(post).1.statusCode == 405)
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

    private static func fetch(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        var request = request
        request.timeoutInterval = 30
        let (data, response) = try await URLSession.shared.data(for: request)
        return (data, try #require(response as? HTTPURLResponse))
    }
}
