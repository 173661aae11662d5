import Glibc

/// The durability baseline: one `write` of a 4 KiB block and `fdatasync`, timed, in the
/// data directory (the disk the log is on), repeated; the worker pays at least one of
/// these per group commit.
enum FsyncProbe {
    /// The durations of `count` write + fdatasync pairs, nanoseconds.
    static func samples(count: Int, directory: String) throws(BenchError) -> [Int64] {
        let path = directory + "/fsync-probe"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw BenchError("cannot create \(path): \(String(cString: strerror(errno)))") }
        defer {
            close(descriptor)
            unlink(path)
        }
        let block = [UInt8](repeating: 0x61, count: 4096)
        // Sixteen blocks written and flushed once first, so the probe rewrites allocated
        // blocks (as a reused WAL does) instead of growing the file.
        for index in 0..<16 { _ = pwrite(descriptor, block, block.count, off_t(index * block.count)) }
        fsync(descriptor)
        var samples: [Int64] = []
        samples.reserveCapacity(count)
        for index in 0..<count {
            let started = BenchClock.nanoseconds()
            guard pwrite(descriptor, block, block.count, off_t(index % 16 * block.count)) == block.count,
                fdatasync(descriptor) == 0
            else { throw BenchError("write + fdatasync on \(path) failed: \(String(cString: strerror(errno)))") }
            samples.append(Int64(BenchClock.nanoseconds() - started))
        }
        return samples
    }
}
