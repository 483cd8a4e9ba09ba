import HeraldJSON
import HeraldLint
import HeraldTestSupport
import Testing

@Suite("Seed examples", .ownThreads)
struct SeedExampleLintTests {
    /// What each seed example deserves: the well-formed ones are clean except the legacy
    /// action-loc-key; the malformed ones are syntax errors, and the fifth example's custom data
    /// holds an e-mail address.
    static let expected: [(String, [RuleID])] = [
        ("seeds/legacy-example-1.json", []),
        ("seeds/legacy-example-2.json", [.legacyAlertKey]),
        ("seeds/legacy-example-3.json", []),
        ("seeds/legacy-example-4.json", []),
        ("seeds/listing-1-alert.json", []),
        ("seeds/listing-2-sound.json", []),
        ("seeds/listing-3-localized.json", []),
        ("seeds/korean-listing-1-alert.json", []),
        ("seeds/korean-listing-2-sound.json", []),
        ("seeds/korean-listing-3-localized.json", []),
        ("seeds/legacy-example-5-malformed.json", [.invalidJSON, .legacyAlertKey, .sensitiveEmail]),
        ("seeds/summary-example-typographic-malformed.json", [.invalidJSON, .invalidJSON, .legacyAlertKey, .sensitiveEmail]),
    ]

    @Test("each seed example gets exactly the findings it deserves", arguments: expected.map(\.0))
    func seedFindings(_ path: String) throws {
        let expectedRules = Self.expected.first { $0.0 == path }!.1
        let report = Linter().lint(try Fixtures.bytes(path))
        #expect(report.diagnostics.map(\.rule).sorted { $0.rawValue < $1.rawValue } == expectedRules.sorted { $0.rawValue < $1.rawValue },
                "\(report.diagnostics.map { "\($0.rule): \($0.message)" })")
    }

    @Test("the fifth example: where the comma is missing, and the e-mail address")
    func fifthExample() throws {
        let report = Linter().lint(try Fixtures.bytes("seeds/legacy-example-5-malformed.json"))
        let syntax = try #require(report.diagnostics.first { $0.rule == .invalidJSON })
        #expect(syntax.location?.description == "4:5")
        #expect(syntax.severity == .error)
        let email = try #require(report.diagnostics.first { $0.rule == .sensitiveEmail })
        #expect(email.pointer?.description == "/acme-account")
        #expect(email.location?.line == 11)
        #expect(email.message.contains("jane.appleseed@apple.com"))
        #expect(report.hasErrors)
    }

    @Test("as a background push with default priority, a seed alert example is wrong three ways")
    func wrongPushType() throws {
        let context = LintContext(pushType: "background", topic: "com.acme.app", isRequest: true)
        let report = Linter().lint(try Fixtures.bytes("seeds/legacy-example-3.json"), context: context)
        let rules = Set(report.diagnostics.map(\.rule))
        #expect(rules.isSuperset(of: [.backgroundWithVisibleContent, .backgroundWithoutContentAvailable, .backgroundPriority]))
    }
}
