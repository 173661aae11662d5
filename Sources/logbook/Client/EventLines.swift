import LogbookApplication
import LogbookCommandLine
import LogbookJSON
import LogbookWire

extension StandardStreams {
    /// Prints events as JSON lines, one envelope a line, as `replay` and `subscribe` show them.
    func outEvents(_ events: some Collection<RecordedEvent>) throws(CLIError) {
        guard !events.isEmpty else { return }
        var bytes: [UInt8] = []
        for event in events {
            do {
                JSONWriter.write(try WireEncoding.envelope(event), into: &bytes)
            } catch {
                throw .unavailable("position \(event.position): \(error)")
            }
            bytes.append(UInt8(ascii: "\n"))
        }
        out(bytes: bytes)
    }
}
