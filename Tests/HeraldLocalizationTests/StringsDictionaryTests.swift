import HeraldLocalization
import Testing
import HeraldTestSupport

/// `.stringsdict` plural, device and width rules.
@Suite(.ownThreads) struct StringsDictionaryTests {
    static let stringsdict = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
            <key>NEW_MESSAGES</key>
            <dict>
                <key>NSStringLocalizedFormatKey</key>
                <string>%#@messages@ from %@</string>
                <key>messages</key>
                <dict>
                    <key>NSStringFormatSpecTypeKey</key><string>NSStringPluralRuleType</string>
                    <key>NSStringFormatValueTypeKey</key><string>@</string>
                    <key>zero</key><string>No new messages</string>
                    <key>one</key><string>%@ new message</string>
                    <key>few</key><string>%@ nowe wiadomości</string>
                    <key>many</key><string>%@ nowych wiadomości</string>
                    <key>other</key><string>%@ new messages</string>
                </dict>
            </dict>
            <key>POSITIONAL</key>
            <dict>
                <key>NSStringLocalizedFormatKey</key>
                <string>%2$@ shared %1$#@photos@</string>
                <key>photos</key>
                <dict>
                    <key>NSStringFormatSpecTypeKey</key><string>NSStringPluralRuleType</string>
                    <key>NSStringFormatValueTypeKey</key><string>@</string>
                    <key>one</key><string>a photo</string>
                    <key>other</key><string>%1$@ photos</string>
                </dict>
            </dict>
            <key>TAP</key>
            <dict>
                <key>NSStringDeviceSpecificRuleType</key>
                <dict>
                    <key>iphone</key><string>Tap to open</string>
                    <key>mac</key><string>Click to open</string>
                    <key>other</key><string>Open</string>
                </dict>
            </dict>
            <key>BROKEN</key><string>not a dictionary</string>
        </dict>
        </plist>
        """

    func localizer(language: String, device: String = "iphone") -> Localizer {
        var table = StringsTable(entries: [:])
        table.addStringsFile(bytes: Array(#""NEW_MESSAGES" = "overridden by the stringsdict"; "PLAIN" = "plain";"#.utf8), path: "\(language).lproj/Localizable.strings")
        table.addStringsDictionaryFile(bytes: Array(Self.stringsdict.utf8), path: "\(language).lproj/Localizable.stringsdict")
        let bundle = LocalizationBundle(tables: [language: ["Localizable": table]])
        return Localizer(bundle: bundle, preferredLanguages: [language], options: .init(device: device))
    }

    @Test(arguments: [
        ("en", "1", "1 new message from Ada"), ("en", "5", "5 new messages from Ada"), ("en", "0", "No new messages from Ada"),
        ("pl", "2", "2 nowe wiadomości from Ada"), ("pl", "5", "5 nowych wiadomości from Ada"), ("pl", "22", "22 nowe wiadomości from Ada"),
        ("ja", "1", "1 new messages from Ada"),
    ])
    func pluralFormsFollowTheLanguage(language: String, count: String, expected: String) {
        let text = localizer(language: language).localizedString(forKey: "NEW_MESSAGES", arguments: [count, "Ada"])
        #expect(text.text == expected)
        #expect(text.found)
    }

    @Test func stringsdictOverridesStringsButOtherKeysRemain() {
        let localizer = localizer(language: "en")
        #expect(localizer.localizedString(forKey: "PLAIN", arguments: nil).text == "plain")
        #expect(localizer.localizedString(forKey: "NEW_MESSAGES", arguments: ["2", "Bo"]).text == "2 new messages from Bo")
    }

    @Test func positionalVariable() {
        let localizer = localizer(language: "en")
        #expect(localizer.localizedString(forKey: "POSITIONAL", arguments: ["1", "Ada"]).text == "Ada shared a photo")
        #expect(localizer.localizedString(forKey: "POSITIONAL", arguments: ["3", "Ada"]).text == "Ada shared 3 photos")
    }

    @Test func deviceVariations() {
        #expect(localizer(language: "en").localizedString(forKey: "TAP", arguments: nil).text == "Tap to open")
        #expect(localizer(language: "en", device: "mac").localizedString(forKey: "TAP", arguments: nil).text == "Click to open")
        #expect(localizer(language: "en", device: "applewatch").localizedString(forKey: "TAP", arguments: nil).text == "Open")
    }

    @Test func nonNumericPluralArgumentUsesOtherWithAWarning() {
        let text = localizer(language: "en").localizedString(forKey: "NEW_MESSAGES", arguments: ["many", "Ada"])
        #expect(text.text == "many new messages from Ada")
        #expect(text.diagnostics.contains { $0.severity == .warning && $0.message.contains("not a number") })
    }

    @Test func malformedEntriesAreReportedAndSkipped() {
        var table = StringsTable(entries: [:])
        table.addStringsDictionaryFile(bytes: Array(Self.stringsdict.utf8), path: "Localizable.stringsdict")
        #expect(table.entries["BROKEN"] == nil)
        #expect(table.diagnostics.contains { $0.message.contains("\"BROKEN\"") })
    }
}

/// Tables whose variables would expand without end: bounded, reported with the key, and fast.
@Suite(.timeLimit(.minutes(1))) struct UnboundedExpansionTests {
    /// A plural variable whose forms use the variable itself, three times each: before the bound
    /// this ran for 38 s in `herald preview` and showed an empty body.
    static let selfReferential = """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict><key>NEW_ITEMS</key><dict>
        <key>NSStringLocalizedFormatKey</key><string>%#@items@</string>
        <key>items</key><dict>
        <key>NSStringFormatSpecTypeKey</key><string>NSStringPluralRuleType</string>
        <key>NSStringFormatValueTypeKey</key><string>@</string>
        <key>one</key><string>%@ item %#@items@ %#@items@ %#@items@</string>
        <key>other</key><string>%@ items %#@items@ %#@items@ %#@items@</string>
        </dict></dict></dict></plist>
        """

    @Test func aSelfReferentialVariableIsAnErrorNamingTheKey() throws {
        var table = StringsTable(entries: [:])
        table.addStringsDictionaryFile(bytes: Array(Self.selfReferential.utf8), path: "en.lproj/Localizable.stringsdict")
        let bundle = LocalizationBundle(tables: ["en": ["Localizable": table]], developmentRegion: "en")
        let text = Localizer(bundle: bundle, preferredLanguages: ["en"]).localizedString(forKey: "NEW_ITEMS", arguments: ["3"])
        #expect(text.text.hasPrefix("3 items"))
        let error = try #require(text.diagnostics.first { $0.severity == .error })
        #expect(error.message.hasPrefix("\"NEW_ITEMS\" in "), "\(error.message)")
        #expect(error.message.contains("variable 'items' refers to itself (items → items)"), "\(error.message)")
    }

    /// Distinct variables nested sixteen deep, each form using the next three times: 3^16
    /// expansions without the bound.
    @Test func exponentialNestingStopsAtTheExpansionBound() throws {
        var variables: [String: LocalizedValue] = [:]
        for level in 0..<16 {
            let next = level == 15 ? "end" : "%#@v\(level + 1)@ %#@v\(level + 1)@ %#@v\(level + 1)@"
            variables["v\(level)"] = .plural(.init(forms: [.other: .text(next)]))
        }
        let value = LocalizedValue.substitution(format: .text("%#@v0@"), variables: variables)
        let resolution = value.resolve(arguments: ["1"], language: "en")
        #expect(resolution.diagnostics.contains { $0.severity == .error && $0.message.contains("expand more than 64 times") }, "\(resolution.diagnostics)")
        #expect(resolution.format.utf8.count < 16 * 1024)
    }
}
