import Foundation
import HeraldAuth
@testable import HeraldMock
import HeraldTestSupport
import Testing

/// Slow-loris clients against the mock (Python's h2 and raw sockets, Tests/Fixtures/mock/
/// slow_clients.py), with the deadlines shortened to a second and a half: a preface, a body, a
/// frame and a header block each sent too slowly end their connection; a slow body that
/// finishes in time does not.
@Suite(.serialized) struct SlowClientTests {
    @Test(.ownThreads) func slowClientsLoseTheirConnectionAndPromptOnesKeepIt() async throws {
        try ExternalTools.requirePython(modules: "h2", package: "h2")
        let mock = try await MockHarness.start { $0.slowClientTimeouts = (preface: .seconds(1), request: .milliseconds(1_500)) }
        defer { Task { await mock.stop() } }
        let jwt = ProviderToken.sign(with: mock.key, issuedAt: Date()).rawValue
        let python = try ExternalTools.require("python3", package: "python3")
        let output = try await ExternalTools.runInBackground(
            python, [Fixtures.url("mock/slow_clients.py").path, String(mock.server.port), jwt, MockHarness.token], timeout: .seconds(120))
        let results = try #require(try JSONSerialization.jsonObject(with: Data(output)) as? [String: [String: Any]], "\(String(decoding: output, as: UTF8.self))")

        // A second after the connection began, whatever the client sent meanwhile.
        let preface = results["slowPreface"] ?? [:]
        let closedAfter = preface["closedAfter"] as? Double ?? 99
        #expect(closedAfter >= 0.8 && closedAfter < 5, "\(preface)")
        #expect((preface["prefaceBytesSent"] as? Int ?? 99) < 24, "closed before the preface was whole: \(preface)")
        // GOAWAY with ENHANCE_YOUR_CALM (11) a second and a half after the request or the frame
        // began; the slow stream was not processed (last-stream-id 0).
        for name in ["slowBody", "slowFrame", "stuckHeaders"] {
            let result = results[name] ?? [:]
            let after = result["goAwayAfter"] as? Double ?? 99
            #expect(after >= 1.0 && after < 6, "\(name): \(result)")
            #expect(result["code"] as? Int == 11 && result["lastStreamId"] as? Int == 0, "\(name): \(result)")
        }
        let done = results["slowButDone"] ?? [:]
        #expect(done["status"] as? [String] == ["200"] && done["goAway"] as? Bool == false && done["closed"] as? Bool == false, "\(done)")
        #expect(done["second"] as? [String] == ["200"], "the connection serves on: \(done)")

        let events = mock.server.connectionEvents()
        #expect(events.contains { $0.kind == .protocolError && $0.detail?.contains("no HTTP/2 preface and SETTINGS within 1 s") == true })
        #expect(events.filter { $0.kind == .protocolError && $0.detail?.contains("a slow client") == true }.count == 3, "\(events.map { $0.detail ?? "" })")
    }
}
