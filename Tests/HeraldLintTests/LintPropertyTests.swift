import Foundation
import HeraldJSON
import HeraldLint
import HeraldPayload
import HeraldTestSupport
import Testing

/// For any input: the linter does not crash, every diagnostic's pointer resolves in the document,
/// and its line:column points at the value the pointer names.
@Suite("Lint properties")
struct LintPropertyTests {
    static func check(_ bytes: [UInt8], context: LintContext = .bodyOnly) -> [String] {
        PropertyChecks.lint(bytes, context: context)
    }

    static let contexts = PropertyChecks.lintContexts

    @Test("random payloads, pretty and compact", arguments: 0..<20)
    func randomPayloads(seed: Int) throws {
        var random = RandomJSON(seed: UInt64(seed) &+ 777)
        for round in 0..<40 {
            let payload = random.payload()
            let compact = try payload.encode()
            let pretty = try JSONDocument(parsing: compact).prettyBytes()
            let context = Self.contexts[round % Self.contexts.count]
            #expect(Self.check(compact, context: context) == [], "\(String(decoding: compact, as: UTF8.self))")
            #expect(Self.check(pretty, context: context) == [], "\(String(decoding: pretty, as: UTF8.self))")
        }
    }

    @Test("damaged payloads", arguments: 0..<20)
    func damaged(seed: Int) throws {
        var random = RandomJSON(seed: UInt64(seed) &+ 4040)
        for round in 0..<40 {
            let bytes = random.mutate(try random.payload().encode())
            #expect(Self.check(bytes, context: Self.contexts[round % Self.contexts.count]) == [], "\(bytes)")
        }
    }

    @Test("every rule example")
    func examples() {
        for rule in LintCatalog.rules {
            for example in rule.triggering + rule.nonTriggering {
                #expect(Self.check(Array(example.body.utf8), context: example.context) == [], "\(rule.id): \(example.body.prefix(100))")
            }
        }
    }
}

@Suite("Lint fuzz regressions")
struct LintFuzzRegressionTests {
    static func inputs() -> [String] {
        Fixtures.fuzzInputs("FuzzLint")
    }

    @Test("saved inputs pass the lint contract", arguments: inputs())
    func replay(_ path: String) throws {
        let bytes = try Fixtures.bytes(path)
        let context = PropertyChecks.lintContexts[Int(bytes.first ?? 0) % PropertyChecks.lintContexts.count]
        #expect(PropertyChecks.lint(Array(bytes.dropFirst()), context: context) == [])
    }
}
