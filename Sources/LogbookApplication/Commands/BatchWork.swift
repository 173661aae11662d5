import LogbookDomain

/// A batch of commands as the handler works through it: the requests in arrival order,
/// each parsed command, the outcomes found so far, and the repeats of an id earlier in the
/// batch (answered with their original's outcome).
struct BatchWork {
    private(set) var requests: [CommandRequest] = []
    var commands: [Command?] = []
    var outcomes: [CommandOutcome?] = []
    private var repeats: [(index: Int, original: Int)] = []
    private var firstIndexOfId: [String: Int] = [:]

    /// Parses each request (`add`).
    init(_ requests: [CommandRequest], today: CalendarDate) {
        _ = add(requests, today: today)
    }

    /// Parses more requests, after those the batch holds: the indices of those to decide,
    /// in request order. One with a malformed id or command is refused here, never recorded
    /// (the same request always gets the same refusal).
    mutating func add(_ more: [CommandRequest], today: CalendarDate) -> [Int] {
        var pending: [Int] = []
        pending.reserveCapacity(more.count)
        requests.reserveCapacity(requests.count + more.count)
        for request in more {
            let index = requests.count
            requests.append(request)
            commands.append(nil)
            outcomes.append(nil)
            if let error = Self.problemWithIds(request) {
                outcomes[index] = .rejected(error)
            } else if let original = firstIndexOfId[request.commandId] {
                repeats.append((index, original))
            } else {
                do {
                    commands[index] = try CommandParser.parse(type: request.type, data: request.data, today: today)
                    firstIndexOfId[request.commandId] = index
                    pending.append(index)
                } catch {
                    outcomes[index] = .rejected(error)
                }
            }
        }
        return pending
    }

    /// Every outcome in request order, repeats answered as retries of their original.
    func finished() -> [CommandOutcome] {
        var outcomes = outcomes
        for (index, original) in repeats {
            outcomes[index] = outcomes[original].map(Self.asRetry)
        }
        return outcomes.map { $0 ?? .rejected(ServiceError(.internal, "command was not handled")) }
    }

    /// Ids are printable ASCII, so that every store and every language compares them
    /// byte for byte (Swift's `String` equality would merge canonically equal Unicode).
    private static func problemWithIds(_ request: CommandRequest) -> ServiceError? {
        let ids = [
            ("id", request.commandId), ("correlationId", request.correlationId), ("causationId", request.causationId),
        ]
        for case (let field, let value?) in ids {
            let bytes = value.utf8
            guard (1...CommandRequest.maximumIdLength).contains(bytes.count),
                bytes.allSatisfy({ (0x21...0x7E).contains($0) })
            else {
                return ServiceError(
                    .invalidInput,
                    "\(field): must be 1–\(CommandRequest.maximumIdLength) printable ASCII characters, without spaces",
                    details: [("field", .string(field))])
            }
        }
        return nil
    }

    private static func asRetry(_ outcome: CommandOutcome) -> CommandOutcome {
        guard case .accepted(var accepted) = outcome else { return outcome }
        accepted.wasRetry = true
        return .accepted(accepted)
    }
}
