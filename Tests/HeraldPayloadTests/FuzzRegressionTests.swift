import Foundation
import HeraldJSON
import HeraldTestSupport
import Testing

/// Replays the inputs under Tests/Fixtures/fuzz (crashes the fuzzers found, and hand-made edge
/// cases) through the same checks the fuzzers make.
@Suite("Fuzz regressions", .ownThreads)
struct FuzzRegressionTests {
    static func inputs(_ target: String) -> [String] {
        Fixtures.fuzzInputs(target)
    }

    @Test("JSON inputs", arguments: inputs("FuzzJSON"))
    func json(_ path: String) throws {
        #expect(PropertyChecks.json(try Fixtures.bytes(path)) == [])
    }

    @Test("payload inputs", arguments: inputs("FuzzPayload"))
    func payload(_ path: String) throws {
        let bytes = try Fixtures.bytes(path)
        #expect(PropertyChecks.payload(bytes) == [])
        #expect(PropertyChecks.json(bytes) == [])
    }

    @Test("there are inputs to replay")
    func notEmpty() {
        #expect(!Self.inputs("FuzzJSON").isEmpty)
        #expect(!Self.inputs("FuzzPayload").isEmpty)
    }
}

/// The payload property over generated payloads, written with varied whitespace and escape
/// spellings, so decoded custom data (kept in the source) is checked against the same data as
/// values on many shapes, not only the saved inputs.
@Suite("Payload properties", .ownThreads)
struct PayloadPropertyTests {
    @Test("generated payloads keep the payload contract", arguments: 0..<12)
    func generated(seed: Int) throws {
        var random = RandomJSON(seed: UInt64(seed) &+ 31_337)
        for _ in 0..<40 {
            let payload = random.payload()
            let text = random.render(try JSONDocument(parsing: payload.encode()).root.value)
            #expect(PropertyChecks.payload(Array(text.utf8)) == [], "\(text)")
        }
    }
}
