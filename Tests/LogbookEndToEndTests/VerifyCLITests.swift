import Foundation
import Glibc
import LogbookJSON
import Testing

/// `logbook verify` on the log a real worker wrote, before and after it is changed behind
/// the service's back.
@Suite("End to end: logbook verify", .serialized)
struct VerifyCLITests {
    @Test("verify passes a log the worker wrote, and reports one changed behind its back")
    func verify() async throws {
        let logbook = try ServiceCluster()
        try await logbook.startWorker()
        let product = #"{"productId":"p1","name":"Tea","price":"1.00","category":"food","stock":3}"#
        #expect(
            try await logbook.run(["send", "RegisterUser", #"{"userId":"u1","name":"Ann","email":"a@b.co"}"#]).status
                == 0)
        #expect(try await logbook.run(["send", "AddProduct", product]).status == 0)
        #expect(
            try await logbook.run([
                "send", "PurchaseProduct", #"{"orderId":"o1","userId":"u1","productId":"p1","quantity":2}"#,
            ])
            .status == 0)
        // verify reads the file while the worker keeps it open.
        let good = try await runLogbook(["verify", "--data-dir", logbook.workerDataDirectory])
        #expect(good.status == 0, "\(good.stdout) \(good.stderr)")
        #expect(try good.json() == ["ok": true, "events": 5])
        #expect(logbook.stopWorker(SIGTERM) == 0)

        // Someone drops the append-only trigger and edits the purchase with the sqlite3 tool.
        let sql = """
            DROP TRIGGER events_refuse_update;
            UPDATE events SET data = json_set(data, '$.stock', 2) WHERE type = 'ProductPurchased';
            """
        let edit = Process()
        edit.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        edit.arguments = [logbook.eventLogPath, sql]
        try edit.run()
        edit.waitUntilExit()
        #expect(edit.terminationStatus == 0)

        let bad = try await runLogbook(["verify", "--data-dir", logbook.workerDataDirectory])
        #expect(bad.status == 1)
        let report = try bad.json()
        #expect(report["ok"] == false)
        #expect(report["violations"] == [["position": 4, "problem": "p1 sold 2 from 3, leaving 2"]])
    }
}
