import Foundation
import HeraldLocalization
import HeraldTestSupport
import Testing

/// The generated CLDR rules against an independent implementation: Babel (PyPI `babel`), which
/// evaluates CLDR's rule text with its own parser. For every language Herald has a rule for, the
/// categories of the integers 0…1000 and of a set of decimals (which exercise `v`, `f`, `t` and
/// `w`) must agree.
@Suite(.ownThreads) struct PluralRulesCLDRTests {
    static let decimals = [
        "0.0", "0.1", "0.5", "1.0", "1.00", "1.5", "1.25", "2.0", "2.5", "2.50", "3.7", "5.0", "10.0", "11.1",
        "11.10", "21.1", "21.10", "0.01", "0.11", "1.001", "100.5", "1000000", "2000000", "1000000.0", "1000001",
        "12.3", "22.2", "101.1", "0.21",
    ]

    static let letters: [PluralCategory: Character] = [.zero: "z", .one: "o", .two: "t", .few: "f", .many: "m", .other: "x"]

    /// Babel evaluates the CLDR release it carries, so the comparison means something only with the
    /// release the rules were generated from. The generated file's first line names the Babel
    /// release used; `.ci/run` installs that one.
    static func requireBabelWithTheRulesCLDR() async throws {
        try ExternalTools.requirePython(modules: "babel", package: "babel")
        let reported = try await ExternalTools.runInBackground(
            ExternalTools.require("python3", package: "python3"), ["-c", "from babel.core import get_cldr_version; print(get_cldr_version())"])
        let cldr = String(decoding: reported, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard cldr != PluralRules.cldrVersion else { return }
        let generated = try String(
            contentsOf: Fixtures.repositoryRoot.appending(path: "Sources/HeraldLocalization/PluralRules+CLDR.swift"), encoding: .utf8)
        let release = generated.firstMatch(of: /\(Babel ([0-9.]+)\)/).map { String($0.1) } ?? "?"
        try ExternalTools.unavailable(
            "Babel carries CLDR \(cldr) and Herald's plural rules CLDR \(PluralRules.cldrVersion): pip install babel==\(release) "
                + "(.ci/run installs it), or regenerate the rules with Scripts/generate-plural-rules.py")
    }

    @Test("every CLDR language agrees with Babel on 0…1000 and decimals")
    // Async, with Python waited for on a thread of its own: blocking one of Swift's two
    // cooperative threads for the comparison's 30 to 60 s (before rule sets were shared) stalled
    // the timers of every other test (a lease test sent a push twice; a signal woke after 53 s).
    func agreesWithBabel() async throws {
        try await Self.requireBabelWithTheRulesCLDR()
        let languages = PluralRules.languages
        #expect(languages.count > 400, "\(languages.count)")
        let numbers = (0...1000).map(String.init) + Self.decimals
        let script = """
            import sys
            from decimal import Decimal
            from babel.core import Locale, get_global
            aliases = get_global("language_aliases")
            numbers = sys.argv[1].split(",")
            letters = {"zero": "z", "one": "o", "two": "t", "few": "f", "many": "m", "other": "x"}
            seen = {}
            for tag in sys.stdin.read().split():
                name = tag.replace("-", "_")
                try:
                    locale = Locale.parse(name)
                except Exception:
                    try:
                        locale = Locale.parse(aliases[name])
                    except Exception:
                        print(tag, "-")
                        continue
                rule = locale.plural_form
                # Languages share a few dozen rule sets: each distinct one is evaluated once.
                key = tuple(sorted(rule.rules.items()))
                if key not in seen:
                    seen[key] = "".join(letters[rule(Decimal(n))] for n in numbers)
                print(tag, seen[key])
            """
        let output = try await ExternalTools.runInBackground(
            try ExternalTools.require("python3", package: "python3"), ["-c", script, numbers.joined(separator: ",")],
            stdin: Array(languages.joined(separator: "\n").utf8))
        var compared = 0
        var skipped: [String] = []
        for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ")
            let tag = String(parts[0])
            guard parts[1] != "-" else { skipped.append(tag); continue }
            let expected = Array(parts[1])
            var mismatches: [String] = []
            for (index, number) in numbers.enumerated() {
                let herald = Self.letters[PluralRules.category(for: PluralOperands(number)!, language: tag)]!
                if herald != expected[index] { mismatches.append("\(number): Herald \(herald), Babel \(expected[index])") }
            }
            #expect(mismatches.isEmpty, "\(tag): \(mismatches.prefix(5))")
            compared += 1
        }
        #expect(compared == languages.count - skipped.count)
        // Babel carries no locale for Najdi Arabic; CLDR gives it Arabic's rule, as Herald does.
        #expect(skipped == ["ars"], "\(skipped)")
        for number in numbers {
            let operands = PluralOperands(number)!
            #expect(PluralRules.category(for: operands, language: "ars") == PluralRules.category(for: operands, language: "ar"))
        }
    }

    @Test("the cases the old table got wrong", arguments: [
        ("is", "21", PluralCategory.one), ("gd", "12", .two), ("mk", "31", .one), ("an", "1", .one), ("br", "2", .two),
        ("si", "0", .one), ("kmr", "1", .one), ("ca", "1000000", .many), ("fr", "1000000", .many), ("ar", "3", .few),
    ] as [(String, String, PluralCategory)])
    func knownCases(language: String, number: String, expected: PluralCategory) {
        #expect(PluralRules.category(for: PluralOperands(number)!, language: language) == expected)
    }
}
