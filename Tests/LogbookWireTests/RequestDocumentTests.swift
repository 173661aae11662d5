import LogbookJSON
import LogbookWire
import Testing

/// The request documents clients send, byte for byte: members in the contract's order,
/// optional ones left out when absent, and the types servers tell apart by `RequestType`.
@Suite("Request documents")
struct RequestDocumentTests {
    static func text(_ document: JSONObject) -> String {
        JSONWriter.string(.object(document))
    }

    @Test("Status, Rebuild and ReadLog carry their one spelling, members in order")
    func fixedTypes() {
        #expect(Self.text(RequestDocument.status(id: "s")) == #"{"id":"s","type":"Status"}"#)
        #expect(Self.text(RequestDocument.rebuild(id: "r")) == #"{"id":"r","type":"Rebuild"}"#)
        #expect(Self.text(RequestDocument.readLog(id: "l", from: 7)) == #"{"id":"l","type":"ReadLog","from":7}"#)
        #expect(
            Self.text(RequestDocument.readLog(id: "l", from: 1, limit: 10, topics: ["users", "orders"]))
                == #"{"id":"l","type":"ReadLog","from":1,"limit":10,"topics":["users","orders"]}"#)
    }

    @Test("a command and a query: optional members only when given, metadata only when it holds something")
    func commandsAndQueries() {
        let data: JSONValue = ["userId": "u1"]
        #expect(
            Self.text(RequestDocument.command(id: "c", type: "RegisterUser", data: data))
                == #"{"id":"c","type":"RegisterUser","data":{"userId":"u1"}}"#)
        #expect(
            Self.text(
                RequestDocument.command(
                    id: "c", type: "RegisterUser", data: data, expectedVersion: "noStream", causationId: "k"))
                == #"{"id":"c","type":"RegisterUser","data":{"userId":"u1"},"expectedVersion":"noStream","metadata":{"causationId":"k"}}"#
        )
        #expect(
            Self.text(RequestDocument.query(id: "q", type: "GetUser", data: data))
                == #"{"id":"q","type":"GetUser","data":{"userId":"u1"}}"#)
        #expect(
            Self.text(
                RequestDocument.query(id: "q", type: "ListUsers", data: [:], minPosition: 4, timeoutMilliseconds: 9))
                == #"{"id":"q","type":"ListUsers","data":{},"minPosition":4,"timeoutMs":9}"#)
    }

    @Test("what a server reads back: the fixed types by name, commands and queries as none of them")
    func readBack() throws {
        for type in RequestType.allCases {
            let request = try WireRequest(
                frame: JSONWriter.bytes(.object(["id": "x", "type": .string(type.rawValue)])))
            #expect(request.requestType == type)
        }
        let query = try WireRequest(
            frame: JSONWriter.bytes(.object(RequestDocument.query(id: "q", type: "GetUser", data: [:]))))
        #expect(query.requestType == nil)
    }
}
