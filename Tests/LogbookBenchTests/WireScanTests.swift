import LogbookJSON
import Testing

@testable import LogbookBench

@Suite("Bench: RESP and the reply scans of the load clients")
struct WireScanTests {
    @Test("a command is an array of bulk strings")
    func encodeCommand() {
        let bytes = RESP.command(["XADD", "s", "*", "data", "héllo"])
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == "*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n$4\r\ndata\r\n$6\r\nhéllo\r\n")
    }

    @Test("replies are measured whole, across partial arrivals, with errors flagged")
    func scanReplies() {
        let stream = Array("$15\r\n1700000000000-0\r\n+OK\r\n-ERR wrong\r\n:12\r\n*2\r\n$1\r\na\r\n$-1\r\n".utf8)
        var lengths: [(Int, Bool)] = []
        var offset = 0
        while case .reply(let length, let isError) = RESP.scan(stream, from: offset) {
            lengths.append((length, isError))
            offset += length
        }
        #expect(lengths.map(\.0) == [22, 5, 12, 5, 16])
        #expect(lengths.map(\.1) == [false, false, true, false, false])
        #expect(offset == stream.count)
        #expect(RESP.scan(Array("$15\r\n1700000".utf8)) == .incomplete)
        #expect(RESP.scan(Array("*2\r\n$1\r\na\r\n".utf8)) == .incomplete)
        #expect(RESP.scan(Array("+OK".utf8)) == .incomplete)
        #expect(RESP.scan(Array("?what\r\n".utf8)) == .malformed)
    }

    @Test("a command reply gives its sequence number, ok, error code and event positions")
    func commandReplies() {
        let accepted = Array(
            #"{"id":"42-t0abcdefc1n42","ok":true,"position":8,"events":[{"eventId":"e","position":7,"stream":"user-u1"},{"eventId":"f","position":8}]}"#
                .utf8)
        #expect(ReplyScanner.sequence(in: accepted) == 42)
        #expect(ReplyScanner.isOK(accepted) == true)
        #expect(ReplyScanner.eventPositions(accepted) == [7, 8])
        let refused = Array(#"{"id":"7-x","ok":false,"error":{"code":"insufficient_stock","message":"m"}}"#.utf8)
        #expect(ReplyScanner.sequence(in: refused) == 7)
        #expect(ReplyScanner.isOK(refused) == false)
        #expect(ReplyScanner.errorCode(refused) == "insufficient_stock")
        #expect(ReplyScanner.sequence(in: Array(#"{"id":null,"ok":false}"#.utf8)) == nil)
        #expect(ReplyScanner.firstPosition(Array(#"{"eventId":"e","position":123,"previous":{}}"#.utf8)) == 123)
    }

    @Test("a ReadLog page's next and head are read off its end, not out of an event")
    func pageTail() {
        let page = Array(#"{"id":"r","ok":true,"events":[{"data":{"next":5}}],"next":10001,"head":20000}"#.utf8)
        #expect(PageTail.integer("next", in: page) == 10001)
        #expect(PageTail.integer("head", in: page) == 20000)
        #expect(PageTail.integer("next", in: Array(#"{"id":"r","ok":false}"#.utf8)) == nil)
    }

    @Test("the worker's batching is read from two Status replies")
    func workerBatches() throws {
        let before = try #require(
            JSONParser.parse(#"{"head":100,"batches":{"count":10,"meanSize":5.0}}"#).objectValue)
        let after = try #require(
            JSONParser.parse(#"{"head":400,"batches":{"count":30,"meanSize":8.5}}"#).objectValue)
        let batches = WorkerBatches(before: before, after: after)
        #expect(batches.batches == 20)
        #expect(batches.events == 300)
        #expect(batches.meanSize == 10.3)
    }

    @Test("VmHWM and VmRSS are read from /proc/PID/status")
    func processMemory() {
        let status = "Name:\tlogbook\nVmPeak:\t  900000 kB\nVmHWM:\t   81234 kB\nVmRSS:\t   70000 kB\n"
        #expect(ProcessMemory.parse(status: status) == ProcessMemory(peakKilobytes: 81_234, currentKilobytes: 70_000))
        #expect(ProcessMemory.parse(status: "Name:\tx\n") == nil)
    }

    @Test("numbers in the table: thousands grouped, units attached")
    func numberFormat() {
        #expect(NumberFormat.grouped(1_234_567.4) == "1,234,567")
        #expect(NumberFormat.grouped(-1_000) == "-1,000")
        #expect(NumberFormat.value(31_250.4, .perSecond) == "31,250/s")
        #expect(NumberFormat.value(412.3, .microseconds) == "412 µs")
        #expect(NumberFormat.value(15_400, .microseconds) == "15.4 ms")
        #expect(NumberFormat.value(81.26, .megabytes) == "81.3 MB")
        #expect(NumberFormat.ratio(0.7512) == "0.75×")
    }
}

@Suite("Bench: processor time from /proc")
struct ProcessCPUTests {
    @Test("utime and stime are read after the command name, whatever it holds")
    func parse() {
        let stat = "4242 (logbook (run) x) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 7 0 100 0 0"
        #expect(ProcessCPU.parse(stat: stat, ticksPerSecond: 100) == ProcessCPU(seconds: 3))
        #expect(ProcessCPU.parse(stat: "garbage", ticksPerSecond: 100) == nil)
        #expect(ProcessCPU.percent(from: ProcessCPU(seconds: 1), to: ProcessCPU(seconds: 1.5), over: 2) == 25)
        #expect(ProcessCPU.of(0) != nil)
    }
}
