import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import HeraldClient
import HeraldJSON
import HeraldMock
import HeraldPayload
import HeraldProtocol
import HeraldTestSupport
import HeraldHarness
import Testing

/// The web inbox in a real browser: headless Chromium driven over the DevTools protocol
/// (Tests/Fixtures/inbox/browser.py) opens the page, the client sends notifications to the mock,
/// and they must appear through the live event stream, rendered.
@Suite(.serialized, .heavy) struct InboxTests {
    @Test func notificationsArriveLiveAndRender() async throws {
        let (chromium, python, axe) = try WebPageChecks.browserTools()
        let strings = try TemporaryDirectory()
        let bundle = try PersistenceTests.bundle(in: strings)
        // The inbox's Release sends to a second mock.
        let other = try await ClientHarness.start()
        defer { Task { await other.stop() } }
        let harness = try await ClientHarness.start {
            $0.apiPort = 0
            $0.localization = bundle
            $0.releaseTarget = ReleaseTarget(name: "the other mock", client: other.configuration())
        }
        defer { Task { await harness.stop() } }
        let apiPort = try #require(harness.mock.apiPort)

        // The page serves itself: one document, no outside assets.
        let (page, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(apiPort)/")!)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") == "text/html; charset=utf-8")
        let html = String(decoding: page, as: UTF8.self)
        #expect(!html.contains("src=\"http") && !html.contains("href=\"http"), "no assets from elsewhere")

        // The files the inbox's commands need, where the mock says they are (a folder with a
        // space in its name), and this build's herald.
        let files = try TemporaryDirectory()
        let keyFile = files.path("keys and CA/AuthKey_\(ClientHarness.keyID).p8")
        let caFile = files.path("keys and CA/ca.pem")
        try files.write("keys and CA/AuthKey_\(ClientHarness.keyID).p8", harness.key.pkcs8PEM)
        try files.write("keys and CA/ca.pem", try #require(harness.mock.trustRootPEM))
        harness.mock.pasteHints = MockPasteHints(
            herald: "'\(Fixtures.heraldBinary)'", trustFile: caFile, keyFiles: [ClientHarness.keyID.rawValue: keyFile])

        let work = FileManager.default.temporaryDirectory.appendingPathComponent("herald-inbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let ready = work.appendingPathComponent("ready")
        let expected = 6
        let tokens = ClientHarness.tokens(3, salt: 9)
        let options = """
            {"language": "fr", "languageText": "Jenna et Frank vous invitent", "resend": true, "releaseToken": "\(tokens[2].hex)",
             "axe": "\(axe)", "dark": true, "narrow": true, "address": true}
            """
        let browser = Task {
            try await ExternalTools.executeInBackground(
                python, [Fixtures.url("inbox/browser.py").path, chromium, "http://127.0.0.1:\(apiPort)/", ready.path, String(expected), work.path, options],
                timeout: .seconds(150))
        }
        for _ in 0..<600 where !FileManager.default.fileExists(atPath: ready.path) {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(FileManager.default.fileExists(atPath: ready.path), "the page opened its event stream")

        // Sent only now: they can reach the page only through the live stream.
        _ = harness.mock.addFault(try FaultRule(parsing: "status=400/BadDeviceToken,token=\(tokens[1].hex)"))
        let client = try harness.client()
        func alert(_ title: String, body: String, collapse: String? = nil) throws -> APNsRequest {
            let payload = try Payload(decoding: #"{"aps":{"alert":{"title":"\#(title)","body":"\#(body)"},"badge":4,"thread-id":"chat"}}"#)
            return try APNsRequest(payload: payload, to: tokens[0], topic: ClientHarness.topic, collapseID: collapse.map { try CollapseID($0) })
        }
        _ = try await client.send(alert("Lunch at noon", body: "Table for two"))
        _ = try await client.send(alert("Score 1-0", body: "First half", collapse: "match"))
        _ = try await client.send(alert("Score 2-0", body: "Second half", collapse: "match"))
        _ = try await client.send(APNsRequest(
            payload: try Payload(decoding: #"{"aps":{"content-available":1}}"#), to: tokens[0], topic: ClientHarness.topic,
            pushType: .background, priority: .conservePower))
        // The seed's loc-key example: English by default, French when the page asks.
        let invitation = APNsRequest(
            headers: APNsRequestHeaders(target: .device(tokens[0]), pushType: .alert, topic: ClientHarness.topic),
            body: try Fixtures.bytes("seeds/legacy-example-4.json"))
        let arrival = Task { try await other.mock.nextNotification(timeout: .seconds(120)) }
        _ = try await client.send(invitation)
        let stranger = try alert("Nobody", body: "home").to(tokens[1])
        let rejected = await client.outcome(of: stranger)
        #expect(rejected.failure?.reason == .badDeviceToken)
        await client.shutdown()

        let result = try await browser.value
        #expect(result.status == 0, "browser.py: \(result.stderr)")
        guard result.status == 0 else { return }
        let list = try String(contentsOf: work.appendingPathComponent("list.html"), encoding: .utf8)
        for text in ["Lunch at noon", "Score 2-0", "400 BadDeviceToken", "silent: wakes the app", "(6)", "Jenna and Frank have invited you"] {
            #expect(list.contains(text), "the list shows \(text)")
        }
        // The connection log: the client's connection, opened, with its address, through the
        // live stream.
        let connections = try #require(list.range(of: "id=\"connections\"").map { String(list[$0.lowerBound...]) })
        #expect(connections.contains("opened") && connections.contains("127.0.0.1:"), "the connections panel shows the client's connection")
        // The device view: the badge, the newer of two pushes with one collapse id only, the
        // thread stacked, the silent wake listed apart.
        let devices = try #require(list.range(of: "id=\"devices\"").map { String(list[$0.lowerBound...]) })
        #expect(devices.contains("aria-label=\"badge 4\""))
        #expect(devices.contains("Score 2-0") && !devices.contains("Score 1-0"), "collapse id replaces")
        #expect(devices.contains("+1 more in thread chat"))
        #expect(devices.contains("1 silent wake"))
        #expect(!devices.contains("Nobody"), "a rejected push reaches no device")
        // The detail of the newest request (the rejected one): answer, size against the limit,
        // and commands that reproduce it.
        let detail = try String(contentsOf: work.appendingPathComponent("detail.html"), encoding: .utf8)
        for text in ["Not delivered: 400 BadDeviceToken", "of 4096 bytes)", " send - --token \(tokens[1].hex)", "curl --http2 --cacert", "apns-topic: com.example.app"] {
            #expect(detail.contains(text), "the detail shows \(text)")
        }
        // Both commands work as pasted into a shell in another folder: they reproduce the request
        // (the fault still refuses the token, so APNs' answer shows in each one's output).
        let elsewhere = try TemporaryDirectory()
        for (label, expected) in [("herald send command", "rejected 400 BadDeviceToken"), ("curl command", #"{"reason":"BadDeviceToken"}"#)] {
            let command = try #require(Self.preformatted(labelled: label, in: detail), "no \(label) in the detail")
            let pasted = try await ExternalTools.executeInBackground("/bin/sh", ["-c", "cd '\(elsewhere.path(""))' && " + command], timeout: .seconds(60))
            #expect(String(decoding: pasted.stdout, as: UTF8.self).contains(expected), "\(label):\n\(command)\n\(pasted.stderr)")
        }

        // Every request has an address: opening the newest set it, and a fresh load of the
        // oldest one's address opens that request.
        let address = try String(contentsOf: work.appendingPathComponent("address.txt"), encoding: .utf8)
        #expect(address.wholeMatch(of: /#\/requests\/\d+/) != nil, "\(address)")
        let addressed = try String(contentsOf: work.appendingPathComponent("addressed.txt"), encoding: .utf8).split(separator: " ")
        #expect(addressed.count == 2 && addressed[0] == addressed[1], "the addressed detail: \(addressed)")
        // In the dark appearance every form control is dark too (the fault rule's field stayed
        // white): its background's luminance, from its computed rgb().
        let controls = try JSONSerialization.jsonObject(with: Data(contentsOf: work.appendingPathComponent("dark-controls.json"))) as? [[String: String]] ?? []
        #expect(controls.contains { $0["id"] == "fault-rule" }, "\(controls)")
        for control in controls {
            let channels = (control["background"] ?? "").matches(of: /\d+(\.\d+)?/).prefix(3).compactMap { Double($0.output.0) }
            let luminance = channels.count == 3 ? (0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]) / 255 : 1
            #expect(luminance < 0.3, "\(control["id"] ?? "?") is \(control["background"] ?? "?") in the dark appearance")
        }

        // The screenshot is a PNG of the device view.
        let png = try [UInt8](Data(contentsOf: work.appendingPathComponent("devices.png")))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        let width = png.count > 24 ? png[16..<20].reduce(0) { $0 << 8 | Int($1) } : 0
        let height = png.count > 24 ? png[20..<24].reduce(0) { $0 << 8 | Int($1) } : 0
        #expect(width > 250 && height > 150, "\(width)x\(height)")

        // The language chosen for the device: the same notification in French.
        let french = try String(contentsOf: work.appendingPathComponent("devices-language.html"), encoding: .utf8)
        #expect(french.contains("Jenna et Frank vous invitent à jouer au Monopoly") && !french.contains("have invited you"))
        // Resend: the mock judged it again; Release: the other mock received it, for the token typed.
        let resent = try String(contentsOf: work.appendingPathComponent("resend.txt"), encoding: .utf8)
        #expect(resent.contains("Resent as request 7: accepted"), "\(resent)")
        let released = try String(contentsOf: work.appendingPathComponent("release.txt"), encoding: .utf8)
        let delivered = try await arrival.value
        #expect(released.contains("the other mock accepted it: apns-id \(delivered.apnsID ?? "?")"), "\(released)")
        #expect(delivered.deviceToken == tokens[2].hex && delivered.isAccepted)

        // axe-core finds no WCAG 2.1 A or AA violation (labels, names, contrast, roles).
        let audit = try JSONDocument(parsing: Array(try Data(contentsOf: work.appendingPathComponent("axe.json"))))
        let violations = audit.root["violations"].map { Array($0.elements) } ?? []
        #expect(violations.isEmpty, "\(violations.map { "\($0["id"]?.stringValue ?? ""): \($0["help"]?.stringValue ?? "") at \($0["nodes"]?.value ?? .null)" })")
        #expect((audit.root["passes"]?.int64Value ?? 0) > 10, "axe ran its rules")
        // Dark appearance: the screenshot's top left is dark (the phone's dark wallpaper or the panel).
        let dark = try [UInt8](Data(contentsOf: work.appendingPathComponent("devices-dark.png")))
        let light = try await ExternalTools.pngPixels(png, at: [(20, 60)])
        let darkPixels = try await ExternalTools.pngPixels(dark, at: [(20, 60)])
        #expect(light[0].prefix(3).reduce(0, +) > darkPixels[0].prefix(3).reduce(0, +) + 150, "light \(light), dark \(darkPixels)")
        // A narrow window: one column, nothing wider than the window.
        let narrow = try JSONDocument(parsing: Array(try Data(contentsOf: work.appendingPathComponent("narrow.json"))))
        #expect(narrow.root["scrollWidth"]?.int64Value == narrow.root["width"]?.int64Value, "\(narrow.root.value)")
    }

    /// `herald mock --db`: after a restart on the same file the page shows the same requests and
    /// the same lock screen, rebuilt from the database.
    @Test func aRestartedMockShowsTheSameInbox() async throws {
        let chromium = try ExternalTools.require("chromium", "chromium-browser", "google-chrome", package: "chromium")
        try ExternalTools.requirePython(modules: "websockets", package: "websockets")
        let python = try ExternalTools.require("python3", package: "python3")
        let directory = try TemporaryDirectory()
        let harness = try await ClientHarness.start {
            $0.apiPort = 0
            $0.databasePath = directory.path("mock.db")
        }
        let token = ClientHarness.tokens(1, salt: 21)[0]
        let client = try harness.client()
        for (title, collapse) in [("Kick-off", nil), ("Goal 1-0", "score"), ("Goal 2-0", "score")] as [(String, String?)] {
            let payload = try Payload(decoding: #"{"aps":{"alert":{"title":"\#(title)","body":"Cup final"},"badge":3}}"#)
            _ = try await client.send(APNsRequest(payload: payload, to: token, topic: ClientHarness.topic, collapseID: collapse.map { try CollapseID($0) }))
        }
        await client.shutdown()
        await harness.stop()

        let again = try MockAPNsServer(configuration: harness.mock.configuration)
        try await again.start()
        defer { Task { await again.stop() } }
        let apiPort = try #require(again.apiPort)
        let work = try TemporaryDirectory()
        let result = try await ExternalTools.executeInBackground(
            python, [Fixtures.url("inbox/browser.py").path, chromium, "http://127.0.0.1:\(apiPort)/", work.path("ready"), "0", work.path],
            timeout: .seconds(120))
        #expect(result.status == 0, "browser.py: \(result.stderr)")
        guard result.status == 0 else { return }
        let page = try String(decoding: work.read("list.html"), as: UTF8.self)
        #expect(page.contains("(3)"), "the three requests")
        let devices = try #require(page.range(of: "id=\"devices\"").map { String(page[$0.lowerBound...]) })
        #expect(devices.contains("Goal 2-0") && !devices.contains("Goal 1-0") && devices.contains("+1 more in this app"), "the lock screen as it was: the goal replaced, the kick-off stacked below")
        #expect(page.contains("Kick-off"))
        #expect(devices.contains("aria-label=\"badge 3\""))
    }

    /// The text of the `<pre aria-label="LABEL">` in `html`, entities decoded.
    static func preformatted(labelled label: String, in html: String) -> String? {
        guard let start = html.range(of: "aria-label=\"\(label)\""), let open = html[start.upperBound...].firstIndex(of: ">"),
              let end = html[open...].range(of: "</pre>") else { return nil }
        var text = String(html[html.index(after: open)..<end.lowerBound])
        // Highlighting may wrap parts in elements: their text is what a copy takes.
        text = text.replacing(/<[^>]*>/, with: "")
        for (entity, character) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&#x27;", "'"), ("&amp;", "&")] {
            text = text.replacingOccurrences(of: entity, with: character)
        }
        return text
    }
}
