import Foundation
import Glibc
import LogbookClient
import LogbookJSON
import Testing

/// `logbook top` against real processes, not on a terminal: one logfmt line per process
/// per refresh, whose figures move as commands are sent, and a process that stops shows
/// as down while top goes on; `--count` refreshes, then exit 0.
@Suite("End to end: logbook top", .serialized)
struct TopTests {
    @Test("top's lines show commands per second as commands are sent, and a stopped query process as down")
    func lines() async throws {
        let cluster = try await ServiceCluster.started()
        // More refreshes than any run of this test needs, however slow the machine: the
        // test stops top itself once it has seen what it looks for.
        let top = try cluster.background(["top", "--interval", "0.2", "--count", "100000"])
        let client = try cluster.client()
        defer { client.close() }
        // Both processes show as up before anything is sent.
        let bothUp = await eventually(within: patience) {
            let rows = TopLine.parse(top.lines)
            return rows.contains { $0["process"] == "worker" && $0["state"] == "up" }
                && rows.contains { $0["process"] == "query" && $0["state"] == "up" }
        }
        try #require(bothUp, "\(top.lines) \(top.stderr)")

        // Commands are sent until a refresh shows them: a worker line with commands per second above 0.
        var sent = 0
        var last: Int64 = 0
        var moved = false
        let deadline = ContinuousClock.now + patience
        while !moved && ContinuousClock.now < deadline {
            sent += 1
            last = try await client.send(type: "RegisterUser", data: Fixture.user("u\(sent)")).position
            moved = TopLine.parse(top.lines).contains { row in
                row["process"] == "worker" && (Double(row["commands_per_s"] ?? "") ?? 0) > 0
                    && (Double(row["events_per_s"] ?? "") ?? 0) > 0 && row["batch_mean"] != "-"
                    && row["command_ms"] != "-" && row["commit_ms"] != "-"
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(moved, "\(top.lines)")
        let reached = last
        let applied = await eventually(within: patience) {
            TopLine.parse(top.lines).contains { row in
                row["process"] == "query" && row["checkpoint"].flatMap { Int64($0) }.map { $0 >= reached } == true
                    && row["lag_events"] == "0"
            }
        }
        #expect(applied, "\(top.lines)")
        // The query process follows the worker's feed: one subscriber.
        #expect(TopLine.parse(top.lines).last { $0["process"] == "worker" }?["subscribers"] == "1", "\(top.lines)")

        cluster.stopQuery()
        let down = await eventually(within: patience) {
            TopLine.parse(top.lines).contains { $0["process"] == "query" && $0["state"] == "down" }
        }
        #expect(down, "\(top.lines)")
        // The worker is still shown, after the query process went down.
        let afterDown = TopLine.parse(top.lines).drop { !($0["process"] == "query" && $0["state"] == "down") }
        let workerStillUp = await eventually(within: patience) {
            TopLine.parse(top.lines).drop { !($0["process"] == "query" && $0["state"] == "down") }
                .contains { $0["process"] == "worker" && $0["state"] == "up" }
        }
        #expect(workerStillUp, "\(afterDown)")

        #expect(await top.signal(SIGKILL) != nil)
        // Every refresh printed one line per process, both stamped with its time (the last
        // one may have been cut short by the kill).
        let rows = TopLine.parse(top.lines)
        let cut = rows.last?["time"]
        let refreshes = Dictionary(grouping: rows) { $0["time"] ?? "" }.filter { $0.key != cut }
        #expect(!refreshes.isEmpty)
        #expect(refreshes.values.allSatisfy { $0.compactMap { $0["process"] }.sorted() == ["query", "worker"] })
        #expect(!top.lines.contains { $0.contains("\u{1B}[") }, "no terminal codes in a pipe")
    }

    @Test("top --count N refreshes N times, one line per process each, and exits 0")
    func count() async throws {
        let cluster = try await ServiceCluster.started()
        let top = try cluster.background(["top", "--interval", "0.1", "--count", "3"])
        #expect(await top.waitForExit() == 0, "\(top.stderr)")
        let rows = TopLine.parse(top.lines)
        #expect(rows.count == 6, "\(top.lines)")
        #expect(
            rows.filter { $0["process"] == "worker" }.count == 3 && rows.filter { $0["process"] == "query" }.count == 3)
    }

    @Test("top refuses an interval out of range")
    func badInterval() async throws {
        let result = try await runLogbook(["top", "--interval", "0", "--count", "1"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--interval '0': expected seconds from 0.1 to 3600"), "\(result.stderr)")
    }
}

/// Reads top's logfmt lines: `key=value` pairs, a value in double quotes when it has spaces.
enum TopLine {
    static func parse(_ lines: [String]) -> [[String: String]] {
        lines.map(parse)
    }

    static func parse(_ line: String) -> [String: String] {
        var fields: [String: String] = [:]
        var rest = Substring(line)
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let key = String(rest[..<equals])
            rest = rest[rest.index(after: equals)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                while let character = rest.first, character != "\"" {
                    if character == "\\", let escaped = rest.dropFirst().first {
                        value.append(escaped)
                        rest = rest.dropFirst(2)
                    } else {
                        value.append(character)
                        rest = rest.dropFirst()
                    }
                }
                rest = rest.dropFirst()
            } else {
                let end = rest.firstIndex(of: " ") ?? rest.endIndex
                value = String(rest[..<end])
                rest = rest[end...]
            }
            fields[key] = value
        }
        return fields
    }
}
