import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HeraldJSON
import HeraldTestSupport
import Testing

/// `herald demo` as a newcomer runs it: it starts, sends the examples through the client, prints
/// a `herald send` command that works when pasted, serves the inbox, and stops on SIGTERM.
@Suite(.serialized) struct DemoCommandTests {
    @Test func demoSendsTheExamplesAndItsCommandWorksAsPasted() async throws {
        // As installed: `herald` on the PATH (this build's binary, linked), started in one folder
        // with a relative --dir.
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path("bin"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory.path("start"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.path("bin/herald"), withDestinationPath: Fixtures.heraldBinary)
        let path = directory.path("bin") + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let demo = try RunningProgram(
            "/bin/sh", ["-c", "cd '\(directory.path("start"))' && exec herald demo --port 0 --api-port 0 --dir demo"], environment: ["PATH": path])
        let text = await demo.read(until: "Serving until Ctrl-C.")
        #expect(text.contains("Serving until Ctrl-C."), "\(text)")
        let accepted = text.split(separator: "\n").filter { $0.hasPrefix("  accepted  ") }
        #expect(accepted.count == 7, "\(text)")
        #expect(!text.contains("NOT SENT"))

        // The printed command, pasted as it is into a shell in another folder: `herald` as the
        // PATH finds it, absolute paths to the payload it wrote, the key and the CA.
        let start = try #require(text.range(of: "  herald send "), "\(text)")
        let command = text[start.lowerBound...].split(separator: "\n").prefix(3).joined(separator: "\n")
        #expect(command.contains("--p8 \(directory.path("start/demo"))/AuthKey_HERALDDEMO.p8"), "\(command)")
        #expect(command.contains("send \(directory.path("start/demo"))/payload.json"), "\(command)")
        let sent = try await ExternalTools.executeInBackground(
            "/bin/sh", ["-c", "cd / && " + command], environment: ProcessInfo.processInfo.environment.merging(["PATH": path]) { $1 },
            timeout: .seconds(60))
        #expect(sent.status == 0, "\(command)\n\(sent.stderr)")
        #expect(String(decoding: sent.stdout, as: UTF8.self).contains(" accepted apns-id "))

        // The inbox's API holds the seven examples and the pasted one, rendered.
        let inbox = try #require(text.firstMatch(of: /the inbox is (http:\/\/127\.0\.0\.1:\d+\/)/)?.output.1)
        let (page, _) = try await URLSession.shared.data(from: URL(string: "\(inbox)")!)
        #expect(String(decoding: page, as: UTF8.self).contains("<title>Herald inbox</title>"))
        let (data, _) = try await URLSession.shared.data(from: URL(string: "\(inbox)api/v1/notifications")!)
        let values = try await ExternalTools.onOwnThread { try ExternalTools.pythonJSON(Array(data), [
            "d['total']", "sorted(set(n['status'] for n in d['notifications']))",
            "[n['rendered']['title'] for n in d['notifications'] if n['rendered'] and n['rendered']['title']]",
            "[n['rendered']['body'] for n in d['notifications'] if n['rendered'] and n['rendered']['body']]",
        ]) }
        #expect(values[0] == "8")
        #expect(values[1] == "[200]")
        #expect(values[2].contains("\"Game Request\""))
        #expect(values[3].contains("Shelly and Rick have invited you to play Monopoly"), "the demo app's strings: \(values[3])")
        let (french, _) = try await URLSession.shared.data(from: URL(string: "\(inbox)api/v1/devices?lang=fr")!)
        let bodies = try await ExternalTools.onOwnThread { try ExternalTools.pythonJSON(Array(french), [
            "[n['content']['body'] for g in d['devices'][0]['groups'] for n in g['notifications']]", "d['devices'][0]['language']",
        ]) }
        #expect(bodies[0].contains("et Frank vous invitent") && bodies[1] == "\"fr\"", "\(bodies)")

        let (status, rest) = try await demo.stop()
        #expect(status == 0)
        #expect(rest.contains("herald demo: stopped"))
    }

    /// `herald demo --gateway`: the whole path. The examples go through the gateway's REST API
    /// to the mock, each outcome is printed, and the printed `curl` for the gateway works when
    /// pasted (curl is the independent client here).
    @Test func demoWithTheGatewaySubmitsThroughItsAPI() async throws {
        let curl = try ExternalTools.require("curl", package: "curl")
        let directory = try TemporaryDirectory()
        let demo = try RunningProgram(
            Fixtures.heraldBinary, ["demo", "--gateway", "--port", "0", "--api-port", "0", "--gateway-port", "0", "--dir", directory.path("demo")])
        let text = await demo.read(until: "Serving until Ctrl-C.", timeout: .seconds(120))
        let throughGateway = text.split(separator: "\n").filter { $0.hasPrefix("  accepted  ") && $0.contains("(notification ") }
        #expect(throughGateway.count == 7, "\(text)")
        #expect(FileManager.default.fileExists(atPath: directory.path("demo/gateway.db")))
        // The Live Activity: started by push, the update token reported by the mock, three
        // updates and the end, each confirmed by the gateway's view of the activity.
        let activityLines = text.split(separator: "\n").filter { $0.contains("order-1842") }
        #expect(activityLines.filter { $0.hasPrefix("  started   order-1842") && $0.contains("update token ") }.count == 1, "\(text)")
        #expect(activityLines.filter { $0.hasPrefix("  updated   order-1842") }.count == 3, "\(text)")
        #expect(activityLines.filter { $0.hasPrefix("  ended     order-1842") }.count == 1, "\(text)")
        let submit = try #require(text.range(of: "  curl -H 'Authorization: Bearer hgk_demo_"), "\(text)")
        let lines = text[submit.lowerBound...].split(separator: "\n")
        let pasted = String(lines[0] + "\n" + lines[1]).replacingOccurrences(of: "  curl ", with: "\(curl) -s --max-time 20 ")
        let answer = try await ExternalTools.executeInBackground("/bin/sh", ["-c", "cd / && " + pasted], timeout: .seconds(30))
        let created = try JSONSerialization.jsonObject(with: Data(answer.stdout)) as? [String: Any]
        let id = try #require(created?["id"] as? String, "\(pasted)\n\(String(decoding: answer.stdout, as: UTF8.self))")
        let deliveries = String(lines[2]).replacingOccurrences(of: "  curl ", with: "\(curl) -s --max-time 20 ")
            .replacing(/notifications\/[0-9a-f-]+\/deliveries/, with: "notifications/\(id)/deliveries")
        var state = ""
        for _ in 0..<100 where state != "accepted" {
            let listed = try await ExternalTools.executeInBackground("/bin/sh", ["-c", deliveries], timeout: .seconds(30))
            let object = try? JSONSerialization.jsonObject(with: Data(listed.stdout)) as? [String: Any]
            state = ((object?["deliveries"] as? [[String: Any]])?.first?["state"] as? String) ?? ""
            if state != "accepted" { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(state == "accepted", "the pasted submission reached the mock through the gateway")
        // The console's printed address serves it.
        let console = try #require(text.firstMatch(of: /The gateway's console: (http:\/\/127\.0\.0\.1:\d+\/console\/)/)?.output.1, "\(text)")
        let page = try await ExternalTools.executeInBackground(curl, ["-s", "--max-time", "20", String(console)], timeout: .seconds(30))
        #expect(String(decoding: page.stdout, as: UTF8.self).contains("<title>Herald console</title>"))
        let (status, rest) = try await demo.stop()
        #expect(status == 0, "\(rest)")
    }
}
