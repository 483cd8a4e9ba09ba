import Foundation
import HeraldLint
import HeraldTestSupport
import Testing

@Suite("Rule reference", .ownThreads)
struct RuleReferenceTests {
    @Test("docs/lint-rules.md is the catalog's current rendering (regenerate: herald lint --rules --format markdown > docs/lint-rules.md)")
    func notStale() throws {
        let committed = try String(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("docs/lint-rules.md"), encoding: .utf8)
        #expect(committed == LintCatalog.markdownReference())
    }

    @Test("every rule has a section with its rationale and examples")
    func sections() {
        let reference = LintCatalog.markdownReference()
        for rule in LintCatalog.rules {
            #expect(reference.contains("### \(rule.id)\n"))
            #expect(reference.contains(rule.rationale))
        }
    }

    @Test("the JSON reference lists every rule as Foundation reads it, the text one every id once")
    func jsonAndText() throws {
        let array = try #require(try JSONSerialization.jsonObject(with: Data(LintCatalog.jsonReference().utf8)) as? [[String: Any]])
        #expect(array.count == LintCatalog.rules.count)
        for (object, rule) in zip(array, LintCatalog.rules) {
            #expect(object["id"] as? String == rule.id.rawValue)
            #expect(object["severity"] as? String == rule.severity.rawValue)
            #expect(object["enabledByDefault"] as? Bool == rule.enabledByDefault)
            #expect(object["rationale"] as? String == rule.rationale)
            #expect(object["apnsReason"] as? String == rule.apnsReason?.rawValue)
        }
        let lines = LintCatalog.textReference().split(separator: "\n")
        for rule in LintCatalog.rules {
            let rows = lines.filter { $0.split(separator: " ").first.map(String.init) == rule.id.rawValue }
            #expect(rows.count == 1 && rows[0].hasSuffix(rule.summary), "\(rule.id)")
        }
    }
}
