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
    /// `w`: how many fraction digits remain without trailing zeros.
    public var w: Int
    /// `e`: the exponent of compact notation (`1.2c6`); always 0 for the plain numbers of
    /// `loc-args`.
    public var e: Int

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
        w = trimmed.count
        e = 0
    }

    /// Operands of an integer.
    public init(_ value: Int) {
        n = Double(value.magnitude)
        i = UInt64(value.magnitude)
        v = 0
        f = 0
        t = 0
        w = 0
        e = 0
    }

    /// Whether the number has no fraction (`v` may still be non-zero, as in `1.0`).
    public var isInteger: Bool { n.rounded(.towardZero) == n }
}

/// CLDR cardinal plural rules for every language CLDR covers, chosen by the language code of a
/// localization (`pt-PT` has its own rule; other regions and scripts share the language's unless
/// CLDR says otherwise). The rules are generated from CLDR (``cldrVersion``) by
/// `Scripts/generate-plural-rules.py` and checked against an independent implementation (Babel).
///
/// A language CLDR does not know uses the root rule (everything is `other`). Apple's
/// `.stringsdict` also applies a `zero` form to the number 0 in every language, which
/// ``category(for:language:)`` does not do; ``LocalizedValue`` handles that.
public enum PluralRules {
    /// The category of `operands` in `language` (a tag such as `fr-CA`, `pt_PT` or `sr-Latn`).
    public static func category(for operands: PluralOperands, language: String) -> PluralCategory {
        guard let rule = rule(for: language) else { return .other }
        return evaluate(rule: rule, operands)
    }

    /// Every language tag with a rule of its own, sorted: CLDR's languages, the regions and
    /// scripts whose rule differs from their language's, and CLDR's aliases (`iw`, `kmr`, …).
    public static let languages: [String] = ruleByTag.keys.sorted()

    /// Whether CLDR has a rule for `language` (otherwise everything is `other`).
    public static func hasRule(for language: String) -> Bool {
        rule(for: language) != nil
    }

    /// The categories a language uses, `other` last.
    public static func categories(for language: String) -> [PluralCategory] {
        guard let rule = rule(for: language) else { return [.other] }
        return categoriesByRule[Int(rule)]
    }

    /// The rule of the most specific tag CLDR lists: language-script-region, language-region,
    /// language-script, then the language.
    static func rule(for language: String) -> UInt8? {
        let tag = LanguageTag(language)
        var candidates: [String] = []
        if let script = tag.script, let region = tag.region { candidates.append("\(tag.language)-\(script)-\(region)") }
        if let region = tag.region { candidates.append("\(tag.language)-\(region)") }
        if let script = tag.script { candidates.append("\(tag.language)-\(script)") }
        candidates.append(tag.language)
        for candidate in candidates {
            if let rule = ruleByTag[candidate] { return rule }
        }
        return nil
    }
}
