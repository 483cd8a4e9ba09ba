/// A CLDR plural category.
public enum PluralCategory: String, Sendable, Hashable, CaseIterable, Comparable {
    /// `zero` (Arabic 0, Latvian 10; Apple also applies a `.stringsdict` `zero` form to 0 in any language).
    case zero
    /// `one` (English 1, French 0 and 1, Russian 21).
    case one
    /// `two` (Arabic and Hebrew 2).
    case two
    /// `few` (Russian 2–4, Polish 22).
    case few
    /// `many` (Russian 5–20, Polish 12, French 1000000).
    case many
    /// `other`: every language has it, and it is the fallback.
    case other

    /// CLDR order: zero, one, two, few, many, other.
    public static func < (lhs: PluralCategory, rhs: PluralCategory) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// The operands CLDR plural rules test, computed from a number as written (so `"1.50"` has two
/// visible fraction digits, which matters in some languages).
public struct PluralOperands: Sendable, Hashable {
    /// `n`: the absolute value.
    public var n: Double
    /// `i`: the integer digits (the last 18 digits when longer, which keeps every `%` test exact).
    public var i: UInt64
    /// `v`: how many fraction digits are written.
    public var v: Int
    /// `f`: the fraction digits as written (last 18).
    public var f: UInt64
    /// `t`: the fraction digits without trailing zeros.
    public var t: UInt64

    /// Operands of a decimal number written as `[-+]digits[.digits]`; `nil` for anything else.
    public init?(_ text: String) {
        var body = Substring(text.trimmingWhitespace())
        if body.first == "-" || body.first == "+" { body = body.dropFirst() }
        let parts = body.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let integerPart = parts.first, !integerPart.isEmpty, integerPart.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let fraction = parts.count > 1 ? parts[1] : ""
        guard fraction.allSatisfy({ $0.isASCII && $0.isNumber }), parts.count == 1 || !fraction.isEmpty else { return nil }
        guard let value = Double(body) else { return nil }
        n = abs(value)
        i = UInt64(integerPart.suffix(18))!
        v = fraction.count
        f = fraction.isEmpty ? 0 : UInt64(fraction.suffix(18))!
        var trimmed = fraction
        while trimmed.last == "0" { trimmed = trimmed.dropLast() }
        t = trimmed.isEmpty ? 0 : UInt64(trimmed.suffix(18))!
    }

    /// Operands of an integer.
    public init(_ value: Int) {
        n = Double(value.magnitude)
        i = UInt64(value.magnitude)
        v = 0
        f = 0
        t = 0
    }

    /// Whether the number has no fraction (`v` may still be non-zero, as in `1.0`).
    public var isInteger: Bool { n.rounded(.towardZero) == n }
}

/// CLDR cardinal plural rules (CLDR 44) for the languages apps most often ship, chosen by the
/// language code of a localization (`pt-PT` has its own rule; other regions share the
/// language's).
///
/// Languages not in the table use the root rule (everything is `other`). Apple's `.stringsdict`
/// also applies a `zero` form to the number 0 in every language, which ``category(for:language:)``
/// does not do; ``LocalizedValue`` handles that.
public enum PluralRules {
    /// The category of `operands` in `language` (a tag such as `fr-CA` or `pt_PT`).
    public static func category(for operands: PluralOperands, language: String) -> PluralCategory {
        let tag = LanguageTag(language)
        let rule = (tag.region.map { table[tag.language + "-" + $0] } ?? nil) ?? table[tag.language] ?? .none
        return rule.category(operands)
    }

    /// Whether Herald has a rule for `language` (otherwise everything is `other`).
    public static func hasRule(for language: String) -> Bool {
        table[LanguageTag(language).language] != nil
    }

    /// The categories a language uses, `other` last.
    public static func categories(for language: String) -> [PluralCategory] {
        let tag = LanguageTag(language)
        let rule = (tag.region.map { table[tag.language + "-" + $0] } ?? nil) ?? table[tag.language] ?? .none
        return rule.categories
    }

    private enum Rule {
        case none, oneI1V0, oneN1, oneI01, oneI0OrN1, french, spanish, italian, portuguese, portuguesePortugal
        case danish, russian, polish, czech, arabic, hebrew, romanian, lithuanian, latvian, croatian, slovenian, irish, welsh

        var categories: [PluralCategory] {
            switch self {
            case .none: [.other]
            case .oneI1V0, .oneN1, .oneI01, .oneI0OrN1, .danish: [.one, .other]
            case .french, .spanish, .italian, .portuguese, .portuguesePortugal: [.one, .many, .other]
            case .russian, .polish: [.one, .few, .many, .other]
            case .czech, .lithuanian: [.one, .few, .many, .other]
            case .arabic, .welsh: [.zero, .one, .two, .few, .many, .other]
            case .hebrew: [.one, .two, .other]
            case .romanian, .croatian: [.one, .few, .other]
            case .latvian: [.zero, .one, .other]
            case .slovenian: [.one, .two, .few, .other]
            case .irish: [.one, .two, .few, .many, .other]
            }
        }

        func category(_ o: PluralOperands) -> PluralCategory {
            let n = o.n, i = o.i, v = o.v, f = o.f, t = o.t
            func nIs(_ value: Double) -> Bool { n == value }
            func nIn(_ range: ClosedRange<Double>, mod: Double? = nil) -> Bool {
                guard o.isInteger else { return false }
                let value = mod.map { n.truncatingRemainder(dividingBy: $0) } ?? n
                return range.contains(value)
            }
            let millions = v == 0 && i != 0 && i % 1_000_000 == 0
            switch self {
            case .none:
                return .other
            case .oneI1V0:
                return i == 1 && v == 0 ? .one : .other
            case .oneN1:
                return nIs(1) ? .one : .other
            case .oneI01:
                return i <= 1 ? .one : .other
            case .oneI0OrN1:
                return i == 0 || nIs(1) ? .one : .other
            case .french:
                if i <= 1 { return .one }
                return millions ? .many : .other
            case .spanish:
                if nIs(1) { return .one }
                return millions ? .many : .other
            case .italian, .portuguesePortugal:
                if i == 1 && v == 0 { return .one }
                return millions ? .many : .other
            case .portuguese:
                if i <= 1 { return .one }
                return millions ? .many : .other
            case .danish:
                return nIs(1) || (t != 0 && i <= 1) ? .one : .other
            case .russian:
                guard v == 0 else { return .other }
                if i % 10 == 1 && i % 100 != 11 { return .one }
                if (2...4).contains(i % 10) && !(12...14).contains(i % 100) { return .few }
                return .many
            case .polish:
                guard v == 0 else { return .other }
                if i == 1 { return .one }
                if (2...4).contains(i % 10) && !(12...14).contains(i % 100) { return .few }
                return .many
            case .czech:
                if i == 1 && v == 0 { return .one }
                if (2...4).contains(i) && v == 0 { return .few }
                return v != 0 ? .many : .other
            case .arabic:
                if nIs(0) { return .zero }
                if nIs(1) { return .one }
                if nIs(2) { return .two }
                if nIn(3...10, mod: 100) { return .few }
                if nIn(11...99, mod: 100) { return .many }
                return .other
            case .hebrew:
                if (i == 1 && v == 0) || (i == 0 && v != 0) { return .one }
                if i == 2 && v == 0 { return .two }
                return .other
            case .romanian:
                if i == 1 && v == 0 { return .one }
                if v != 0 || nIs(0) || (!nIs(1) && nIn(1...19, mod: 100)) { return .few }
                return .other
            case .lithuanian:
                if nIn(1...1, mod: 10) && !nIn(11...19, mod: 100) { return .one }
                if nIn(2...9, mod: 10) && !nIn(11...19, mod: 100) { return .few }
                return f != 0 ? .many : .other
            case .latvian:
                if nIn(0...0, mod: 10) || nIn(11...19, mod: 100) || (v == 2 && (11...19).contains(f % 100)) { return .zero }
                if (nIn(1...1, mod: 10) && !nIn(11...11, mod: 100)) || (v == 2 && f % 10 == 1 && f % 100 != 11) || (v != 2 && f % 10 == 1) { return .one }
                return .other
            case .croatian:
                if (v == 0 && i % 10 == 1 && i % 100 != 11) || (f % 10 == 1 && f % 100 != 11) { return .one }
                if (v == 0 && (2...4).contains(i % 10) && !(12...14).contains(i % 100)) || ((2...4).contains(f % 10) && !(12...14).contains(f % 100)) { return .few }
                return .other
            case .slovenian:
                if v == 0 && i % 100 == 1 { return .one }
                if v == 0 && i % 100 == 2 { return .two }
                if (v == 0 && (3...4).contains(i % 100)) || v != 0 { return .few }
                return .other
            case .irish:
                if nIs(1) { return .one }
                if nIs(2) { return .two }
                if nIn(3...6) { return .few }
                if nIn(7...10) { return .many }
                return .other
            case .welsh:
                if nIs(0) { return .zero }
                if nIs(1) { return .one }
                if nIs(2) { return .two }
                if nIs(3) { return .few }
                if nIs(6) { return .many }
                return .other
            }
        }
    }

    private static let table: [String: Rule] = {
        var table: [String: Rule] = [:]
        let groups: [(Rule, [String])] = [
            (.none, ["ja", "ko", "zh", "yue", "th", "vi", "id", "ms", "lo", "my", "km", "bo", "jv", "su", "ig", "yo", "sg", "to"]),
            (.oneI1V0, ["en", "de", "nl", "sv", "fi", "et", "ca", "gl", "ur", "sw", "fy", "ia", "ie", "io", "ji", "yi", "sc", "lij", "vec"]),
            (.oneN1, ["tr", "el", "hu", "bg", "nb", "no", "nn", "ka", "kk", "az", "ta", "te", "ml", "mn", "ne", "sq", "uz", "ky", "eu", "af", "ps", "so", "tk", "ug", "or", "om", "ha", "lb", "rm", "xh", "ku", "ckb", "eo", "fo", "ee", "ast"]),
            (.oneI01, ["hy", "kab", "ff"]),
            (.oneI0OrN1, ["hi", "bn", "fa", "gu", "kn", "am", "zu", "as", "mr", "pcm"]),
            (.french, ["fr"]),
            (.spanish, ["es"]),
            (.italian, ["it"]),
            (.portuguese, ["pt"]),
            (.danish, ["da"]),
            (.russian, ["ru", "uk", "be"]),
            (.polish, ["pl"]),
            (.czech, ["cs", "sk"]),
            (.arabic, ["ar", "ars"]),
            (.hebrew, ["he", "iw"]),
            (.romanian, ["ro", "mo"]),
            (.lithuanian, ["lt"]),
            (.latvian, ["lv"]),
            (.croatian, ["hr", "sr", "bs", "sh"]),
            (.slovenian, ["sl"]),
            (.irish, ["ga"]),
            (.welsh, ["cy"]),
        ]
        for (rule, languages) in groups {
            for language in languages { table[language] = rule }
        }
        table["pt-PT"] = .portuguesePortugal
        return table
    }()
}
