import HeraldLocalization
import Testing

/// Language choice of reference §8.6.
@Suite(.ownThreads) struct LanguageMatcherTests {
    @Test(arguments: [
        (["fr-CA", "en"], ["en", "fr"], "fr"),
        (["fr-CA", "en"], ["en", "fr", "fr-CA"], "fr-CA"),
        (["fr-CA"], ["en", "fr-FR"], "fr-FR"),
        (["zh-Hant"], ["zh-Hans", "zh-TW"], "zh-TW"),
        (["zh-TW"], ["zh-Hans", "zh-Hant"], "zh-Hant"),
        (["zh-HK"], ["zh-Hans", "zh-Hant"], "zh-Hant"),
        (["zh-Hans"], ["zh-CN", "zh-Hant"], "zh-CN"),
        (["zh-CN"], ["zh-Hans", "zh-Hant"], "zh-Hans"),
        (["zh-Hant-TW"], ["zh-Hans", "zh-Hant"], "zh-Hant"),
        (["en-US"], ["English", "French"], "English"),
        (["fr"], ["English", "French"], "French"),
        (["en_US"], ["en-US", "en-GB"], "en-US"),
        (["pt-BR"], ["pt-PT", "pt"], "pt"),
        (["de", "fr"], ["en", "fr"], "fr"),
        (["iw"], ["he", "en"], "he"),
        (["nb"], ["no", "en"], "no"),
    ] as [([String], [String], String)])
    func picksTheBestLocalization(preferred: [String], available: [String], expected: String) {
        #expect(LanguageMatcher.searchOrder(preferred: preferred, available: available, developmentRegion: nil).first == expected)
    }

    @Test func noMatchFallsBackToTheDevelopmentRegionThenEnglishThenTheFirst() {
        #expect(LanguageMatcher.searchOrder(preferred: ["ja"], available: ["de", "fr"], developmentRegion: "fr") == ["fr"])
        #expect(LanguageMatcher.searchOrder(preferred: ["ja"], available: ["de", "en"], developmentRegion: nil) == ["en"])
        #expect(LanguageMatcher.searchOrder(preferred: ["ja"], available: ["de", "fr"], developmentRegion: nil) == ["de"])
        #expect(LanguageMatcher.searchOrder(preferred: ["ja"], available: [], developmentRegion: "en").isEmpty)
    }

    @Test func searchOrderEndsWithTheDevelopmentRegion() {
        #expect(LanguageMatcher.searchOrder(preferred: ["fr-CA", "de"], available: ["de", "en", "fr"], developmentRegion: "en") == ["fr", "de", "en"])
    }

    @Test func tagsNormalize() {
        #expect(LanguageTag("en_us").description == "en-US")
        #expect(LanguageTag("zh_hant_tw").description == "zh-Hant-TW")
        #expect(LanguageTag("English").language == "en")
        #expect(LanguageTag("es-419").region == "419")
    }
}

import Foundation
import HeraldTestSupport

/// `LanguageMatcher` against Foundation's `Bundle.preferredLocalizations(from:forPreferences:)`
/// where Foundation implements it. swift-corelibs-foundation on Linux does not: it returns the
/// first available localization whatever the preferences (probed below), so on Linux the cases
/// above, written from reference §8.6, are the oracle and this comparison is skipped with that
/// reason. On a platform whose Foundation honours the preferences it runs.
@Suite(.ownThreads) struct LanguageMatcherFoundationTests {
    static let cases: [([String], [String])] = [
        (["fr-CA", "en"], ["en", "fr"]), (["fr-CA", "en"], ["en", "fr", "fr-CA"]), (["de", "fr"], ["en", "fr"]),
        (["zh-TW"], ["zh-Hans", "zh-Hant"]), (["zh-Hans"], ["zh-CN", "zh-Hant"]), (["pt-BR"], ["pt-PT", "pt"]),
        (["ja"], ["de", "en"]), (["en-GB"], ["en", "en-GB", "fr"]),
    ]

    /// Whether Foundation's matcher reads the preferences at all.
    static var foundationHonoursPreferences: Bool {
        Bundle.preferredLocalizations(from: ["fr", "de"], forPreferences: ["de"]).first == "de"
    }

    @Test func agreesWithFoundation() throws {
        guard Self.foundationHonoursPreferences else {
            try Test.cancel("Foundation here ignores forPreferences (preferredLocalizations(from: [fr, de], forPreferences: [de]) gives \(Bundle.preferredLocalizations(from: ["fr", "de"], forPreferences: ["de"]))), so it cannot serve as an oracle")
        }
        for (preferred, available) in Self.cases {
            let foundation = Bundle.preferredLocalizations(from: available, forPreferences: preferred).first
            #expect(LanguageMatcher.searchOrder(preferred: preferred, available: available, developmentRegion: nil).first == foundation, "\(preferred) in \(available)")
        }
    }
}
