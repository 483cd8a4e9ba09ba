import Foundation
import HeraldAuth
import HeraldTestSupport
import Testing

/// `herald mock` as a process under abuse from raw sockets and Python's `h2`: garbage, an
/// oversized header block, a flood of streams, rapid resets, a slow reader, requests that never
/// finish their bodies, floods of PING, SETTINGS and CONTINUATION frames, an HPACK bomb, a
/// client that opens no window for answers. Each attack costs at
/// most its own connection; the server keeps serving, and its peak memory stays bounded.
@Suite(.serialized, .exclusive) struct AbuseTests {
    @Test func abusedServerKeepsServingWithBoundedMemory() async throws {
        try ExternalTools.requirePython(modules: "h2", package: "h2")
        let directory = try TemporaryDirectory()
        let key = ProviderSigningKey.generate(keyID: try KeyID("ABC123DEFG"), teamID: try TeamID("DEF123GHIJ"))
        try directory.write("key.p8", key.pkcs8PEM)
        let program = try HeraldProcess.start([
            "mock", "--plaintext", "--port", "0", "--api-port", "0", "--channel-port", "0",
            "--key", directory.path("key.p8"), "--key-id", "ABC123DEFG", "--team-id", "DEF123GHIJ",
        ])
        let process = program.process
        defer { process.terminate() }
        let banner = await program.read(until: "/3/device/", timeout: .seconds(30))
        let afterHost = try #require(banner.range(of: "http://127.0.0.1:"))
        let portText = banner[afterHost.upperBound...].prefix { $0.isNumber }
        let jwt = ProviderToken.sign(with: key, issuedAt: Date()).rawValue
        let token = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"
        let python = try ExternalTools.require("python3", package: "python3")
        let run = try await ExternalTools.runInBackground(python, [Fixtures.url("mock/abuse.py").path, String(portText), jwt, token], timeout: .seconds(180))
        let results = try #require(try JSONSerialization.jsonObject(with: Data(run)) as? [String: [String: Any]])
        for (attack, result) in results {
            #expect(result["healthyAfter"] as? Bool == true, "\(attack): the server stopped serving: \(result)")
        }
        #expect(results["garbage"]?["closed"] as? Bool == true)
        #expect(results["oversizedHeaders"]?["refused"] as? Bool == true)
        let flood = results["streamFlood"] ?? [:]
        #expect((flood["refusedStreams"] as? Int ?? 0) >= 1000 || flood["connectionTerminated"] as? Bool == true, "\(flood)")
        let reset = results["rapidReset"] ?? [:]
        #expect(reset["goAway"] as? Bool == true || reset["closed"] as? Bool == true, "rapid resets end the connection: \(reset)")
        #expect(results["slowReader"]?["serverStoppedReading"] as? Bool == true, "\(results["slowReader"] ?? [:])")
        let unfinished = results["unfinishedBodies"] ?? [:]
        #expect((unfinished["resetEnhanceYourCalm"] as? Int ?? 0) > 0 || unfinished["connectionTerminated"] as? Bool == true,
                "bodies beyond the connection's budget are refused: \(unfinished)")
        for flood in ["pingFlood", "settingsFlood", "continuationFlood"] {
            let result = results[flood] ?? [:]
            #expect(result["goAwayCode"] as? Int == 11 || (result["goAwayCode"] == nil && result["closed"] as? Bool == true),
                    "\(flood) ends its connection with ENHANCE_YOUR_CALM: \(result)")
        }
        let bomb = results["hpackBomb"] ?? [:]
        #expect(bomb["goAwayCode"] as? Int == 11 && (bomb["bombBytes"] as? Int ?? 99) < 32, "\(bomb)")
        let stalled = results["zeroWindow"] ?? [:]
        #expect(stalled["headersOnly"] as? Bool == true && stalled["heldWhileClosed"] as? Bool == true, "\(stalled)")
        #expect((stalled["bodyAfterWindow"] as? String)?.contains("PayloadEmpty") == true, "\(stalled)")
        // Peak resident memory of the server process (VmHWM), in kB.
        let status = try String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
        let peak = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) } ?? 0
        #expect(peak > 0 && peak < 200 * 1024, "peak memory \(peak) kB")
        process.terminate()
    }
}
