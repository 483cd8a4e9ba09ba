import Foundation
@testable import HeraldGateway
import HeraldJSON
import HeraldTestSupport
import Testing

/// The web console: its files as embedded, its headers, and the whole of it in Chromium over
/// the DevTools protocol against a gateway sending to the mock.
@Suite(.serialized) struct GatewayConsoleTests {
    static let folder = Fixtures.repositoryRoot.appendingPathComponent("Sources/HeraldGateway/Console/Web")
    /// What a hostile sender or operator types: markup that runs if it is ever parsed as HTML.
    static let hostile = #"<img src=x onerror="window.__herald_xss=1">"#

    @Test(arguments: [("index.html", ConsoleAssets.indexHTML), ("console.css", ConsoleAssets.css), ("console.js", ConsoleAssets.javascript)])
    func theBinaryCarriesTheSources(file: String, embedded: String) throws {
        let source = try String(contentsOf: Self.folder.appendingPathComponent(file), encoding: .utf8)
        #expect(source == embedded, "\(file) changed: run Scripts/embed-web")
    }

    @Test func thePageHasNoInlineCodeAndNothingFromElsewhere() throws {
        let html = ConsoleAssets.indexHTML
        #expect(!html.contains("<style") && !html.contains("style=\""), "styles come from console.css")
        #expect(html.contains("<script src=\"/console/console.js\"></script>") && html.components(separatedBy: "<script").count == 2, "one script, from console.js")
        #expect(html.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil, "no inline event handlers")
        for text in [html, ConsoleAssets.css, ConsoleAssets.javascript] {
            #expect(text.range(of: #"(src|href)="https?:"#, options: .regularExpression) == nil && !text.contains("url(http"), "no outside assets")
        }
        // Server values reach the page as text: the script never parses markup.
        for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"] {
            #expect(!ConsoleAssets.javascript.contains(sink), "console.js uses \(sink)")
        }
        #expect(!ConsoleAssets.javascript.contains("localStorage.setItem(KEY"), "the key is never kept beyond the tab")
    }

    /// Each file is served with the policy, at `/console/`, `/console` and its own path; the
    /// console needs no key to load (it asks for one), the API behind it does.
    @Test func theFilesAreServedUnderAStrictPolicy() async throws {
        let harness = try await GatewayHarness.start()
        defer { Task { await harness.stop() } }
        var total = 0
        for path in ["/console/", "/console", "/console/console.css", "/console/console.js"] {
            let (status, body, response) = try await harness.raw("GET", path, key: nil)
            #expect(status == 200, "\(path)")
            let policy = response?.value(forHTTPHeaderField: "Content-Security-Policy") ?? ""
            #expect(policy.contains("default-src 'none'") && policy.contains("script-src 'self'") && !policy.contains("unsafe"), "\(path): \(policy)")
            #expect(response?.value(forHTTPHeaderField: "X-Content-Type-Options") == "nosniff")
            if path != "/console" { total += body.count }
        }
        print("console assets: \(total) bytes (index.html, console.css, console.js)")
        #expect(try await harness.raw("GET", "/v1/stats", key: nil).0 == 401)
        #expect(try await harness.raw("GET", "/console/nothing.js", key: nil).0 == 404)
    }

    /// The composer's dry run answers what POST would (accepted, or refused with its status,
    /// message and findings), renders each language, and stores nothing.
    @Test func theDryRunAnswersAsPOSTWouldAndStoresNothing() async throws {
        let harness = try await GatewayHarness.start()
        defer { Task { await harness.stop() } }
        try await harness.registerApp()
        let app = GatewayHarness.bundleID
        let token = GatewayHarness.tokens(1, salt: 90)[0].hex
        let path = "/v1/apps/\(app)/notifications/check"
        let (okStatus, ok) = try await harness.call("POST", path, #"""
            {"payload":{"aps":{"alert":{"title":"Order","body":"It shipped"}}},"tokens":["\#(token)"],
             "localized":{"fr":{"title":"Commande","body":"Elle est partie"}}}
            """#)
        #expect(okStatus == 200 && ok?.root["accepted"]?.boolValue == true && ok?.root["recipients"]?.int64Value == 1)
        let previews = ok?.root["previews"]
        #expect(previews?.count == 2)
        #expect(previews?[0]?["language"]?.isNull == true && previews?[0]?["rendered"]?["body"]?.stringValue == "It shipped")
        #expect(previews?[1]?["language"]?.stringValue == "fr" && previews?[1]?["rendered"]?["title"]?.stringValue == "Commande")
        let (badStatus, bad) = try await harness.call("POST", path, #"{"payload":{"aps":{"alert":"Hi","badge":"three"}},"tokens":["\#(token)"]}"#)
        #expect(badStatus == 200 && bad?.root["accepted"]?.boolValue == false && bad?.root["status"]?.int64Value == 422)
        #expect(bad?.root["findings"]?[0]?["rule"]?.stringValue == "key-type" && bad?.root["findings"]?[0]?["pointer"]?.stringValue == "/payload/aps/badge")
        // As POST: a tag with no device is refused; users without devices are counted, not refused.
        let (_, nobody) = try await harness.call("POST", path, #"{"payload":{"aps":{"alert":"Hi"}},"audience":{"tag":"nobody"}}"#)
        #expect(nobody?.root["accepted"]?.boolValue == false && nobody?.root["pointer"]?.stringValue == "/audience")
        let (_, users) = try await harness.call("POST", path, #"{"payload":{"aps":{"alert":"Hi"}},"audience":{"users":["nobody"]}}"#)
        #expect(users?.root["accepted"]?.boolValue == true && users?.root["recipients"]?.int64Value == 0)
        let (_, empty) = try await harness.call("POST", path, #"{"payload":{"aps":{"alert":"Hi"}},"tokens":[]}"#)
        #expect(empty?.root["accepted"]?.boolValue == false && empty?.root["status"]?.int64Value == 400)
        #expect(try await harness.call("POST", path, "[1, 2]").0 == 400)
        #expect(try await harness.call("POST", path, "{").0 == 400)
        let (_, listed) = try await harness.call("GET", "/v1/apps/\(app)/notifications")
        #expect(listed?.root["notifications"]?.count == 0, "a dry run stores nothing")
        #expect(try await harness.mock.notifications(.limit(10)).isEmpty, "and sends nothing")
    }

    /// `/v1/stats`: the last hour's buckets add up to what was sent, for the apps the key may
    /// see; an app whose endpoint refuses shows as refusing, with why and when it tries again.
    @Test func statsCountTheHourAndSayHowEachEndpointStands() async throws {
        let harness = try await GatewayHarness.start()
        defer { Task { await harness.stop() } }
        try await harness.registerApp()
        // An app whose server refuses connections (nothing listens on port 1).
        let definition = harness.appDefinition(id: "down.app").replacingOccurrences(of: "\"port\":\(harness.mock.port)", with: "\"port\":1")
        #expect(try await harness.call("POST", "/v1/apps", definition).0 == 201)
        let tokens = GatewayHarness.tokens(3, salt: 93)
        _ = try await harness.waitUntilDone(try await harness.submit(tokens: tokens))
        _ = try await harness.submit(tokens: [tokens[0]], app: "down.app")
        var down: JSONDocument.Node?
        var stats: JSONDocument?
        for _ in 0..<100 {
            stats = try await harness.call("GET", "/v1/stats?minutes=5").1
            down = stats?.root["apps"]?.elements.first { $0["app"]?.stringValue == "down.app" }
            if down?["apns"]?.stringValue == "refusing" { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let buckets = Array(try #require(stats?.root["buckets"]).elements)
        #expect(buckets.count == 30, "five minutes of ten-second buckets")
        func total(_ key: String) -> Int64 { buckets.reduce(0) { $0 + ($1[key]?.int64Value ?? 0) } }
        #expect(total("accepted") == 3 && total("rejected") == 0 && total("submitted") == 4)
        #expect(down?["apns"]?.stringValue == "refusing" && (down?["failedAttempts"]?.int64Value ?? 0) >= 1, "\(String(describing: down?.value))")
        #expect(down?["lastFailure"]?.stringValue?.contains("refused") == true && down?["nextAttemptIn"]?.doubleValue != nil)
        let good = stats?.root["apps"]?.elements.first { $0["app"]?.stringValue == GatewayHarness.bundleID }
        #expect(good?["apns"]?.stringValue == "connected" && (good?["connections"]?.int64Value ?? 0) >= 1)
        // A key for the down app sees its counts only: one submitted, nothing accepted.
        let (_, key) = try await harness.call("POST", "/v1/keys", #"{"name":"down","apps":["down.app"]}"#)
        let scoped = try #require(key?.root["key"]?.stringValue)
        let (_, seen) = try await harness.call("GET", "/v1/stats?minutes=5", key: scoped)
        let seenBuckets = Array(try #require(seen?.root["buckets"]).elements)
        #expect(seenBuckets.reduce(0) { $0 + ($1["submitted"]?.int64Value ?? 0) } == 1)
        #expect(seenBuckets.reduce(0) { $0 + ($1["accepted"]?.int64Value ?? 0) } == 0)
        #expect(seen?.root["apps"]?.count == 1)
        #expect(try await harness.call("GET", "/v1/stats?minutes=61").0 == 400)
    }

    /// The whole console in Chromium: signs in, every page drawn without an error and clean
    /// under axe-core in both appearances and in a narrow window; a payload linted as typed,
    /// previewed, sent to the mock and watched to done; a schedule cancelled; a test push; a key
    /// made; markup shown as text everywhere; a key for one app sees that app only.
    @Test(.heavy) func theConsoleInChromium() async throws {
        let (chromium, python, axe) = try WebPageChecks.browserTools()

        // A webhook receiver that is down: it answers 500 with a body (markup in it) every time.
        let directory = try TemporaryDirectory()
        let secret = "whsec-console-0123456789"
        let receiver = try RunningProgram(python, [Fixtures.url("gateway/webhook_receiver.py").path, secret, "1000", directory.path("events.jsonl")])
        defer { receiver.process.terminate() }
        let started = await receiver.read(until: "port ", timeout: .seconds(20))
        let receiverPort = try #require(started.firstMatch(of: /port (\d+)/).flatMap { Int($0.output.1) })

        let harness = try await GatewayHarness.start()
        defer { Task { await harness.stop() } }
        let app = GatewayHarness.bundleID
        try await harness.registerApp(extra: #","webhook":{"url":"http://127.0.0.1:\#(receiverPort)/hooks","secret":"\#(secret)","events":["token.dead"]}"#)
        try await harness.registerApp(id: "other.app")
        let tokens = GatewayHarness.tokens(3, salt: 71)
        // Devices named with markup; one token dead, so the webhook has something to post.
        let tag = Self.hostile.replacingOccurrences(of: "\"", with: "\\\"")
        let (registered, _) = try await harness.call(
            "POST", "/v1/apps/\(app)/devices", #"{"tokens":["\#(tokens[0].hex)"],"user":"\#(tag)","tags":["\#(tag)"]}"#)
        #expect(registered == 200)
        harness.mock.unregister(tokens[2])
        _ = try await harness.waitUntilDone(try await harness.submit(tokens: [tokens[2]]))
        for _ in 0..<200 {
            let (_, events) = try await harness.call("GET", "/v1/apps/\(app)/webhooks")
            if events?.root["events"]?[0]?["lastStatus"]?.int64Value == 500 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let (made, key) = try await harness.call("POST", "/v1/keys", #"{"name":"ops","apps":["\#(app)"]}"#)
        #expect(made == 201)
        let scoped = try #require(key?.root["key"]?.stringValue)

        let plan = try JSONWriterBytes([
            "adminKey": .string(GatewayHarness.adminKey), "scopedKey": .string(scoped), "app": .string(app), "token": .string(tokens[0].hex),
            "hostile": .string(Self.hostile), "axe": .string(axe),
        ])
        let out = directory.path("result.json")
        let run = try await ExternalTools.executeInBackground(
            python, [Fixtures.url("console/browser.py").path, chromium, "http://127.0.0.1:\(harness.port)", out, String(decoding: plan, as: UTF8.self)],
            timeout: .seconds(240))
        #expect(run.status == 0, "browser.py: \(run.stderr)")
        let result = try JSONDocument(parsing: try directory.read("result.json")).root

        // Loaded, drawn, clean.
        #expect(result["errors"]?.elements.map { $0.stringValue ?? "" } == [], "the page logged errors")
        let loads = result["loads"]?.members.map { "\($0.keyNode.stringValue ?? "") \($0.value.doubleValue ?? -1) ms" } ?? []
        print("console page loads in Chromium: \(loads.joined(separator: ", ")); sent to done in \(result["sendToDoneMs"]?.doubleValue ?? -1) ms")
        #expect(loads.count == 9)
        for member in result["axe"].map({ Array($0.members) }) ?? [] {
            let page = member.keyNode.stringValue ?? ""
            #expect(member.value["violations"]?.count == 0, "axe on \(page): \(String(describing: member.value["violations"]?.value))")
            #expect((member.value["passes"]?.int64Value ?? 0) > 10, "axe ran on \(page)")
        }
        #expect(result["axe"]?.count == 16)
        for member in result["narrow"].map({ Array($0.members) }) ?? [] {
            #expect((member.value.int64Value ?? 1) <= 0, "\(member.keyNode.stringValue ?? "") is wider than a 400-pixel window by \(member.value.int64Value ?? -1) px")
        }
        let texts = (result["texts"]?.members.map { ($0.keyNode.stringValue ?? "", $0.value.stringValue ?? "") } ?? [])
            + (result["scoped"]?["texts"]?.members.map { ("scoped " + ($0.keyNode.stringValue ?? ""), $0.value.stringValue ?? "") } ?? [])
        for (page, text) in texts {
            #expect(!text.contains("[object") && !text.contains("undefined") && !text.contains("NaN")
                && !text.split(separator: "\n").contains("null"), "\(page) shows a value the script did not format: \(text)")
        }

        // The key: in this tab only, sent as a header, never a cookie; forgotten on sign-out.
        #expect(result["cookies"]?.count == 0)
        #expect(result["sessionKeys"]?.elements.map { $0.stringValue ?? "" } == ["herald.console.key"])
        #expect(result["localKeys"]?.elements.contains { $0.stringValue == "herald.console.key" } == false)
        #expect(result["sessionAfterSignOut"]?.count == 0)
        #expect(result["requestsWithKey"]?.int64Value == 0, "the key went to another origin")
        // The plain-HTTP banner: not on loopback, before a key is typed elsewhere.
        #expect(result["bannerOnLoopback"]?.boolValue == false)
        #expect(result["bannerElsewhere"]?.stringValue?.contains("plain HTTP") == true)

        // Markup everywhere shows as text and never runs.
        #expect(result["xss"]?.int64Value == 0 && result["images"]?.int64Value == 0)
        #expect(result["preview"]?.stringValue?.contains(Self.hostile) == true, "the preview shows the title as typed")
        #expect(result["texts"]?["keys after"]?.stringValue?.contains(Self.hostile) == true, "the key's name as typed")
        #expect(result["texts"]?["devices after"]?.stringValue?.contains(Self.hostile) == true, "the user id and tag as typed")
        let dead = result["texts"]?["dead this week"]?.stringValue ?? ""
        #expect(dead.contains(String(tokens[2].hex.suffix(8))) && dead.contains("Unregistered") && !dead.contains(String(tokens[0].hex.suffix(8))), "\(dead)")

        // Compose: a lint error as typed refuses; the fixed payload went to the mock as typed.
        #expect(result["badVerdict"]?.stringValue?.contains("key-type") == true && result["sendDisabled"]?.boolValue == true)
        #expect(result["badFindings"]?.stringValue?.contains("/payload/aps/badge") == true)
        #expect(result["curl"]?.stringValue?.contains("$HERALD_KEY") == true && result["curl"]?.stringValue?.contains(GatewayHarness.adminKey) == false)
        let delivered = try await harness.mock.notifications(.limit(1_000)).filter { $0.deviceToken == tokens[0].hex && $0.status == 200 }
        let titles = delivered.compactMap { try? JSONDocument(parsing: $0.body).root["aps"]?["alert"]?["title"]?.stringValue }
        #expect(titles.contains(Self.hostile), "the composed push reached the device as typed: \(titles)")
        #expect(result["testPush"]?.stringValue?.contains("accepted") == true && result["testPush"]?.stringValue?.contains("200") == true)
        // The scheduled one was cancelled before it was due.
        #expect(result["cancelMessage"]?.stringValue?.contains("1 not sent") == true)
        let (_, cancelled) = try await harness.call("GET", "/v1/apps/\(app)/notifications?status=cancelled")
        #expect(cancelled?.root["notifications"]?.count == 1)

        // Webhooks: the failing receiver's status and the first bytes of its answer, as text.
        let webhooks = result["texts"]?["webhooks"]?.stringValue ?? ""
        #expect(webhooks.contains("token.dead") && webhooks.contains("HTTP 500") && webhooks.contains(#"{"error":"busy <b>try later</b>"}"#), "\(webhooks)")
        let (_, events) = try await harness.call("GET", "/v1/apps/\(app)/webhooks")
        let event = events?.root["events"]?[0]
        #expect(event?["type"]?.stringValue == "token.dead" && event?["state"]?.stringValue == "queued" && (event?["attempts"]?.int64Value ?? 0) >= 1)
        #expect(event?["lastAnswer"]?.stringValue == #"{"error":"busy <b>try later</b>"}"# && event?["lastLatencyMs"]?.int64Value != nil)

        // A key made in the console works, and is for the app it named.
        let newKey = try #require(result["newKey"]?.stringValue)
        #expect(try await harness.call("GET", "/v1/apps/\(app)", key: newKey).0 == 200)
        #expect(try await harness.call("GET", "/v1/apps/other.app", key: newKey).0 == 403)

        // The scoped key: its app only, in the page and in every call the page made.
        let scopedTexts = result["scoped"]?["texts"]
        #expect(scopedTexts?["apps"]?.stringValue?.contains(app) == true && scopedTexts?["apps"]?.stringValue?.contains("other.app") == false)
        #expect(scopedTexts?["keys"]?.stringValue?.contains("Only an administrator") == true)
        #expect(result["scoped"]?["who"]?.stringValue?.contains("other.app") == false)
        let calls = result["scoped"]?["requests"]?.elements.compactMap(\.stringValue) ?? []
        #expect(!calls.isEmpty && calls.allSatisfy { $0.hasPrefix("http://127.0.0.1:\(harness.port)/") && !$0.contains("other.app") && !$0.contains("/v1/keys") }, "\(calls)")
    }
}
