import Foundation
import HeraldTestSupport
import Testing

/// `herald preview` run as a user runs it.
@Suite(.ownThreads) struct PreviewCommandTests {
    static let seed4 = Fixtures.url("seeds/legacy-example-4.json").path

    @Test func seedSequentialStrings() throws {
        let result = try HeraldProcess.run(["preview", "--strings", Fixtures.url("seeds/legacy-strings-sequential.strings").path, Self.seed4])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.output.contains("Body          Jenna and Frank have invited you to play Monopoly"))
        #expect(result.output.contains("│ Jenna and Frank have invited you to play   │"))
    }

    @Test func seedPositionalStringsAsJSON() throws {
        let result = try HeraldProcess.run(["preview", "--format", "json", "--strings", Fixtures.url("seeds/legacy-strings-positional.strings").path, Self.seed4])
        #expect(result.status == 0, "\(result.stderr)")
        let values = try ExternalTools.pythonJSON(result.stdout, ["d['body']", "d['presentation']", "d['subtitle']", "d['sound']['name']", "d['userInfo']['acme']"])
        #expect(values == [#""Frank and Jenna have invited you to play Monopoly""#, #""alert""#, "null", #""chime.aiff""#, #""foo""#])
    }

    @Test func seedActionKeyThroughABundle() throws {
        let directory = try TemporaryDirectory()
        try directory.write("Games.app/en.lproj/Localizable.strings", "\"PLAY\" = \"Play\";")
        try directory.write("Games.app/fr.lproj/Localizable.strings", "\"PLAY\" = \"Jouer\";")
        try directory.write("Games.app/Info.plist", bytes: try ExternalTools.plistlib(json: #"{"CFBundleDevelopmentRegion": "en", "CFBundleDisplayName": "Games"}"#, format: "BINARY"))
        let result = try HeraldProcess.run(["preview", "--bundle", directory.path("Games.app"), "--lang", "fr-CA,en", Fixtures.url("seeds/legacy-example-2.json").path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.output.contains("[ Jouer ]"))
        #expect(result.output.contains("▣ GAMES"))
        #expect(result.output.contains("Language      fr"))
    }

    /// A .stringsdict in Base.lproj reads the same given alone as through its bundle: English
    /// plural rules (Base is the development language, English by Xcode's default).
    @Test func aBaseTableGivesTheSameTextAloneAsInItsBundle() throws {
        let directory = try TemporaryDirectory()
        let table = try ExternalTools.plistlib(json: #"""
            {"YEARS_LEFT": {"NSStringLocalizedFormatKey": "%#@years@ left",
             "years": {"NSStringFormatSpecTypeKey": "NSStringPluralRuleType", "NSStringFormatValueTypeKey": "@", "one": "%@ year", "other": "%@ years"}}}
            """#, format: "XML")
        try directory.write("App/Base.lproj/Localizable.stringsdict", bytes: table)
        try directory.write("one.json", #"{"aps":{"alert":{"loc-key":"YEARS_LEFT","loc-args":["1"]}}}"#)
        let alone = try HeraldProcess.run(["preview", "--strings", directory.path("App/Base.lproj/Localizable.stringsdict"), directory.path("one.json")])
        let bundled = try HeraldProcess.run(["preview", "--bundle", directory.path("App"), directory.path("one.json")])
        #expect(alone.status == 0 && bundled.status == 0, "\(alone.stderr) \(bundled.stderr)")
        #expect(alone.output.contains("Body          1 year left") && bundled.output.contains("Body          1 year left"), "\(alone.output)\n\(bundled.output)")
    }

    @Test func stdinAndNoBundle() throws {
        let result = try HeraldProcess.run(["preview", "-"], stdin: Array(#"{"aps":{"alert":{"loc-key":"HELLO_%@","loc-args":["Ada"]}}}"#.utf8))
        #expect(result.status == 0)
        #expect(result.output.contains("Body          HELLO_Ada"))
        #expect(result.output.contains("no bundle given"))
    }

    @Test func malformedPayloadIsReportedAndStillPreviewed() throws {
        let path = Fixtures.url("seeds/legacy-example-5-malformed.json").path
        let result = try HeraldProcess.run(["preview", path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(path):4:5: error: expected ','"))
        #expect(result.output.contains("Acme message received from Johnny Appleseed"))
    }

    @Test func unrecoverablePayloadExitsOne() throws {
        let result = try HeraldProcess.run(["preview", "-"], stdin: Array("{\"aps\": [".utf8))
        #expect(result.status == 1)
        #expect(result.stderr.contains("<stdin>:1:"))
        #expect(result.stdout.isEmpty)
        let array = try HeraldProcess.run(["preview", "-"], stdin: Array("[1]".utf8))
        #expect(array.status == 1)
        #expect(array.stderr.contains("<stdin>:1:1: error:"))
    }

    @Test func unparsableTableRendersKeysAndExitsOne() throws {
        let directory = try TemporaryDirectory()
        try directory.write("fr.lproj/Localizable.strings", "\"GAME_PLAY_REQUEST_FORMAT\" = \"%2$@ et %1$@\"\n")
        let result = try HeraldProcess.run(["preview", "--strings", directory.path("fr.lproj/Localizable.strings"), Self.seed4])
        #expect(result.status == 1)
        #expect(result.output.contains("Body          GAME_PLAY_REQUEST_FORMAT"))
        #expect(result.output.contains("Localizable.strings could not be read (1:44: missing ';'"))
    }

    @Test(arguments: [
        (["preview", "--bundle", "/nonexistent/App.app", "x.json"], "cannot use --bundle '/nonexistent/App.app': no such file or directory"),
        (["preview", "--bundle", "a", "--strings", "b"], "cannot be used together"),
        (["preview", "--push-type", "loud", "-"], "unknown push type 'loud'"),
        (["preview", "--format", "pdf", "-"], "pdf"),
        (["preview", "/nonexistent.json"], "cannot read '/nonexistent.json'"),
        (["preview", "--device", "vision", "-"], "unknown device 'vision'; expected one of iphone, ipad, ipod, mac, applewatch, appletv, applevision"),
    ])
    func badArgumentsExitTwo(arguments: [String], message: String) throws {
        let result = try HeraldProcess.run(arguments, stdin: Array("{}".utf8))
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test func emptyBundleDirectoryExitsTwo() throws {
        let directory = try TemporaryDirectory()
        try directory.write("notes.txt", "")
        let result = try HeraldProcess.run(["preview", "--bundle", directory.path, Self.seed4])
        #expect(result.status == 2)
        #expect(result.stderr.contains("no localizations found"))
    }

    @Test func lintFindingsJoinThePreview() throws {
        let payload = Array(#"{"aps":{"content-available":1,"badge":1}}"#.utf8)
        let result = try HeraldProcess.run(["preview", "--lint", "--push-type", "background", "--format", "json", "-"], stdin: payload)
        let values = try ExternalTools.pythonJSON(result.stdout, [
            "d['presentation']", "sorted(m['rule'] for m in d['diagnostics'] if m['rule'])",
        ])
        // The preview's own finding is the lint rule's, said once; lint adds the others.
        #expect(values == [#""shown-despite-silent""#, #"["background-with-visible-content", "silent-with-visible-content"]"#])
        let plain = try HeraldProcess.run(["preview", "--push-type", "background", "--format", "json", "-"], stdin: payload)
        let own = try ExternalTools.pythonJSON(plain.stdout, ["[(m['rule'], m['severity']) for m in d['diagnostics'] if m['rule']]"])
        #expect(own == [#"[["background-with-visible-content", "error"]]"#])
    }

    @Test func helpTeaches() throws {
        let result = try HeraldProcess.run(["preview", "--help"])
        #expect(result.status == 0)
        for needle in ["--bundle", "--strings", "--lang", "shown-despite-silent", "Examples:", "Exit status"] {
            #expect(result.output.contains(needle), "\(needle)")
        }
    }

    /// The HTML page in a real browser: Chromium parses the same text, and a screenshot shows a
    /// light lock screen and card on the left, a dark one on the right.
    @Test func htmlPreviewInHeadlessChromium() async throws {
        let directory = try TemporaryDirectory()
        try directory.write("payload.json", #"{"aps":{"alert":{"title":"Game Request","body":"Bob wants to play <poker> & more"},"badge":5}}"#)
        let html = directory.path("preview.html")
        let result = try await HeraldProcess.runInBackground(["preview", "--format", "html", "--app-name", "Games", "--output", html, directory.path("payload.json")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty)

        let dom = String(decoding: try await ExternalTools.chromium(["--dump-dom", "file://" + html]), as: UTF8.self)
        // Both cards and the details table.
        #expect(dom.components(separatedBy: "Bob wants to play &lt;poker&gt; &amp; more").count == 4, "\(dom.prefix(400))")
        #expect(dom.contains("data-appearance=\"dark\""))
        #expect(dom.contains(">Games<"))

        let png = directory.path("preview.png")
        _ = try await ExternalTools.chromium(["--window-size=900,760", "--screenshot=" + png, "file://" + html])
        // Layout: 24 px margin, screens 390 px wide with 24 px between; the card starts at y = 188.
        let pixels = try await ExternalTools.pngPixels(try directory.read("preview.png"), at: [
            (219, 34), (633, 34),      // wallpaper, light and dark
            (70, 193), (484, 193),     // card background, light and dark
        ])
        func luminance(_ rgb: [Int]) -> Int { (rgb[0] * 299 + rgb[1] * 587 + rgb[2] * 114) / 1000 }
        #expect(pixels.count == 4)
        #expect(luminance(pixels[0]) > 150, "light wallpaper \(pixels[0])")
        #expect(luminance(pixels[1]) < 70, "dark wallpaper \(pixels[1])")
        #expect(luminance(pixels[2]) > 220, "light card \(pixels[2])")
        #expect(luminance(pixels[3]) < 70, "dark card \(pixels[3])")
    }
}
