import Dispatch
import LogbookClient
import LogbookCommandLine
import LogbookJSON
import LogbookZMQ
import Synchronization

/// A `LogbookClient` for one client command, with the configuration's endpoints, and a way
/// for the synchronous command line to wait for its answers: the main thread blocks on a
/// semaphore (it is not one of Swift concurrency's pool threads) while the client's own
/// thread does the socket work.
struct ClientSession {
    let client: LogbookClient

    init(arguments: Arguments, configuration: Configuration) throws(CLIError) {
        let patience = try ClientPatience(arguments)
        do {
            client = try LogbookClient(
                endpoints: configuration.endpoints, timeout: .milliseconds(patience.timeoutMilliseconds),
                attempts: patience.attempts, security: try configuration.clientKeys())
        } catch let error as CLIError {
            throw error
        } catch {
            throw .unavailable("cannot start the client: \(error)")
        }
    }

    /// Sends `document` and waits for the reply; a reply that never comes is a failure of
    /// the command line (exit 3), an error reply is not.
    func request(_ server: ServerEndpoint, _ document: JSONObject) throws(CLIError) -> JSONObject {
        let client = self.client
        let result = Self.wait { () async -> Result<JSONObject, LogbookClientError> in
            do throws(LogbookClientError) {
                return .success(try await client.request(server, document))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let reply): return reply
        case .failure(let error): throw .unavailable("\(server) (\(client.endpoints.address(of: server))): \(error)")
        }
    }

    /// Runs `body` on Swift concurrency's pool and blocks this (non-pool) thread until it ends.
    static func wait<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let box = Mutex<T?>(nil)
        Task {
            let value = await body()
            box.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return box.withLock { $0 }!
    }
}

extension JSONObject {
    /// Whether a reply document says `"ok": true`.
    var isOK: Bool { self["ok"] == .bool(true) }
}
