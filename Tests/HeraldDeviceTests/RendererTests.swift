import HeraldDevice
import HeraldJSON
import HeraldLocalization
import HeraldPayload
import HeraldProtocol
import HeraldTestSupport
import Testing

/// Rendering payloads into what the device shows (reference §9).
@Suite(.ownThreads) struct RendererTests {
    static let seedKey = "GAME_PLAY_REQUEST_FORMAT"

    func renderer(_ strings: [String: String]? = nil, files: Set<String>? = nil, languages: [String] = ["en"]) -> NotificationRenderer {
        let bundle = strings.map { LocalizationBundle(tables: ["en": ["Localizable": StringsTable(strings: $0)]], developmentRegion: "en", fileNames: files) }
        return NotificationRenderer(bundle: bundle, preferredLanguages: languages)
    }

    func render(_ json: String, with renderer: NotificationRenderer? = nil, headers: APNsRequestHeaders = APNsRequestHeaders()) throws -> RenderedNotification {
        try (renderer ?? self.renderer()).render(document: JSONDocument(parsing: json), headers: headers)
    }

    @Test func renderingWithoutUserInfoChangesNothingElse() throws {
        let renderer = NotificationRenderer(bundle: nil, preferredLanguages: ["en"])
        for path in Fixtures.seedPayloads {
            let document = try JSONDocument(parsing: try Fixtures.bytes(path))
            let full = try renderer.render(document: document)
            var lean = try renderer.render(document: document, includingUserInfo: false)
            #expect(lean.userInfo.isEmpty, "\(path)")
            #expect(!full.userInfo.isEmpty, "\(path)")
            lean.userInfo = full.userInfo
            #expect(lean == full, "\(path)")
        }
    }

    /// A rendered notification shares its fields between copies until one changes: a change to
    /// a copy leaves the original as a separate rendering of the same payload has it, and equal
    /// contents in separate storage are equal and hash alike.
    @Test func aCopyChangedLeavesTheOriginalAsItWas() throws {
        let renderer = NotificationRenderer(bundle: nil, preferredLanguages: ["en"])
        let changes: [(String, (inout RenderedNotification) -> Void)] = [
            ("title", { $0.title = "changed" }), ("body", { $0.body = ($0.body ?? "") + "!" }), ("badge", { $0.badge = 99 }),
            ("presentation", { $0.presentation = .none }), ("sound", { $0.sound = nil }), ("userInfo", { $0.userInfo = JSONObject() }),
            ("diagnostics", { $0.diagnostics.append(LocalizationDiagnostic(.info, "added")) }),
            ("wakesApp", { $0.wakesApp.toggle() }), ("language", { $0.language = "xx" }),
        ]
        for path in Fixtures.seedPayloads {
            let document = try JSONDocument(parsing: try Fixtures.bytes(path))
            let original = try renderer.render(document: document)
            let separate = try renderer.render(document: document)
            #expect(original == separate && original.hashValue == separate.hashValue, "\(path)")
            for (name, change) in changes {
                var copy = original
                change(&copy)
                #expect(original == separate, "\(path): changing \(name) on a copy changed the original")
                #expect(original.title == separate.title && original.badge == separate.badge && original.diagnostics == separate.diagnostics, "\(path), \(name)")
                var again = separate
                change(&again)
                #expect(copy == again, "\(path): the same change to two copies, \(name)")
            }
        }
    }

    @Test func seedSequentialAndPositionalTables() throws {
        let payload = try Payload(decoding: Fixtures.bytes("seeds/legacy-example-4.json"))
        for (file, expected) in [
            ("seeds/legacy-strings-sequential.strings", "Jenna and Frank have invited you to play Monopoly"),
            ("seeds/legacy-strings-positional.strings", "Frank and Jenna have invited you to play Monopoly"),
        ] {
            let bundle = try LocalizationBundle.load(path: Fixtures.url(file).path)
            let rendered = NotificationRenderer(bundle: bundle, preferredLanguages: ["en"]).render(payload)
            #expect(rendered.body == expected)
            #expect(rendered.presentation == .alert)
            #expect(rendered.sound?.name == "chime.aiff")
            #expect(!rendered.diagnostics.contains { $0.severity >= .warning }, "\(rendered.diagnostics)")
        }
    }

    @Test func seedActionLocKeyIsLookedUp() throws {
        let payload = try Payload(decoding: Fixtures.bytes("seeds/legacy-example-2.json"))
        let localized = renderer(["PLAY": "Play"]).render(payload)
        #expect(localized.actionTitle == "Play")
        #expect(localized.title == "Game Request")
        #expect(localized.body == "Bob wants to play poker")
        #expect(localized.badge == 5)
        // Without the key in the table, the device shows the key itself.
        #expect(renderer([:]).render(payload).actionTitle == "PLAY")
        #expect(renderer(nil).render(payload).actionTitle == "PLAY")
    }

    @Test(arguments: [
        (#"{"aps":{"alert":"Hi"}}"#, nil, RenderedNotification.Presentation.alert),
        (#"{"aps":{"badge":3}}"#, nil, .soundBadge),
        (#"{"aps":{"sound":"default"}}"#, nil, .soundBadge),
        (#"{"aps":{"content-available":1}}"#, nil, .silent),
        (#"{"aps":{"content-available":1},"custom":"x"}"#, PushType.background, .silent),
        (#"{"aps":{"content-available":1,"badge":1}}"#, nil, .shownDespiteSilent),
        (#"{"aps":{"content-available":1,"alert":"x"}}"#, nil, .shownDespiteSilent),
        (#"{"aps":{"alert":"x"}}"#, .background, .shownDespiteSilent),
        (#"{"aps":{"content-available":1,"alert":"x"}}"#, .alert, .alert),
        (#"{"aps":{"event":"update","timestamp":1,"content-state":{"score":2}}}"#, nil, .liveActivity),
        (#"{"aps":{"content-state":{"score":2}}}"#, .liveactivity, .liveActivity),
        (#"{"aps":{}}"#, nil, .none),
        (#"{"custom":1}"#, nil, .none),
        (#"{"aps":{"alert":{"title":""}}}"#, nil, .none),
    ] as [(String, PushType?, RenderedNotification.Presentation)])
    func presentation(json: String, pushType: PushType?, expected: RenderedNotification.Presentation) throws {
        let rendered = try render(json, headers: APNsRequestHeaders(pushType: pushType))
        #expect(rendered.presentation == expected)
        if expected == .shownDespiteSilent {
            // Said as the lint rule says it: a background push with visible content is an error,
            // content-available with it a warning (Apple: it "might be throttled").
            let (rule, severity): (String, DiagnosticSeverity) = pushType == .background
                ? ("background-with-visible-content", .error) : ("silent-with-visible-content", .warning)
            #expect(rendered.diagnostics.contains { $0.rule == rule && $0.severity == severity }, "\(rendered.diagnostics)")
            #expect(!rendered.wakesApp)
        }
        if expected == .silent { #expect(rendered.wakesApp) }
    }

    @Test func alertPushWithContentAvailableAlsoWakesTheApp() throws {
        let rendered = try render(#"{"aps":{"content-available":1,"alert":"x"}}"#, headers: APNsRequestHeaders(pushType: .alert))
        #expect(rendered.wakesApp)
    }

    @Test func locKeyWinsOverPlainTitleWithANote() throws {
        let rendered = try render(#"{"aps":{"alert":{"title":"Plain","title-loc-key":"T","title-loc-args":["x"]}}}"#, with: renderer(["T": "Localized %@"]))
        #expect(rendered.title == "Localized x")
        #expect(rendered.diagnostics.contains { $0.severity == .info && $0.message.contains("both title and title-loc-key") })
    }

    @Test func subtitleAndBodyKeys() throws {
        let rendered = try render(
            #"{"aps":{"alert":{"subtitle-loc-key":"S","subtitle-loc-args":["1"],"loc-key":"B","loc-args":["Ada","Bo"],"launch-image":"Launch.png"}}}"#,
            with: renderer(["S": "Round %@", "B": "%2$@ beat %1$@"]))
        #expect(rendered.subtitle == "Round 1")
        #expect(rendered.body == "Bo beat Ada")
        #expect(rendered.launchImage == "Launch.png")
    }

    @Test func nullActionLocKeyRemovesTheActionButton() throws {
        let rendered = try render(#"{"aps":{"alert":{"body":"b","action-loc-key":null}}}"#)
        #expect(rendered.hidesActionButton)
        #expect(rendered.actionTitle == nil)
    }

    @Test func missingSoundFilePlaysTheDefault() throws {
        let withBundle = renderer([:], files: ["chime.aiff"])
        let present = try render(#"{"aps":{"alert":"x","sound":"chime.aiff"}}"#, with: withBundle)
        #expect(present.sound?.playsDefault == false)
        let missing = try render(#"{"aps":{"alert":"x","sound":"bingbong.aiff"}}"#, with: withBundle)
        #expect(missing.sound?.playsDefault == true)
        #expect(missing.diagnostics.contains { $0.message.contains("not in the app bundle") })
        let standard = try render(#"{"aps":{"alert":"x","sound":"default"}}"#, with: withBundle)
        #expect(standard.sound?.playsDefault == true)
        #expect(!standard.diagnostics.contains { $0.severity >= .warning })
    }

    @Test func criticalSound() throws {
        let rendered = try render(#"{"aps":{"alert":"x","sound":{"critical":1,"name":"default","volume":0.5},"interruption-level":"critical"}}"#)
        #expect(rendered.sound == RenderedNotification.PlayedSound(name: "default", critical: true, volume: 0.5, playsDefault: true))
        #expect(rendered.effectiveInterruptionLevel == "critical")
    }

    @Test func badgeZeroClearsAndIsKept() throws {
        let rendered = try render(#"{"aps":{"badge":0}}"#)
        #expect(rendered.badge == 0)
        #expect(rendered.presentation == .soundBadge)
    }

    @Test func identifiersAndScores() throws {
        let rendered = try render(#"{"aps":{"alert":"x","thread-id":"t","category":"c","target-content-id":"w","relevance-score":0.7,"filter-criteria":"work","mutable-content":1}}"#)
        #expect(rendered.threadIdentifier == "t")
        #expect(rendered.categoryIdentifier == "c")
        #expect(rendered.targetContentIdentifier == "w")
        #expect(rendered.relevanceScore == 0.7)
        #expect(rendered.filterCriteria == "work")
        #expect(rendered.serviceExtensionWillRun)
        #expect(rendered.effectiveInterruptionLevel == "active")
    }

    @Test func userInfoIsTheWholePayload() throws {
        let json = #"{"aps":{"alert":"x"},"acme1":"bar","acme2":[1,{"deep":true}]}"#
        let rendered = try render(json)
        #expect(JSONValue.object(rendered.userInfo).isEquivalent(to: try JSONDocument(parsing: json).root.value))
    }

    @Test func liveActivityAlertWithNestedLocKey() throws {
        let json = #"{"aps":{"event":"update","timestamp":1700000000,"content-state":{"knockedDown":true},"stale-date":1700003600,"alert":{"title":{"loc-key":"%@ is knocked down!","loc-args":["Power Panda"]},"body":"Use a potion"}}}"#
        let rendered = try render(json, with: renderer([:]), headers: APNsRequestHeaders(pushType: .liveactivity))
        #expect(rendered.presentation == .liveActivity)
        #expect(rendered.title == "Power Panda is knocked down!")
        #expect(rendered.body == "Use a potion")
        #expect(rendered.activity?.event == "update")
        #expect(rendered.activity?.staleDate == 1_700_003_600)
        #expect(rendered.activity?.contentState?["knockedDown"] == .bool(true))
        // Kept in the payload's document until read: a device's activity history holds
        // documents, not trees built and freed on every update.
        guard case .node? = rendered.activity?.contentStateStorage else {
            Issue.record("the rendered content-state was built: \(String(describing: rendered.activity?.contentStateStorage))")
            return
        }
    }

    @Test func wrongTypesAreDroppedWithTheirPosition() throws {
        let rendered = try render("{\n  \"aps\": {\n    \"alert\": \"Hi\",\n    \"badge\": \"5\"\n  }\n}")
        #expect(rendered.presentation == .alert)
        #expect(rendered.badge == nil)
        let error = try #require(rendered.diagnostics.first)
        #expect(error.severity == .error)
        #expect(error.message.hasPrefix("/aps/badge: expected"))
        #expect(error.location?.line == 4 && error.location?.column == 14)
    }

    @Test func numericLocArgsShowAsWritten() throws {
        let rendered = try render(#"{"aps":{"alert":{"loc-key":"K","loc-args":["Ada",3,"x"]}}}"#, with: renderer(["K": "%@ has %@ %@"]))
        #expect(rendered.body == "Ada has 3 x")
        #expect(rendered.diagnostics.contains { $0.message.contains("/aps/alert/loc-args/1") })
    }

    @Test func duplicateKeyUsesTheLastValue() throws {
        let rendered = try render(#"{"aps":{"alert":"first","alert":"second"}}"#)
        #expect(rendered.body == "second")
    }

    /// A repeated `aps` replaces the earlier one whole (nothing of the first survives), and an
    /// `aps` that is not a dictionary is left out whole: each renders as the payload written
    /// without the value the device skips, plus its diagnostic.
    @Test func aRepeatedOrUnreadableAPSIsReadAsTheDeviceReadsIt() throws {
        let cases = [
            (#"{"aps":{"badge":3,"sound":"a.caf","alert":"first"},"aps":{"alert":"second"}}"#, #"{"aps":{"alert":"second"}}"#, "/aps"),
            (#"{"aps":{"alert":"first","badge":3},"aps":[1,2]}"#, #"{"k":1}"#, "/aps"),
            (#"{"aps":"text","k":1}"#, #"{"k":1}"#, "/aps"),
        ]
        for (json, clean, pointer) in cases {
            var rendered = try render(json)
            let expected = try render(clean)
            #expect(rendered.diagnostics.contains { $0.message.hasPrefix(pointer) }, "\(json): \(rendered.diagnostics)")
            rendered.diagnostics = rendered.diagnostics.filter { !$0.message.hasPrefix(pointer + ":") && !$0.message.hasPrefix(pointer + " ") }
            rendered.userInfo = expected.userInfo
            var without = expected
            without.diagnostics = expected.diagnostics.filter { !$0.message.contains("no \"aps\" dictionary") }
            rendered.diagnostics = rendered.diagnostics.filter { !$0.message.contains("no \"aps\" dictionary") }
            #expect(rendered == without, "\(json)")
        }
    }

    /// One pass however many values the device cannot read: each is left out and reported in
    /// document order (the first 64 one by one, the rest counted in one diagnostic), and what is
    /// left renders exactly as the same payload with those values removed by hand.
    @Test func manyUnreadableValuesAreLeftOutInOnePass() throws {
        let arguments = (0..<300).map { $0 % 3 == 0 ? #"{"o":\#($0)}"# : #""a\#($0)""# }
        let json = #"{"aps":{"alert":{"title":7,"loc-key":"K","loc-args":[\#(arguments.joined(separator: ","))]},"badge":"5","sound":9,"thread-id":false}}"#
        let kept = (0..<300).filter { $0 % 3 != 0 }.map { #""a\#($0)""# }
        let clean = #"{"aps":{"alert":{"loc-key":"K","loc-args":[\#(kept.joined(separator: ","))]}}}"#
        let table = renderer(["K": "%1$@ then %2$@"])
        let rendered = try render(json, with: table)
        let expected = try render(clean, with: table)
        // 1 title + 100 objects among the arguments + badge + sound + thread-id = 104 values.
        let listed = rendered.diagnostics.prefix { $0.message.hasPrefix("/") }
        #expect(listed.count == 64)
        #expect(listed.first?.message.hasPrefix("/aps/alert/title:") == true)
        #expect(listed.dropFirst().map { $0.message.prefix { $0 != ":" } } == (0..<63).map { "/aps/alert/loc-args/\($0 * 3)" })
        let summary = try #require(rendered.diagnostics.dropFirst(64).first)
        #expect(summary.severity == .error && summary.message.hasPrefix("40 more values"), "\(summary.message)")
        var rest = rendered
        rest.diagnostics = Array(rendered.diagnostics.dropFirst(65))
        rest.userInfo = expected.userInfo
        #expect(rest == expected)
        #expect(rendered.body == "a1 then a2" && rendered.badge == nil && rendered.title == nil)
    }

    @Test func nonObjectDocumentCannotBeRendered() {
        #expect(throws: NotificationRenderer.DocumentError.self) { try render("[1,2]") }
    }

    @Test func missingArgumentsAreErrors() throws {
        let rendered = try render(#"{"aps":{"alert":{"loc-key":"K","loc-args":["Jenna"]}}}"#, with: renderer(["K": "%@ and %@ have invited you"]))
        #expect(rendered.body == "Jenna and  have invited you")
        #expect(rendered.worstSeverity == .error)
    }

    @Test func jsonHasTheDocumentedShape() throws {
        let rendered = try render(#"{"aps":{"alert":{"title":"T","body":"B"},"badge":2,"sound":"default"}}"#)
        guard case .object(let object) = rendered.jsonValue else { Issue.record("not an object"); return }
        #expect(Array(object.keys.prefix(17)) == [
            "presentation", "language", "title", "subtitle", "body", "actionTitle", "launchImage", "sound", "badge",
            "threadIdentifier", "categoryIdentifier", "targetContentIdentifier", "interruptionLevel", "relevanceScore",
            "filterCriteria", "appName", "hidesActionButton",
        ])
        #expect(object.keys.suffix(2) == ["userInfo", "diagnostics"])
        #expect(object["subtitle"] == .null)
        #expect(object["badge"] == .number(JSONNumber(2)))
        #expect(object["sound"]?["name"] == .string("default"))
        #expect(object["presentation"] == .string("alert"))
    }
}
