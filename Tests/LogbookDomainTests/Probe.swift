import Testing
import LogbookDomain

@Test func probeExit() async {
    await withKnownIssue {
        await #expect(processExitsWith: .success) {
            let a: Int64 = Int64.max
            let b = Int64(CommandLine.arguments.count)
            _ = a + b
        }
    }
}
