import LogbookJSON
import LogbookTestSupport
import Testing

/// `JSONObject` searches small objects in order and indexes larger ones: both must behave
/// as one ordered map, also while an object grows past the limit and shrinks below it.
@Suite("JSON object")
struct JSONObjectTests {
    @Test("random inserts, replacements and removals across the small/large limit agree with a plain list")
    func againstAList() {
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<200 {
            var object = JSONObject()
            var reference: [(String, Int)] = []
            for step in 0..<80 {
                let key = "k\(Int.random(in: 0..<24, using: &generator))"
                if generator.chance(35) {
                    object[key] = nil
                    reference.removeAll { $0.0 == key }
                } else if let at = reference.firstIndex(where: { $0.0 == key }) {
                    object[key] = .int(step)
                    reference[at].1 = step
                } else {
                    object[key] = .int(step)
                    reference.append((key, step))
                }
                #expect(object.keys == reference.map(\.0))
                for index in 0..<24 {
                    #expect(object["k\(index)"] == reference.first { $0.0 == "k\(index)" }.map { .int($0.1) })
                }
            }
        }
    }
}
