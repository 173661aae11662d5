import LogbookZMQ
import Testing

/// A list of endpoints as a setting writes it (`--commands a,b`): what is read, and what is
/// refused with which reason.
@Suite("EndpointList: comma-separated endpoints")
struct EndpointListTests {
    @Test func oneEndpointIsAListOfOne() throws {
        let list = try EndpointList(parsing: "tcp://127.0.0.1:5555")
        #expect(list.endpoints == ["tcp://127.0.0.1:5555"])
        #expect(list.single == "tcp://127.0.0.1:5555")
        #expect(list.description == "tcp://127.0.0.1:5555")
        #expect(list == EndpointList("tcp://127.0.0.1:5555"))
    }

    @Test func severalEndpointsKeepTheirOrderWithoutTheBlanksAroundThem() throws {
        let list = try EndpointList(parsing: " tcp://10.0.0.2:5555 ,tcp://10.0.0.1:5555,\tipc:///run/logbook/w3 ")
        #expect(list.endpoints == ["tcp://10.0.0.2:5555", "tcp://10.0.0.1:5555", "ipc:///run/logbook/w3"])
        #expect(list.single == nil)
        #expect(list.description == "tcp://10.0.0.2:5555,tcp://10.0.0.1:5555,ipc:///run/logbook/w3")
        #expect(try EndpointList(parsing: list.description) == list)
    }

    @Test func anEndpointGivenAsOneIsNotSplit() {
        #expect(EndpointList("ipc:///tmp/a,b").endpoints == ["ipc:///tmp/a,b"])
    }

    @Test(
        "empty lists, empty entries and repeated endpoints are refused",
        arguments: [
            ("", EndpointListError.empty), ("  ", .empty), ("a,,b", .emptyEntry(position: 2)),
            ("a,", .emptyEntry(position: 2)), (",a", .emptyEntry(position: 1)), (",", .emptyEntry(position: 1)),
            ("a, ,b", .emptyEntry(position: 2)), ("a,b, a", .repeated("a")),
        ])
    func refused(text: String, reason: EndpointListError) {
        #expect(throws: reason) { try EndpointList(parsing: text) }
    }

    @Test func reasonsReadAsSentences() {
        #expect(EndpointListError.empty.description == "no endpoint given")
        #expect(EndpointListError.emptyEntry(position: 3).description == "entry 3 of the list is empty")
        #expect(EndpointListError.repeated("tcp://a:1").description == "tcp://a:1 is listed twice")
    }

    @Test func aListOfStringsFollowsTheSameRules() throws {
        #expect(try EndpointList(["tcp://a:1", "tcp://b:2"]).description == "tcp://a:1,tcp://b:2")
        #expect(throws: EndpointListError.empty) { try EndpointList([]) }
        #expect(throws: EndpointListError.emptyEntry(position: 2)) { try EndpointList(["tcp://a:1", ""]) }
        #expect(throws: EndpointListError.repeated("tcp://a:1")) { try EndpointList(["tcp://a:1", "tcp://a:1"]) }
    }
}
