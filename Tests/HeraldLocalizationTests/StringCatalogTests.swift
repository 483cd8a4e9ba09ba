import HeraldLocalization
import Testing
import HeraldTestSupport

/// String Catalogs compiled as Xcode does (reference §8.5).
@Suite(.ownThreads) struct StringCatalogTests {
    static let catalog = """
        {
          "sourceLanguage" : "en",
          "strings" : {
            "%lld new messages" : {
              "localizations" : {
                "en" : { "variations" : { "plural" : {
                  "one" : { "stringUnit" : { "state" : "translated", "value" : "%lld new message" } },
                  "other" : { "stringUnit" : { "state" : "translated", "value" : "%lld new messages" } } } } },
                "fr" : { "variations" : { "plural" : {
                  "one" : { "stringUnit" : { "state" : "translated", "value" : "%lld nouveau message" } },
                  "other" : { "stringUnit" : { "state" : "needs_review", "value" : "%lld nouveaux messages" } } } } }
              }
            },
            "GAME_INVITE" : {
              "comment" : "loc-key for invitations",
              "localizations" : {
                "en" : { "stringUnit" : { "state" : "translated", "value" : "%@ invited you to %@" } },
                "fr" : { "stringUnit" : { "state" : "translated", "value" : "%1$@ vous invite à %2$@" } },
                "ru" : { "stringUnit" : { "state" : "translated", "value" : "%@ приглашает вас в %@" } }
              }
            },
            "PHOTOS" : {
              "localizations" : {
                "en" : {
                  "stringUnit" : { "state" : "translated", "value" : "%1$@ shared %#@photos@" },
                  "substitutions" : {
                    "photos" : {
                      "argNum" : 2, "formatSpecifier" : "@",
                      "variations" : { "plural" : {
                        "one" : { "stringUnit" : { "state" : "translated", "value" : "a photo" } },
                        "other" : { "stringUnit" : { "state" : "translated", "value" : "%arg photos" } } } }
                    }
                  }
                }
              }
            },
            "POSTS" : {
              "localizations" : {
                "de" : {
                  "stringUnit" : { "state" : "translated", "value" : "%#@posts@ von %#@people@" },
                  "substitutions" : {
                    "posts" : { "formatSpecifier" : "lld", "variations" : { "plural" : {
                      "one" : { "stringUnit" : { "state" : "translated", "value" : "ein Beitrag" } },
                      "other" : { "stringUnit" : { "state" : "translated", "value" : "mehrere Beiträge" } } } } },
                    "people" : { "formatSpecifier" : "lld", "variations" : { "plural" : {
                      "one" : { "stringUnit" : { "state" : "translated", "value" : "einer Person" } },
                      "other" : { "stringUnit" : { "state" : "translated", "value" : "mehreren Personen" } } } } }
                  }
                }
              }
            },
            "OPEN" : {
              "localizations" : {
                "en" : { "variations" : { "device" : {
                  "mac" : { "stringUnit" : { "state" : "translated", "value" : "Click to open" } },
                  "applevision" : { "stringUnit" : { "state" : "translated", "value" : "Look and tap to open" } } } } }
              }
            },
            "TAP" : {
              "localizations" : {
                "en" : { "variations" : { "device" : {
                  "iphone" : { "stringUnit" : { "state" : "translated", "value" : "Tap" } },
                  "other" : { "stringUnit" : { "state" : "translated", "value" : "Click" } } } } }
              }
            },
            "Extracted source text" : { "extractionState" : "extracted_with_value" },
            "BAD" : { "localizations" : { "en" : { "stringUnit" : { "state" : "new" } } } }
          },
          "version" : "1.0"
        }
        """

    func localizer(_ languages: [String], device: String = "iphone") throws -> Localizer {
        let catalog = try StringCatalog(bytes: Array(Self.catalog.utf8), path: "Localizable.xcstrings")
        let bundle = LocalizationBundle(tables: catalog.tables.mapValues { ["Localizable": StringsTable(entries: $0)] }, developmentRegion: catalog.sourceLanguage)
        return Localizer(bundle: bundle, preferredLanguages: languages, options: .init(device: device))
    }

    @Test func languagesAndDiagnostics() throws {
        let catalog = try StringCatalog(bytes: Array(Self.catalog.utf8), path: "Localizable.xcstrings")
        #expect(catalog.languages == ["en", "de", "fr", "ru"])
        #expect(catalog.version == "1.0")
        let warning = try #require(catalog.diagnostics.first)
        #expect(warning.message.contains("\"BAD\""))
        #expect(warning.location != nil)
    }

    @Test func stringUnitsPerLanguage() throws {
        #expect(try localizer(["fr"]).localizedString(forKey: "GAME_INVITE", arguments: ["Ada", "Chess"]).text == "Ada vous invite à Chess")
        #expect(try localizer(["ru"]).localizedString(forKey: "GAME_INVITE", arguments: ["Ada", "Chess"]).text == "Ada приглашает вас в Chess")
        #expect(try localizer(["ja", "en"]).localizedString(forKey: "GAME_INVITE", arguments: ["Ada", "Chess"]).text == "Ada invited you to Chess")
    }

    @Test func topLevelPluralUsesTheNumericArgument() throws {
        // %lld with a string argument does not print it (loc-args are strings), but the plural form is chosen.
        let english = try localizer(["en"]).localizedString(forKey: "%lld new messages", arguments: ["1"])
        #expect(english.text == " new message")
        #expect(english.diagnostics.contains { $0.severity == .error && $0.message.contains("%lld") })
        let french = try localizer(["fr"]).localizedString(forKey: "%lld new messages", arguments: ["0"])
        #expect(french.text == " nouveau message")
    }

    @Test func substitutionsWithArgNum() throws {
        let localizer = try localizer(["en"])
        #expect(localizer.localizedString(forKey: "PHOTOS", arguments: ["Ada", "1"]).text == "Ada shared a photo")
        #expect(localizer.localizedString(forKey: "PHOTOS", arguments: ["Ada", "4"]).text == "Ada shared 4 photos")
    }

    /// Without argNum a substitution takes the argument of its place in the format, as Xcode
    /// compiles it; an argument that only chooses a plural form counts as used.
    @Test func substitutionsWithoutArgNumFollowTheFormat() throws {
        let text = try localizer(["de"]).localizedString(forKey: "POSTS", arguments: ["1", "5"])
        #expect(text.text == "ein Beitrag von mehreren Personen")
        #expect(!text.diagnostics.contains { $0.message.contains("not used") }, "\(text.diagnostics)")
        #expect(try localizer(["de"]).localizedString(forKey: "POSTS", arguments: ["7", "1"]).text == "mehrere Beiträge von einer Person")
    }

    /// A device with no variation of its own and no `other`: the device shows nothing, and the
    /// preview says why (Xcode requires `other` as the fallback). Xcode's device keys, such as
    /// `applevision`, are read as written.
    @Test func deviceVariationsWithoutOther() throws {
        #expect(try localizer(["en"], device: "applevision").localizedString(forKey: "OPEN", arguments: nil).text == "Look and tap to open")
        let iphone = try localizer(["en"], device: "iphone").localizedString(forKey: "OPEN", arguments: nil)
        #expect(iphone.text == "")
        #expect(iphone.diagnostics.contains { $0.severity == .warning && $0.message.contains("no 'iphone' variation and no 'other'") }, "\(iphone.diagnostics)")
    }

    @Test func deviceVariations() throws {
        #expect(try localizer(["en"]).localizedString(forKey: "TAP", arguments: nil).text == "Tap")
        #expect(try localizer(["en"], device: "mac").localizedString(forKey: "TAP", arguments: nil).text == "Click")
    }

    @Test func sourceLanguageKeyWithoutLocalizationIsTheKey() throws {
        let text = try localizer(["en"]).localizedString(forKey: "Extracted source text", arguments: nil)
        #expect(text.found)
        #expect(text.text == "Extracted source text")
        // Not translated to French: the French table lacks it, so the device shows the key.
        #expect(try !localizer(["fr"]).localizedString(forKey: "Extracted source text", arguments: nil).found)
    }

    @Test(arguments: [
        ("not json", "expected"),
        ("[1, 2]", "a String Catalog is a JSON object"),
        (#"{"sourceLanguage": "en"}"#, "no \"strings\" object"),
    ])
    func unreadableCatalogsThrowWithAPosition(text: String, message: String) {
        do {
            _ = try StringCatalog(bytes: Array(text.utf8), path: "Localizable.xcstrings")
            Issue.record("expected an error")
        } catch {
            #expect(error.location?.line == 1)
            #expect(error.description.contains(message) || error.message.lowercased().contains(message), "\(error)")
        }
    }
}
