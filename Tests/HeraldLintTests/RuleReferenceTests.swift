import Foundation
import HeraldLint
import HeraldTestSupport
import Testing

@Suite("Rule reference")
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
}
