import HeraldLocalization
import Testing
import HeraldTestSupport

/// `loc-args` formatting (reference §8.2).
@Suite(.ownThreads) struct FormatterTests {
    let formatter = LocalizedStringFormatter()

    @Test(arguments: [
        ("%@ and %@ have invited you to play Monopoly", ["Jenna", "Frank"], "Jenna and Frank have invited you to play Monopoly"),
        ("%2$@ and %1$@ have invited you to play Monopoly", ["Jenna", "Frank"], "Frank and Jenna have invited you to play Monopoly"),
        ("100%% sure, %@", ["Ada"], "100% sure, Ada"),
        ("%1$@ %@ %2$@", ["a", "b"], "a a b"),
        ("%@%@", ["日本", "語"], "日本語"),
        ("no specifiers", [], "no specifiers"),
        ("%1$@ and %1$@", ["echo"], "echo and echo"),
        // Foundation applies no width or precision to %@, drops a % that starts no specifier.
        ("[%5@] [%-5@] [%.2@]", ["ab", "cd", "efgh"], "[ab] [cd] [efgh]"),
        ("trailing %", [], "trailing "),
        ("bad %y specifier", [], "bad y specifier"),
    ] as [(String, [String], String)])
    func formats(format: String, arguments: [String], expected: String) {
        let result = formatter.format(format, arguments: arguments)
        #expect(result.text == expected)
        #expect(!result.diagnostics.contains { $0.severity == .error })
    }

    /// A `%` that starts no conversion is dropped, as Foundation does, and said: a percent sign
    /// is `%%` (it was dropped silently).
    @Test func aPercentThatStartsNoConversionIsDroppedAndSaid() throws {
        let result = formatter.format("50%! %y and 100%", arguments: [])
        #expect(result.text == "50! y and 100")
        let warning = try #require(result.diagnostics.first { $0.severity == .warning })
        #expect(warning.message.contains("\"%!\", \"%y\", \"%\""), "\(warning.message)")
        #expect(warning.message.contains("%%"))
        #expect(formatter.format("100%% sure", arguments: []).diagnostics.isEmpty)
    }

    /// A format that repeats a long argument stops at the cap, on a whole scalar, with a
    /// warning; the text below the cap is the expansion's prefix.
    @Test(arguments: ["x", "é", "日", "👍🏽"]) func repeatedArgumentsStopAtTheCap(unit: String) throws {
        let argument = String(repeating: unit, count: 2_000)
        let format = String(repeating: "%1$@ ", count: 500)
        let result = formatter.format(format, arguments: [argument])
        let cap = LocalizedStringFormatter.maximumOutputBytes
        #expect(result.text.utf8.count <= cap && result.text.utf8.count > cap - 8, "\(result.text.utf8.count) bytes")
        let whole = String(repeating: argument + " ", count: 500)
        #expect(whole.unicodeScalars.starts(with: result.text.unicodeScalars))
        let warning = try #require(result.diagnostics.first { $0.message.contains("cut") })
        #expect(warning.severity == .warning)
        // Below the cap nothing is cut or said.
        let short = formatter.format("%1$@ ", arguments: [argument])
        #expect(short.text == argument + " " && short.diagnostics.isEmpty)
    }

    @Test func fewerArgumentsLeaveGapsAndAnError() throws {
        let result = formatter.format("%@ and %@ have invited you", arguments: ["Jenna"])
        #expect(result.text == "Jenna and  have invited you")
        let error = try #require(result.diagnostics.first { $0.severity == .error })
        #expect(error.message.contains("needs argument 2 but only 1 is given"))
        let marked = LocalizedStringFormatter(options: .init(marksProblems: true)).format("%@ and %@", arguments: ["Jenna"])
        #expect(marked.text == "Jenna and ⟨missing argument 2⟩")
    }

    @Test func extraArgumentsAreAWarning() throws {
        let result = formatter.format("Hello %@", arguments: ["Ada", "Grace", "Linus"])
        #expect(result.text == "Hello Ada")
        let warning = try #require(result.diagnostics.first)
        #expect(warning.severity == .warning)
        #expect(warning.message.contains(#"2 ("Grace"), 3 ("Linus")"#))
    }

    @Test(arguments: ["%d", "%ld", "%lld", "%s", "%f", "%i", "%u", "%x"])
    func nonObjectSpecifiersDoNotShowStringArguments(specifier: String) throws {
        let result = formatter.format("You have \(specifier) messages", arguments: ["3"])
        #expect(result.text == "You have  messages")
        let error = try #require(result.diagnostics.first { $0.severity == .error })
        #expect(error.message.contains("use %@"))
    }

    @Test func mixedPositionalAndSequentialIsNoted() {
        let result = formatter.format("%2$@ then %@", arguments: ["a", "b"])
        #expect(result.text == "b then a")
        #expect(result.diagnostics.contains { $0.severity == .info && $0.message.contains("mixes") })
    }

    @Test func hugeWidthPrintsTheArgument() {
        let result = formatter.format("%999999999@", arguments: ["x"])
        #expect(result.text == "x")
    }

    /// A skipped position is undefined in printf (Foundation shows another argument, `(null)`,
    /// or crashes): Herald takes the named argument and warns.
    @Test func skippedPositionsWarn() throws {
        let result = formatter.format("%2$@ wins", arguments: ["Ada", "Grace"])
        #expect(result.text == "Grace wins")
        let warnings = result.diagnostics.filter { $0.severity == .warning }.map(\.message)
        #expect(warnings.contains { $0.hasPrefix("no specifier uses position 1;") }, "\(warnings)")
        #expect(formatter.format("%1$@ %2$@", arguments: ["a", "b"]).diagnostics.isEmpty)
    }
}
