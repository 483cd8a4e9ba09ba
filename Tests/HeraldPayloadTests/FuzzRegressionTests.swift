import Foundation
import HeraldTestSupport
import Testing

/// Replays the inputs under Tests/Fixtures/fuzz (crashes the fuzzers found, and hand-made edge
/// cases) through the same checks the fuzzers make.
@Suite("Fuzz regressions")
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
