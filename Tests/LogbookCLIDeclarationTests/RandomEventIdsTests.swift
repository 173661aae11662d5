import Foundation
import Testing

@testable import logbook

/// The worker's event ids: version-4 UUID text, as Foundation writes it, and never the same twice.
@Suite("Random event ids")
struct RandomEventIdsTests {
    /// `xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx`, lowercase hex, `V` one of 8 9 a b.
    static func isVersion4(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        guard bytes.count == 36 else { return false }
        for (offset, byte) in bytes.enumerated() {
            switch offset {
            case 8, 13, 18, 23: guard byte == UInt8(ascii: "-") else { return false }
            case 14: guard byte == UInt8(ascii: "4") else { return false }
            case 19: guard Array("89ab".utf8).contains(byte) else { return false }
            default: guard Array("0123456789abcdef".utf8).contains(byte) else { return false }
            }
        }
        return true
    }

    @Test("the text is Foundation's lowercased UUID text of the same bits, version and variant set")
    func sameTextAsFoundation() {
        var generator = SystemRandomNumberGenerator()
        let fixed: [(UInt64, UInt64)] = [(0, 0), (.max, .max), (0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210)]
        for random in fixed + (0..<200).map({ _ in (generator.next(), generator.next()) }) {
            let text = RandomEventIds.text(of: random)
            let high = (random.0 & 0xFFFF_FFFF_FFFF_0FFF | 0x4000).bigEndian
            let low = (random.1 & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000).bigEndian
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { bytes in
                bytes.storeBytes(of: high, toByteOffset: 0, as: UInt64.self)
                bytes.storeBytes(of: low, toByteOffset: 8, as: UInt64.self)
            }
            #expect(text == UUID(uuid: uuid).uuidString.lowercased())
            #expect(Self.isVersion4(text), "\(text)")
        }
        #expect(RandomEventIds.text(of: (0, 0)) == "00000000-0000-4000-8000-000000000000")
        #expect(RandomEventIds.text(of: (.max, .max)) == "ffffffff-ffff-4fff-bfff-ffffffffffff")
    }

    @Test("ids are version-4 UUIDs, all different, every random digit varies, across many refills")
    func unique() {
        let ids = RandomEventIds()
        let count = 100_000  // 16 bytes each: about 390 refills of the 4 KiB pool
        var seen = Set<String>(minimumCapacity: count)
        var valuesAt = [Set<UInt8>](repeating: [], count: 36)
        for _ in 0..<count {
            let id = ids.newEventId()
            #expect(Self.isVersion4(id), "\(id)")
            seen.insert(id)
            for (offset, byte) in id.utf8.enumerated() { valuesAt[offset].insert(byte) }
        }
        #expect(seen.count == count)
        for offset in 0..<36 where ![8, 13, 14, 18, 23].contains(offset) {
            #expect(valuesAt[offset].count == (offset == 19 ? 4 : 16), "digit \(offset)")
        }
    }

    @Test("threads sharing one generator never get the same id")
    func sharedBetweenThreads() async {
        let ids = RandomEventIds()
        let all = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<4 {
                group.addTask { (0..<5_000).map { _ in ids.newEventId() } }
            }
            return await group.reduce(into: [String]()) { $0 += $1 }
        }
        #expect(all.count == 20_000)
        #expect(Set(all).count == 20_000)
    }
}
