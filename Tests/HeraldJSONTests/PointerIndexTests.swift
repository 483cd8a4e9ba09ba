@testable import HeraldJSON
import HeraldTestSupport
import Testing

/// The index that names many values at once agrees with the walk from the root for every value
/// of random documents, repeated and escaped keys among them.
@Suite("Pointer index", .ownThreads)
struct PointerIndexTests {
    /// Keys drawn from a small pool, so objects repeat keys often (`b` and `\u0062` are one key).
    static let keys = ["a", "b", #"\u0062"#, "c~d", "e/f", "", "0"]

    static func text(_ random: inout SeededGenerator, depth: Int = 0) -> String {
        let roll = Int(random.next() % (depth >= 4 ? 3 : 5))
        switch roll {
        case 0: return "1"
        case 1: return #""s""#
        case 2: return "null"
        case 3:
            let count = Int(random.next() % 6)
            return "{" + (0..<count).map { _ in "\"\(keys[Int(random.next() % UInt64(keys.count))])\":" + text(&random, depth: depth + 1) }.joined(separator: ",") + "}"
        default:
            let count = Int(random.next() % 6)
            return "[" + (0..<count).map { _ in text(&random, depth: depth + 1) }.joined(separator: ",") + "]"
        }
    }

    @Test("every value's pointer is the walk's, in any order, and a value a later key hides has none")
    func agreesWithTheWalkFromTheRoot() throws {
        var random = SeededGenerator(seed: 31)
        var hidden = 0, named = 0
        for _ in 0..<2_000 {
            let document = try JSONDocument(parsing: Array(("{" + #""x":"# + Self.text(&random) + "}").utf8))
            var index = PointerIndex(document)
            // In a random order: containers are named (and remembered) before, after and
            // between their values.
            for position in Array(document.nodeIndices).shuffled(using: &random) {
                guard let node = document.node(at: position) else { continue }
                let walked = document.pointer(to: node)
                if document.resolve(walked)?.index == node.index {
                    #expect(index.pointer(to: position) == walked, "\(String(decoding: document.source, as: UTF8.self)) at \(position)")
                    named += 1
                } else {
                    #expect(index.pointer(to: position) == nil, "\(String(decoding: document.source, as: UTF8.self)) at \(position)")
                    hidden += 1
                }
            }
        }
        // Both cases were met many times.
        #expect(named > 10_000 && hidden > 1_000, "\(named) named, \(hidden) hidden")
    }
}
