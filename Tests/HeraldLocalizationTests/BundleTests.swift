import Foundation
import HeraldLocalization
import HeraldTestSupport
import Testing

/// Bundles on disk: `*.lproj` folders in every table format, `Base.lproj`, `Info.plist`, String
/// Catalogs in a project tree, single table files.
@Suite(.ownThreads) struct BundleTests {
    static let key = "GAME_PLAY_REQUEST_FORMAT"

    /// An app bundle whose tables use every storage format.
    static func makeApp() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let app = "Games.app"
        try directory.write("\(app)/en.lproj/Localizable.strings", "\"\(key)\" = \"%@ and %@ have invited you to play Monopoly\";\n\"PLAY\" = \"Play\";\n")
        try directory.write("\(app)/fr.lproj/Localizable.strings", bytes: [0xFF, 0xFE] + "\"\(key)\" = \"%2$@ et %1$@ vous invitent à jouer au Monopoly\";\n\"PLAY\" = \"Jouer\";".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        try directory.write("\(app)/fr.lproj/InfoPlist.strings", "\"CFBundleDisplayName\" = \"Jeux\";")
        try directory.write("\(app)/de.lproj/Localizable.strings", bytes: try ExternalTools.plistlib(json: #"{"\#(key)": "%@ und %@ laden dich zu Monopoly ein", "PLAY": "Spielen"}"#, format: "BINARY"))
        try directory.write("\(app)/ja.lproj/Localizable.strings", bytes: try ExternalTools.plistlib(json: #"{"\#(key)": "%@と%@がモノポリーに招待しています"}"#, format: "XML"))
        try directory.write("\(app)/Info.plist", bytes: try ExternalTools.plistlib(json: #"{"CFBundleDevelopmentRegion": "en", "CFBundleDisplayName": "Games", "CFBundleName": "GamesApp"}"#, format: "BINARY"))
        try directory.write("\(app)/chime.aiff", "")
        return directory
    }

    @Test func loadsEveryFormatAndLanguage() throws {
        let directory = try Self.makeApp()
        let bundle = try LocalizationBundle.load(path: directory.path("Games.app"))
        #expect(bundle.localizations == ["de", "en", "fr", "ja"])
        #expect(bundle.developmentRegion == "en")
        let expectations = [
            "en": "Jenna and Frank have invited you to play Monopoly", "fr-CA": "Frank et Jenna vous invitent à jouer au Monopoly",
            "de-AT": "Jenna und Frank laden dich zu Monopoly ein", "ja": "JennaとFrankがモノポリーに招待しています",
        ]
        for (language, expected) in expectations {
            let localizer = Localizer(bundle: bundle, preferredLanguages: [language])
            let text = localizer.localizedString(forKey: Self.key, arguments: ["Jenna", "Frank"])
            #expect(text.text == expected, "\(language)")
            #expect(text.diagnostics.isEmpty, "\(language): \(text.diagnostics)")
        }
        #expect(bundle.containsFile(named: "chime.aiff") == true)
        #expect(bundle.containsFile(named: "bingbong.aiff") == false)
    }

    @Test func displayNameIsLocalizedThroughInfoPlistStrings() throws {
        let directory = try Self.makeApp()
        let bundle = try LocalizationBundle.load(path: directory.path("Games.app"))
        #expect(Localizer(bundle: bundle, preferredLanguages: ["fr"]).appName == "Jeux")
        #expect(Localizer(bundle: bundle, preferredLanguages: ["de"]).appName == "Games")
    }

    @Test func unmatchedLanguageFallsBackToTheDevelopmentRegion() throws {
        let directory = try Self.makeApp()
        let bundle = try LocalizationBundle.load(path: directory.path("Games.app"))
        let localizer = Localizer(bundle: bundle, preferredLanguages: ["ko"])
        #expect(localizer.language == "en")
        #expect(localizer.localizedString(forKey: "PLAY", arguments: nil).text == "Play")
    }

    /// A `Base.lproj` table holds the development language's strings, so its plurals follow the
    /// development region's rules (Russian here: 21 is `one`, 5 is `many`), whatever the user
    /// prefers.
    @Test func baseTablesTakeTheDevelopmentRegionsPluralRules() throws {
        let directory = try TemporaryDirectory()
        let stringsdict = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>FILES</key><dict>
            <key>NSStringLocalizedFormatKey</key><string>%#@files@</string>
            <key>files</key><dict><key>NSStringFormatSpecTypeKey</key><string>NSStringPluralRuleType</string>
            <key>NSStringFormatValueTypeKey</key><string>@</string>
            <key>one</key><string>%@ файл</string><key>few</key><string>%@ файла</string>
            <key>many</key><string>%@ файлов</string><key>other</key><string>%@ файла</string></dict>
            </dict></dict></plist>
            """
        try directory.write("App.app/Base.lproj/Localizable.stringsdict", stringsdict)
        try directory.write("App.app/Info.plist", bytes: try ExternalTools.plistlib(json: #"{"CFBundleDevelopmentRegion": "ru"}"#, format: "XML"))
        let bundle = try LocalizationBundle.load(path: directory.path("App.app"))
        for preferred in [["ru"], ["en"], ["ja", "de"]] {
            let localizer = Localizer(bundle: bundle, preferredLanguages: preferred)
            #expect(localizer.localizedString(forKey: "FILES", arguments: ["21"]).text == "21 файл", "\(preferred)")
            #expect(localizer.localizedString(forKey: "FILES", arguments: ["5"]).text == "5 файлов", "\(preferred)")
        }
    }

    static let filesDictionary = """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict><key>FILES</key><dict>
        <key>NSStringLocalizedFormatKey</key><string>FORMAT</string>
        <key>files</key><dict><key>NSStringFormatSpecTypeKey</key><string>NSStringPluralRuleType</string>
        <key>NSStringFormatValueTypeKey</key><string>@</string>
        <key>one</key><string>%@ file</string><key>other</key><string>%@ files</string></dict>
        </dict></dict></plist>
        """

    /// A `Base.lproj` table with no development region known: Xcode's default, English (1 is
    /// "one"; it took no plural rules and showed "1 files").
    @Test func baseTablesWithoutADevelopmentRegionAreEnglish() throws {
        let directory = try TemporaryDirectory()
        try directory.write("App/Base.lproj/Localizable.stringsdict", Self.filesDictionary.replacingOccurrences(of: "FORMAT", with: "%#@files@"))
        let bundle = try LocalizationBundle.load(path: directory.path("App"))
        #expect(bundle.developmentRegion == "en")
        #expect(bundle.diagnostics.contains { $0.message.contains("Base.lproj is taken as English") })
        let localizer = Localizer(bundle: bundle, preferredLanguages: ["de"])
        #expect(localizer.localizedString(forKey: "FILES", arguments: ["1"]).text == "1 file")
        #expect(localizer.localizedString(forKey: "FILES", arguments: ["3"]).text == "3 files")
    }

    /// `%1#@files@`: a width before the variable (CoreFoundation reads flags and width in any
    /// order); the variable is expanded, not printed as "1#@files@".
    @Test func aWidthBeforeAVariableStillNamesTheVariable() throws {
        let directory = try TemporaryDirectory()
        try directory.write("App/en.lproj/Localizable.stringsdict", Self.filesDictionary.replacingOccurrences(of: "FORMAT", with: "You have %1#@files@."))
        let bundle = try LocalizationBundle.load(path: directory.path("App"))
        let text = Localizer(bundle: bundle, preferredLanguages: ["en"]).localizedString(forKey: "FILES", arguments: ["1"])
        #expect(text.text == "You have 1 file.", "\(text)")
    }

    /// Two targets' resources under one folder: the one used is named, the other said ignored.
    @Test func severalTargetsAreNamedNotMixedSilently() throws {
        let directory = try TemporaryDirectory()
        try directory.write("Project/App/en.lproj/Localizable.strings", "\"HELLO\" = \"Hello from the app\";")
        try directory.write("Project/App/Widget/en.lproj/Localizable.strings", "\"HELLO\" = \"Hello from the widget\";")
        let bundle = try LocalizationBundle.load(path: directory.path("Project"))
        let warning = try #require(bundle.diagnostics.first { $0.severity == .warning && $0.message.contains("Widget/en.lproj is ignored") }, "\(bundle.diagnostics)")
        #expect(warning.message.contains("App/en.lproj") && warning.message.contains("--bundle"))
        #expect(Localizer(bundle: bundle, preferredLanguages: ["en"]).localizedString(forKey: "HELLO", arguments: nil).text == "Hello from the app")
    }

    /// `--strings` with a catalog of any name: it is the table keys are looked up in.
    @Test func aSingleCatalogOfAnyNameIsTheTable() throws {
        let directory = try TemporaryDirectory()
        try directory.write("Notifications.xcstrings", #"{"sourceLanguage":"en","strings":{"GREETING":{"localizations":{"en":{"stringUnit":{"state":"translated","value":"Hello %@"}},"fr":{"stringUnit":{"state":"translated","value":"Bonjour %@"}}}}},"version":"1.0"}"#)
        let bundle = try LocalizationBundle.load(path: directory.path("Notifications.xcstrings"))
        for (language, expected) in [("en", "Hello Ada"), ("fr-CA", "Bonjour Ada")] {
            let text = Localizer(bundle: bundle, preferredLanguages: [language]).localizedString(forKey: "GREETING", arguments: ["Ada"])
            #expect(text.found && text.text == expected, "\(language): \(text)")
        }
    }

    @Test func tableThatFailsToParseShowsKeysLikeTheDevice() throws {
        let directory = try Self.makeApp()
        try directory.write("Games.app/fr.lproj/Localizable.strings", "\"\(Self.key)\" = \"%2$@ et %1$@\"\n\"PLAY\" = \"Jouer\";")
        let bundle = try LocalizationBundle.load(path: directory.path("Games.app"))
        let text = Localizer(bundle: bundle, preferredLanguages: ["fr", "en"]).localizedString(forKey: "PLAY", arguments: nil)
        #expect(text.text == "PLAY")
        let error = try #require(text.diagnostics.first { $0.severity == .error })
        #expect(error.message.contains("1:44: missing ';'"))
        // With per-key fallback the English value is found instead.
        let fallback = Localizer(bundle: bundle, preferredLanguages: ["fr", "en"], options: .init(perKeyFallback: true))
        #expect(fallback.localizedString(forKey: "PLAY", arguments: nil).text == "Play")
    }

    @Test func missingKeyShowsTheKeyFormatted() throws {
        let directory = try Self.makeApp()
        let bundle = try LocalizationBundle.load(path: directory.path("Games.app"))
        let text = Localizer(bundle: bundle, preferredLanguages: ["en"]).localizedString(forKey: "%@ is knocked down!", arguments: ["Power Panda"])
        #expect(text.text == "Power Panda is knocked down!")
        #expect(!text.found)
        #expect(text.diagnostics.contains { $0.severity == .warning && $0.message.contains("shows the key itself") })
    }

    @Test func perKeyFallbackIsOffByDefault() throws {
        let directory = try Self.makeApp()
        let bundle = try LocalizationBundle.load(path: directory.path("Games.app"))
        // Japanese has no PLAY: CoreFoundation shows the key; per-key fallback finds English.
        #expect(Localizer(bundle: bundle, preferredLanguages: ["ja", "en"]).localizedString(forKey: "PLAY", arguments: nil).text == "PLAY")
        let fallback = Localizer(bundle: bundle, preferredLanguages: ["ja", "en"], options: .init(perKeyFallback: true)).localizedString(forKey: "PLAY", arguments: nil)
        #expect(fallback.text == "Play")
        #expect(fallback.diagnostics.contains { $0.severity == .info })
    }

    @Test func baseLprojServesTheDevelopmentRegion() throws {
        let directory = try TemporaryDirectory()
        try directory.write("App.app/Base.lproj/Localizable.strings", "\"HELLO\" = \"Hello from Base\";")
        try directory.write("App.app/fr.lproj/Localizable.strings", "\"HELLO\" = \"Bonjour\";")
        try directory.write("App.app/Info.plist", bytes: try ExternalTools.plistlib(json: #"{"CFBundleDevelopmentRegion": "en"}"#, format: "XML"))
        let bundle = try LocalizationBundle.load(path: directory.path("App.app"))
        #expect(bundle.localizations == ["en", "fr"])
        #expect(Localizer(bundle: bundle, preferredLanguages: ["en-GB"]).localizedString(forKey: "HELLO", arguments: nil).text == "Hello from Base")
        #expect(Localizer(bundle: bundle, preferredLanguages: ["fr"]).localizedString(forKey: "HELLO", arguments: nil).text == "Bonjour")
    }

    @Test func projectTreeWithAStringCatalog() throws {
        let directory = try TemporaryDirectory()
        try directory.write("MyApp/Resources/Localizable.xcstrings", """
            {"sourceLanguage": "de", "version": "1.1", "strings": {
              "HELLO": {"localizations": {"de": {"stringUnit": {"state": "translated", "value": "Hallo %@"}},
                                          "en": {"stringUnit": {"state": "translated", "value": "Hello %@"}}}}}}
            """)
        try directory.write("MyApp/Info.plist", bytes: try ExternalTools.plistlib(json: #"{"CFBundleDevelopmentRegion": "$(DEVELOPMENT_LANGUAGE)"}"#, format: "XML"))
        try directory.write(".build/en.lproj/Localizable.strings", "\"HELLO\" = \"from a build folder\";")
        try directory.write("MyApp/Sounds/ping.caf", "")
        let bundle = try LocalizationBundle.load(path: directory.path)
        #expect(bundle.developmentRegion == "de")
        #expect(bundle.localizations == ["de", "en"])
        #expect(Localizer(bundle: bundle, preferredLanguages: ["en-US"]).localizedString(forKey: "HELLO", arguments: ["Ada"]).text == "Hello Ada")
        #expect(Localizer(bundle: bundle, preferredLanguages: ["fr"]).localizedString(forKey: "HELLO", arguments: ["Ada"]).text == "Hallo Ada")
        #expect(bundle.containsFile(named: "ping.caf") == true)
    }

    @Test func singleTableFiles() throws {
        let directory = try TemporaryDirectory()
        try directory.write("fr.lproj/Localizable.strings", "\"HELLO\" = \"Bonjour\";")
        try directory.write("loose.strings", "\"HELLO\" = \"Loose\";")
        let inFolder = try LocalizationBundle.load(path: directory.path("fr.lproj/Localizable.strings"))
        let localizer = Localizer(bundle: inFolder, preferredLanguages: ["en"])
        #expect(localizer.localizedString(forKey: "HELLO", arguments: nil).text == "Bonjour")
        #expect(localizer.language == "fr")
        let loose = Localizer(bundle: try LocalizationBundle.load(path: directory.path("loose.strings")), preferredLanguages: ["pl"])
        #expect(loose.localizedString(forKey: "HELLO", arguments: nil).text == "Loose")
        #expect(loose.language == "pl")
        #expect(loose.bundle?.containsFile(named: "x.aiff") == nil)
    }

    @Test func seedStringsFilesRender() throws {
        let sequential = try LocalizationBundle.load(path: Fixtures.url("seeds/legacy-strings-sequential.strings").path)
        let positional = try LocalizationBundle.load(path: Fixtures.url("seeds/legacy-strings-positional.strings").path)
        #expect(Localizer(bundle: sequential, preferredLanguages: ["en"]).localizedString(forKey: Self.key, arguments: ["Jenna", "Frank"]).text
            == "Jenna and Frank have invited you to play Monopoly")
        #expect(Localizer(bundle: positional, preferredLanguages: ["en"]).localizedString(forKey: Self.key, arguments: ["Jenna", "Frank"]).text
            == "Frank and Jenna have invited you to play Monopoly")
    }

    @Test func unusablePathsThrow() throws {
        let directory = try TemporaryDirectory()
        #expect(throws: LocalizationFileError.self) { try LocalizationBundle.load(path: directory.path("missing")) }
        try directory.write("empty/readme.txt", "nothing here")
        do {
            _ = try LocalizationBundle.load(path: directory.path("empty"))
            Issue.record("expected an error")
        } catch {
            #expect(error.message.contains("no localizations found"))
        }
        try directory.write("table.txt", "\"a\" = \"b\";")
        #expect(throws: LocalizationFileError.self) { try LocalizationBundle.load(path: directory.path("table.txt")) }
    }
}
