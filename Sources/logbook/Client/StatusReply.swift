import Foundation
import LogbookClient
import LogbookCommandLine
import LogbookJSON
import LogbookWire

/// A server's reply to `Status`, read as the typed status of its role: the status, or the
/// error reply the server sent instead.
enum StatusReply<Status: StatusDocument> {
    case status(Status)
    case refused(JSONObject)

    /// What `logbook status` prints for it: the status, or the error reply as it came.
    var json: JSONValue {
        switch self {
        case .status(let status): status.json
        case .refused(let reply): .object(reply)
        }
    }
}

extension ClientSession {
    /// Asks `server` for its `Status`. A success whose `result` is not a `Status` of that
    /// type is a failure of the command line, as a server that does not answer is.
    func status<Status>(of server: ServerEndpoint, as type: Status.Type) throws(CLIError) -> StatusReply<Status> {
        let reply = try request(server, RequestDocument.status(id: UUID().uuidString))
        guard reply.isOK else { return .refused(reply) }
        do {
            return .status(try Status(json: reply["result"] ?? .null))
        } catch {
            throw .unavailable("\(server) answered Status with something other than its status: \(error)")
        }
    }
}
