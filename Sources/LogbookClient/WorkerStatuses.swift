public import LogbookJSON
import LogbookZMQ

/// One worker's answer to `Status`, asked on a connection of its own: the `result`
/// object, or why there is none.
public struct WorkerStatusAnswer: Sendable, Equatable {
    /// The worker's commands endpoint, as listed in `ClientEndpoints.commands`.
    public var endpoint: String
    public var outcome: Result<JSONObject, LogbookClientError>

    public init(endpoint: String, outcome: Result<JSONObject, LogbookClientError>) {
        self.endpoint = endpoint
        self.outcome = outcome
    }
}

extension LogbookClient {
    /// Asks every worker listed in `endpoints.commands` for its `Status`, each on a
    /// connection of its own and all at once (with this client's timeout and attempts), and
    /// returns their answers in the listed order, those that did not answer included: what
    /// an operator checking the workers wants to see. `status(of: .commands)` instead asks
    /// one worker, whichever live one the commands socket picks.
    public func statusOfEachWorker() async -> [WorkerStatusAnswer] {
        let listed = endpoints.commands.endpoints
        let base = endpoints
        let (timeout, attempts, security) = (self.timeout, self.attempts, self.security)
        let answers = await withTaskGroup(of: (Int, WorkerStatusAnswer).self) { group in
            for (index, endpoint) in listed.enumerated() {
                group.addTask {
                    var one = base
                    one.commands = EndpointList(endpoint)
                    let outcome: Result<JSONObject, LogbookClientError>
                    do throws(LogbookClientError) {
                        let client = try LogbookClient(
                            endpoints: one, timeout: timeout, attempts: attempts, security: security)
                        defer { client.close() }
                        outcome = .success(try await client.status(of: .commands))
                    } catch {
                        outcome = .failure(error)
                    }
                    return (index, WorkerStatusAnswer(endpoint: endpoint, outcome: outcome))
                }
            }
            var answers: [(Int, WorkerStatusAnswer)] = []
            for await answer in group { answers.append(answer) }
            return answers
        }
        return answers.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
