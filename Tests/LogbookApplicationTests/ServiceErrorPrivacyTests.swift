import LogbookApplication
import Testing

/// What a client is told of a store's failure: the cause, never the server's paths or the
/// storage engine's own words, which stay in `serverDetail` for the process log.
@Suite("Service errors: clients get the cause, the process log the path")
struct ServiceErrorPrivacyTests {
    static let path = "/srv/secret/worker/events.sqlite3"

    static let storeErrors: [EventStoreError] = [
        .unavailable("\(path): database or disk is full (SQLite code 13)", cause: .diskFull),
        .unavailable("\(path): database is locked (SQLite code 5)", cause: .busy),
        .unavailable("cannot open \(path): unable to open database file", cause: .cannotOpen),
        .unavailable("\(path): the WAL journal cannot be enabled"),
        .notAnEventLog(path: path, reason: "it is not a SQLite database"),
        .corrupt("\(path): database disk image is malformed (SQLite code 11)"),
        .failed("\(path): constraint failed (SQLite code 19)"),
    ]

    @Test("no error of the event log names its path to clients; serverDetail keeps it")
    func eventLogErrors() {
        for error in Self.storeErrors {
            let client = ServiceError(error)
            #expect(!client.message.contains("/srv"), "\(client.message)")
            #expect(!client.message.contains("SQLite"), "\(client.message)")
            #expect(!"\(client.json)".contains("/srv"), "\(client.json)")
            #expect(client.serverDetail?.contains(Self.path) == true)
        }
    }

    @Test("a full disk is told as such, with the code unavailable")
    func diskFull() {
        let client = ServiceError(EventStoreError.unavailable("\(Self.path): full", cause: .diskFull))
        #expect(client.code == .unavailable)
        #expect(client.message == "the event log is unavailable: disk full")
        let readModels = ServiceError(
            ReadModelStoreError.unavailable("/srv/q/readmodels-1.sqlite3: full", cause: .diskFull))
        #expect(readModels.code == .unavailable)
        #expect(readModels.message == "the read models are unavailable: disk full")
        #expect(readModels.serverDetail?.contains("/srv/q/readmodels-1.sqlite3") == true)
    }

    @Test("no error of the read models names their path to clients")
    func readModelErrors() {
        let errors: [ReadModelStoreError] = [
            .unavailable("/srv/q/readmodels-1.sqlite3 does not exist", cause: .cannotOpen),
            .notAReadModel(path: "/srv/q/readmodels-1.sqlite3", reason: "it is not a SQLite database"),
            .corrupt("/srv/q/readmodels-1.sqlite3: malformed"), .failed("/srv/q/readmodels-1.sqlite3: oops"),
        ]
        for error in errors {
            let client = ServiceError(error)
            #expect(client.code == .unavailable)
            #expect(!client.message.contains("/srv"), "\(client.message)")
        }
    }

    @Test("serverDetail is not part of the wire form nor of equality")
    func detailStaysHome() {
        let error = ServiceError(.internal, "the command failed", serverDetail: "/srv/secret")
        #expect(error == ServiceError(.internal, "the command failed"))
        #expect(!"\(error.json)".contains("/srv"))
    }
}
