import HeraldLocalization
import Testing
import HeraldTestSupport

/// CLDR cardinal categories for the languages the issue names, against CLDR's own examples.
@Suite(.ownThreads) struct PluralRulesTests {
    @Test(arguments: [
        ("en", "1", PluralCategory.one), ("en", "0", .other), ("en", "2", .other), ("en", "1.0", .other),
        ("de", "1", .one), ("de", "5", .other),
        ("fr", "0", .one), ("fr", "1", .one), ("fr", "1.5", .one), ("fr", "2", .other), ("fr", "1000000", .many),
        ("ru", "1", .one), ("ru", "21", .one), ("ru", "11", .many), ("ru", "2", .few), ("ru", "24", .few), ("ru", "12", .many),
        ("ru", "5", .many), ("ru", "0", .many), ("ru", "1.5", .other),
        ("pl", "1", .one), ("pl", "2", .few), ("pl", "22", .few), ("pl", "12", .many), ("pl", "5", .many), ("pl", "21", .many), ("pl", "0.5", .other),
        ("ar", "0", .zero), ("ar", "1", .one), ("ar", "2", .two), ("ar", "3", .few), ("ar", "103", .few), ("ar", "11", .many),
        ("ar", "99", .many), ("ar", "100", .other), ("ar", "0.5", .other),
        ("ja", "1", .other), ("ko", "1", .other), ("zh", "1", .other), ("zh-Hant", "2", .other),
        ("cs", "1", .one), ("cs", "3", .few), ("cs", "1.5", .many), ("cs", "5", .other),
        ("pt", "0", .one), ("pt-PT", "0", .other), ("pt-PT", "1", .one), ("es", "1", .one), ("es", "1000000", .many),
        ("he", "2", .two), ("uk", "3", .few), ("da", "0.1", .one), ("lt", "21", .one), ("lv", "10", .zero),
        ("xx-unknown", "1", .other),
    ] as [(String, String, PluralCategory)])
    func category(language: String, number: String, expected: PluralCategory) throws {
        let operands = try #require(PluralOperands(number))
        #expect(PluralRules.category(for: operands, language: language) == expected)
    }

    @Test func operandsFromText() throws {
        let operands = try #require(PluralOperands("-1.50"))
        #expect(operands.n == 1.5)
        #expect(operands.i == 1)
        #expect(operands.v == 2)
        #expect(operands.f == 50)
        #expect(operands.t == 5)
        #expect(PluralOperands("3 apples") == nil)
        #expect(PluralOperands("1.") == nil)
        #expect(PluralOperands("") == nil)
        #expect(PluralOperands("123456789012345678901234567890")?.i == 345678901234567890)
    }

    @Test func everyLanguageEndsInOther() {
        for language in ["en", "fr", "ru", "pl", "ar", "ja", "cy", "ga", "sl"] {
            #expect(PluralRules.categories(for: language).last == .other)
        }
    }
}
