/// A language tag split into its parts, normalized the way Apple's localization matching
/// compares them: `en_US` and `en-US` are the same, `English` is `en`, subtags are case-folded.
public struct LanguageTag: Sendable, Hashable, CustomStringConvertible {
    /// The language code, lowercase (`en`, `zh`, `pt`).
    public var language: String
    /// The script, title case (`Hant`, `Hans`, `Latn`), if written.
    public var script: String?
    /// The region, uppercase (`US`, `CA`, `419`), if written.
    public var region: String?

    /// Parses a tag such as `fr-CA`, `zh_Hant_TW`, `en_US`, `English` or `Base`.
    public init(_ text: String) {
        let parts = text.split(whereSeparator: { $0 == "-" || $0 == "_" }).map(String.init)
        let first = parts.first ?? ""
        language = Self.legacyNames[first.lowercased()] ?? Self.aliases[first.lowercased()] ?? first.lowercased()
        for part in parts.dropFirst() {
            if part.count == 4, part.allSatisfy(\.isLetter), script == nil, region == nil {
                script = part.prefix(1).uppercased() + part.dropFirst().lowercased()
            } else if (part.count == 2 && part.allSatisfy(\.isLetter)) || (part.count == 3 && part.allSatisfy(\.isNumber)), region == nil {
                region = part.uppercased()
            }
        }
    }

    /// `language[-Script][-REGION]`.
    public var description: String {
        [language, script, region].compactMap { $0 }.joined(separator: "-")
    }

    /// The script to compare, filling in the one a language implies where regions differ in
    /// script: Chinese in Taiwan, Hong Kong and Macau is Traditional (`Hant`), elsewhere
    /// Simplified (`Hans`).
    var likelyScript: String? {
        if let script { return script }
        guard language == "zh" else { return nil }
        return ["TW", "HK", "MO"].contains(region ?? "") ? "Hant" : "Hans"
    }

    /// The old full-name `.lproj` folders (`English.lproj`).
    static let legacyNames: [String: String] = [
        "english": "en", "french": "fr", "german": "de", "italian": "it", "dutch": "nl", "japanese": "ja",
        "spanish": "es", "portuguese": "pt", "swedish": "sv", "danish": "da", "finnish": "fi", "norwegian": "nb",
        "korean": "ko", "russian": "ru", "polish": "pl", "turkish": "tr", "greek": "el", "hebrew": "he", "arabic": "ar",
    ]

    /// Deprecated or equivalent codes.
    static let aliases: [String: String] = ["iw": "he", "in": "id", "ji": "yi", "no": "nb"]
}

/// Chooses the localization a device uses from the user's preferred languages and the app's
/// localizations (CoreFoundation's bundle localization lookup, after CoreFoundation's `CFBundle_Locale.c`).
///
/// For each preferred language in order, the best available localization is taken: the exact
/// tag, then the bare language (`fr-CA` → `fr`), then another region of the language (`fr-CA` →
/// `fr-FR`), never across scripts (`zh-Hant` ≠ `zh-Hans`; `zh-TW` is `zh-Hant`). If none
/// matches, the development region, then `en_US`/`en`, then the first localization.
public enum LanguageMatcher {
    /// The localizations to search, best first: one match per preferred language that has one,
    /// then the development region (CoreFoundation searches it last). When nothing matches, the
    /// fallbacks of CoreFoundation's bundle localization lookup are used.
    public static func searchOrder(preferred: [String], available: [String], developmentRegion: String?) -> [String] {
        var order: [String] = []
        for language in preferred {
            if let match = bestMatch(for: language, in: available), !order.contains(match) {
                order.append(match)
            }
        }
        if order.isEmpty {
            if let fallback = [developmentRegion, "en_US", "en-US", "en"].compactMap({ $0 }).lazy.compactMap({ bestMatch(for: $0, in: available) }).first {
                order.append(fallback)
            } else if let first = available.first {
                order.append(first)
            }
        }
        if let developmentRegion, let match = bestMatch(for: developmentRegion, in: available), !order.contains(match) {
            order.append(match)
        }
        return order
    }

    /// The best localization in `available` for one preferred language, or `nil`.
    public static func bestMatch(for preferred: String, in available: [String]) -> String? {
        let wanted = LanguageTag(preferred)
        var best: (score: Int, name: String)?
        for name in available {
            let score = self.score(wanted: wanted, candidate: LanguageTag(name))
            if score > 0, score > (best?.score ?? 0) { best = (score, name) }
        }
        return best?.name
    }

    /// 0: no match; 1: same language, other region; 2: the user gave no region, the app has
    /// one; 3: the bare language; 4: the same region.
    static func score(wanted: LanguageTag, candidate: LanguageTag) -> Int {
        guard wanted.language == candidate.language, !wanted.language.isEmpty else { return 0 }
        if let a = wanted.likelyScript, let b = candidate.likelyScript, a != b { return 0 }
        switch (wanted.region, candidate.region) {
        case (let w?, let c?): return w == c ? 4 : (wanted.script != nil && wanted.script == candidate.script ? 2 : 1)
        case (_, nil): return 3
        case (nil, _?): return 2
        }
    }
}
