import Foundation
import HeraldLocalization
import HeraldPayload
import HeraldTestSupport
import Testing

/// `LocalizedStringFormatter` against Foundation's `String(format:)`, which on Linux runs
/// CoreFoundation's `__CFStringAppendFormatCore`, the formatter behind `NSString` on Apple's
/// platforms. Formats are generated from `%@`, `%n$@`, `%%`, a `%` that starts no specifier, and
/// literal text (ASCII, Korean, emoji); the arguments are `NSString`s, as iOS passes `loc-args`.
///
/// Where Foundation's result is undefined, the generator stays away: an argument list shorter
/// than the highest position (Foundation reads past the list: `(null)` or a crash; Herald prints
/// nothing and reports an error), a format that skips a position (`%3$@` without `%2$@`: printf
/// requires every position, and Foundation then shows another argument or crashes), and
/// non-object conversions such as `%d` (Foundation prints the string's address as a number).
@Suite(.ownThreads) struct FormatterDifferentialTests {
    static func foundation(_ format: String, _ arguments: [String]) -> String {
        String(format: format, arguments: arguments.map { NSString(string: $0) })
    }

    struct Case: CustomStringConvertible {
        var format: String
        var arguments: [String]
        var description: String { "\(format.debugDescription) with \(arguments)" }
    }

    static func generate(seed: UInt64, count: Int) -> [Case] {
        var rng = SeededGenerator(seed: seed)
        let words = ["Ada", "Grace", "", "안녕", "😀 ok", "a%b", "%@", "x y"]
        let literals = [" and ", "Hello ", "!", "님", "🎉", "100", " ", "\n"]
        var cases: [Case] = []
        for _ in 0..<count {
            var format = ""
            var sequential = 0
            var highest = 0
            for _ in 0..<Int.random(in: 0...6, using: &rng) {
                switch Int.random(in: 0..<10, using: &rng) {
                case 0...2:
                    format += "%@"
                    sequential += 1
                    highest = max(highest, sequential)
                case 3...5:
                    let position = Int.random(in: 1...5, using: &rng)
                    format += "%\(position)$@"
                    highest = max(highest, position)
                case 6:
                    format += "%%"
                case 7:
                    // A % that starts no specifier: Foundation drops it.
                    format += ["%y", "%k", "%!"].randomElement(using: &rng)!
                default:
                    format += literals.randomElement(using: &rng)!
                }
            }
            if Bool.random(using: &rng) { format += literals.randomElement(using: &rng)! }
            // Name every position up to the highest, as printf requires.
            let named = Set(LocalizedFormat(format).argumentPositions)
            for position in 0..<highest where !named.contains(position) { format += " %\(position + 1)$@" }
            // At least as many arguments as positions could be in use, sometimes more.
            let argumentCount = highest + Int.random(in: 0...2, using: &rng)
            cases.append(Case(format: format, arguments: (0..<argumentCount).map { _ in words.randomElement(using: &rng)! }))
        }
        return cases
    }

    @Test("generated %@, %n$@ and %% formats format as Foundation formats them", arguments: 0..<8)
    func generated(seed: Int) {
        for example in Self.generate(seed: UInt64(seed) &+ 9100, count: 250) {
            let herald = LocalizedStringFormatter().format(example.format, arguments: example.arguments)
            #expect(herald.text == Self.foundation(example.format, example.arguments), "\(example)")
            #expect(!herald.diagnostics.contains { $0.severity == .error }, "\(example): \(herald.diagnostics)")
        }
    }

    @Test("hand-picked bindings", arguments: [
        Case(format: "%2$@ and %1$@ have invited you to play Monopoly", arguments: ["Jenna", "Frank"]),
        Case(format: "%3$@ %@ %2$@", arguments: ["A", "B", "C"]),
        Case(format: "%@ %3$@ %@", arguments: ["A", "B", "C"]),
        Case(format: "%2$@ %2$@ %@", arguments: ["A", "B"]),
        Case(format: "[%5@] [%-5@] [%.1@]", arguments: ["ab", "cd", "ef"]),
        Case(format: "50%! off %", arguments: []),
        Case(format: "%\u{6ED} and %\u{301}é", arguments: []),
    ])
    func handPicked(_ example: Case) {
        #expect(LocalizedStringFormatter().format(example.format, arguments: example.arguments).text == Self.foundation(example.format, example.arguments))
    }
}
