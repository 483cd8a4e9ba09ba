@testable import HeraldLint
import HeraldPayload
import Testing
import HeraldTestSupport

@Suite("Rule catalog", .ownThreads)
struct CatalogTests {
    @Test("every id has exactly one rule, in one category, with examples both ways")
    func complete() {
        #expect(LintCatalog.rules.count == RuleID.allCases.count)
        #expect(Set(LintCatalog.rules.map(\.id)).count == RuleID.allCases.count)
        for rule in LintCatalog.rules {
            #expect(!rule.triggering.isEmpty, "\(rule.id) has no triggering example")
            #expect(!rule.nonTriggering.isEmpty, "\(rule.id) has no non-triggering example")
            #expect(!rule.summary.isEmpty && !rule.rationale.isEmpty)
            #expect(LintCatalog.rule(rule.id).id == rule.id)
            // Ids are kebab-case.
            #expect(rule.id.rawValue.allSatisfy { $0.isLowercase || $0 == "-" }, "\(rule.id)")
        }
    }

    @Test("ordinals follow declaration order (the one-byte tag read by RuleID.ordinal and KnownKey.ordinal)")
    func ordinals() {
        for (index, id) in RuleID.allCases.enumerated() { #expect(id.ordinal == index) }
        for (index, key) in APSKey.allCases.enumerated() { #expect(key.ordinal == index) }
        for (index, key) in AlertKey.allCases.enumerated() { #expect(key.ordinal == index) }
        for (index, key) in SoundKey.allCases.enumerated() { #expect(key.ordinal == index) }
    }

    /// `KeyLookup` makes the key from its ordinal's one byte: every key's spelling gives that
    /// key (the oracle: `allCases` and `name`), and near spellings give none.
    @Test("a key lookup finds every key by its spelling, and nothing else")
    func keyLookup() {
        func check<Key: KnownKey>(_: Key.Type) {
            let lookup = KeyLookup<Key>()
            for key in Key.allCases {
                let name = "\(key.name)"
                #expect(Array(name.utf8).withUnsafeBytes { lookup($0) } == key, "\(name)")
                #expect(Array((name + "x").utf8).withUnsafeBytes { lookup($0) } == nil, "\(name)x")
                #expect(Array(name.uppercased().utf8).withUnsafeBytes { lookup($0) } == nil, "\(name.uppercased())")
            }
            #expect(lookup(UnsafeRawBufferPointer(start: nil, count: 0)) == nil)
        }
        check(APSKey.self)
        check(AlertKey.self)
        check(SoundKey.self)
    }

    /// The one table of `aps` and alert keys answers as the two tables asked in turn (the
    /// oracle: `APSKey(utf8:)`, then `AlertKey(utf8:)`), for every key of either and their near
    /// spellings.
    @Test("the joint lookup of aps and alert keys agrees with the two tables")
    func appleKeyLookup() {
        let lookup = AppleKeyLookup()
        var names = APSKey.allCases.map { "\($0.name)" } + AlertKey.allCases.map { "\($0.name)" } + SoundKey.allCases.map { "\($0.name)" }
        names += names.flatMap { [$0 + "x", String($0.dropLast()), $0.uppercased(), "x" + $0] } + ["", "aps", "mdm", "sound"]
        var both = 0
        for name in names {
            Array(name.utf8).withUnsafeBytes { bytes in
                let aps = APSKey(utf8: bytes)
                let alert = aps == nil ? AlertKey(utf8: bytes) : nil
                let found = lookup(bytes)
                #expect(found.aps == aps && found.alert == alert, "\(name)")
                if aps != nil, AlertKey(utf8: bytes) != nil { both += 1 }
            }
        }
        #expect(both > 0, "no spelling is both an aps and an alert key: the precedence is untested")
    }

    @Test("rules that mirror APNs rejections name the reason, and the precedence covers them")
    func rejections() {
        let mirroring = LintCatalog.rules.filter { $0.apnsReason != nil }.map(\.id)
        #expect(Set(mirroring) == Set(LintCatalog.rejectionPrecedence))
        for id in mirroring { #expect(LintCatalog.rule(id).severity == .error) }
    }

    static let everyRule = LintCatalog.rules.map(\.id)

    @Test("triggering examples produce the rule's finding", arguments: everyRule)
    func triggering(_ id: RuleID) {
        let linter = Linter(configuration: LintConfiguration(enabled: [id]))
        for example in LintCatalog.rule(id).triggering {
            let report = linter.lint(example.body, context: example.context)
            #expect(report.diagnostics.contains { $0.rule == id }, "\(id) did not trigger on \(example.body.prefix(200)): \(report.diagnostics.map(\.rule))")
            for diagnostic in report.diagnostics where diagnostic.rule == id {
                #expect(diagnostic.severity == LintCatalog.rule(id).severity)
                #expect(!diagnostic.message.isEmpty)
            }
        }
    }

    @Test("non-triggering examples do not", arguments: everyRule)
    func nonTriggering(_ id: RuleID) {
        let linter = Linter(configuration: LintConfiguration(enabled: [id]))
        for example in LintCatalog.rule(id).nonTriggering {
            let report = linter.lint(example.body, context: example.context)
            let found = report.diagnostics.filter { $0.rule == id }
            #expect(found.isEmpty, "\(id) triggered on \(example.body.prefix(200)): \(found.map(\.message))")
        }
    }

    @Test("disabled rules do not run; opt-in rules run only when enabled")
    func configuration() {
        let body = #"{"aps":{"content_available":1}}"#
        #expect(Linter().lint(body).diagnostics.contains { $0.rule == .unknownAPSKey })
        #expect(!Linter(configuration: LintConfiguration(disabled: [.unknownAPSKey])).lint(body).diagnostics.contains { $0.rule == .unknownAPSKey })
        let pretty = "{\n  \"aps\" : { \"badge\" : 1 }\n}"
        #expect(!Linter().lint(pretty).diagnostics.contains { $0.rule == .payloadNotCompact })
        #expect(Linter(configuration: LintConfiguration(enabled: [.payloadNotCompact])).lint(pretty).diagnostics.contains { $0.rule == .payloadNotCompact })
        let overridden = Linter(configuration: LintConfiguration(severityOverrides: [.unknownAPSKey: .error])).lint(body)
        #expect(overridden.diagnostics.first { $0.rule == .unknownAPSKey }?.severity == .error)
    }
}
