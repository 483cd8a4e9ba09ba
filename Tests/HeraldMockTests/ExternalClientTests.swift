import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HeraldAuth
import HeraldJSON
import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Testing

/// The mock driven by curl (over TLS trusting the generated CA, and with prior knowledge) and by
/// h2load, and `herald mock` as a user starts it.
@Suite(.serialized) struct ExternalClientTests {
    typealias H = MockHarness

    static func curl(_ arguments: [String]) async throws -> (status: Int, headers: String, body: String) {
        let curl = try ExternalTools.require("curl", package: "curl")
        let output = try await ExternalTools.runInBackground(curl, ["-s", "-S", "-i", "--max-time", "20"] + arguments, timeout: .seconds(30))
        let text = String(decoding: output, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let head = parts.first ?? ""
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? -1
        return (status, head, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    @Test func curlOverTLSTrustingTheGeneratedCA() async throws {
        let mock = try await H.start(tls: true)
        defer { Task { await mock.stop() } }
        let jwt = ProviderToken.sign(with: mock.key, issuedAt: Date()).rawValue
        let url = "https://localhost:\(mock.server.port)/3/device/\(H.token)"
        let common = ["--http2", "--cacert", mock.directory.path("ca.pem"), "-H", "authorization: bearer \(jwt)", "-H", "apns-push-type: alert"]
        let ok = try await Self.curl(common + ["-H", "apns-topic: com.example.app", "-d", #"{"aps":{"alert":"Hi"}}"#, url])
        #expect(ok.status == 200 && ok.headers.hasPrefix("HTTP/2 200"))
        #expect(ok.headers.lowercased().contains("apns-id: "))
        let bad = try await Self.curl(common + ["-d", #"{"aps":{"alert":"Hi"}}"#, url])
        #expect(bad.status == 400 && bad.body == #"{"reason":"MissingTopic"}"#)
        // By IP address too: the certificate names 127.0.0.1.
        let byIP = try await Self.curl(common + ["-H", "apns-topic: com.example.app", "-d", "{\"aps\":{}}", "https://127.0.0.1:\(mock.server.port)/3/device/\(H.token)"])
        #expect(byIP.status == 200)
        // Without the CA, curl refuses the server.
        let curl = try ExternalTools.require("curl", package: "curl")
        let untrusted = try await ExternalTools.executeInBackground(curl, ["-s", "--http2", "--max-time", "10", "-d", "{}", url], timeout: .seconds(20))
        #expect(untrusted.status == 60, "curl: peer certificate cannot be authenticated")
    }

    @Test func curlWithPriorKnowledgeAndTLS12() async throws {
        let plain = try await H.start()
        let jwt = ProviderToken.sign(with: plain.key, issuedAt: Date()).rawValue
        let answer = try await Self.curl([
            "--http2-prior-knowledge", "-H", "authorization: bearer \(jwt)", "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert",
            "-H", "apns-expiration: 0", "-H", "apns-priority: 5", "-d", #"{"aps":{"alert":"Hi"}}"#, "http://127.0.0.1:\(plain.server.port)/3/device/\(H.token)",
        ])
        await plain.stop()
        #expect(answer.status == 200)
        let tls = try await H.start(tls: true)
        defer { Task { await tls.stop() } }
        let jwt2 = ProviderToken.sign(with: tls.key, issuedAt: Date()).rawValue
        let twelve = try await Self.curl([
            "--http2", "--tlsv1.2", "--tls-max", "1.2", "--cacert", tls.directory.path("ca.pem"), "-H", "authorization: bearer \(jwt2)",
            "-H", "apns-topic: com.example.app", "-d", #"{"aps":{"alert":"Hi"}}"#, "https://localhost:\(tls.server.port)/3/device/\(H.token)",
        ])
        #expect(twelve.status == 200)
    }

    @Test func curlWithAClientCertificate() async throws {
        let mock = try await H.start(tls: true) { $0.authentication = .certificate(trustRoots: [], acceptsAnyCertificate: false) }
        defer { Task { await mock.stop() } }
        let issued = try #require(mock.server.certificateAuthority).issueClientCertificate(bundleID: "com.example.app", environments: [.sandbox])
        try mock.directory.write("client.pem", issued.certificatePEM)
        try mock.directory.write("client-key.pem", issued.privateKeyPEM)
        let answer = try await Self.curl([
            "--http2", "--cacert", mock.directory.path("ca.pem"), "--cert", mock.directory.path("client.pem"), "--key", mock.directory.path("client-key.pem"),
            "-H", "apns-topic: com.example.app.voip", "-H", "apns-push-type: voip", "-d", #"{"aps":{}}"#,
            "https://localhost:\(mock.server.port)/3/device/\(H.token)",
        ])
        #expect(answer.status == 200)
    }

    @Test(.heavy) func h2loadGetsOnlySuccesses() async throws {
        let h2load = try ExternalTools.require("h2load", package: "nghttp2-client")
        let mock = try await H.start(tls: true)
        defer { Task { await mock.stop() } }
        try mock.directory.write("payload.json", #"{"aps":{"alert":{"title":"Load","body":"test"}}}"#)
        let jwt = ProviderToken.sign(with: mock.key, issuedAt: Date()).rawValue
        let output = try await ExternalTools.runInBackground(h2load, [
            "-n", "2000", "-c", "2", "-m", "20", "-d", mock.directory.path("payload.json"),
            "-H", "authorization: bearer \(jwt)", "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert",
            "https://127.0.0.1:\(mock.server.port)/3/device/\(H.token)",
        ], timeout: .seconds(120))
        let text = String(decoding: output, as: UTF8.self)
        #expect(text.contains("2000 succeeded, 0 failed, 0 errored"), "\(text)")
        #expect(text.contains("status codes: 2000 2xx"), "\(text)")
        #expect(text.contains("Application protocol: h2"))
        var everything = NotificationQuery()
        everything.limit = 5000
        #expect(try await mock.server.notifications(everything).count == 2000)
    }

    /// 30,000 requests on eight connections at once, then the API paged with `before` as its
    /// documentation says: every record once, none missed, none twice (ids were taken before
    /// the records were stored, so list order was not id order: 57 missed and one repeated).
    @Test(.heavy, arguments: [false, true])
    func pagingUnderConcurrentConnectionsMissesNothing(database: Bool) async throws {
        let h2load = try ExternalTools.require("h2load", package: "nghttp2-client")
        let directory = try TemporaryDirectory()
        let mock = try await H.start { configuration in
            configuration.storeCapacity = 40_000
            if database {
                configuration.databasePath = directory.path("mock.db")
                configuration.databaseKeepCount = 40_000
            }
        }
        defer { Task { await mock.stop() } }
        try mock.directory.write("payload.json", #"{"aps":{"alert":"Paging"}}"#)
        let jwt = ProviderToken.sign(with: mock.key, issuedAt: Date()).rawValue
        let total = database ? 10_000 : 30_000
        let output = try await ExternalTools.runInBackground(h2load, [
            "-n", String(total), "-c", "8", "-m", "50", "-d", mock.directory.path("payload.json"),
            "-H", "authorization: bearer \(jwt)", "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert",
            "http://127.0.0.1:\(mock.server.port)/3/device/\(H.token)",
        ], timeout: .seconds(300))
        let text = String(decoding: output, as: UTF8.self)
        #expect(text.contains("\(total) succeeded"), "\(text)")
        let apiPort = try #require(mock.server.apiPort)
        var seen: [Int] = []
        var before: Int?
        while true {
            let url = URL(string: "http://127.0.0.1:\(apiPort)/api/v1/notifications?limit=1000" + (before.map { "&before=\($0)" } ?? ""))!
            let (data, _) = try await URLSession.shared.data(from: url)
            let page = try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["notifications"] as? [[String: Any]])
            let ids = page.compactMap { $0["id"] as? Int }
            let newestFirst = zip(ids, ids.dropFirst()).allSatisfy { $0 > $1 }
            #expect(newestFirst, "the page from id \(ids.first ?? 0) is newest first")
            if ids.isEmpty { break }
            seen += ids
            before = ids.last
        }
        #expect(seen.count == total && Set(seen).count == total, "\(seen.count) records, \(Set(seen).count) distinct, of \(total)")
        #expect(Set(seen) == Set(1...total), "ids 1 to \(total), each once")
    }

    @Test func heraldMockCommandStartsPrintsAndStopsOnSIGTERM() async throws {
        let herald = Fixtures.heraldBinary
        let directory = try TemporaryDirectory()
        let mock = try RunningProgram(herald, ["mock", "--port", "0", "--api-port", "0", "--channel-port", "0", "--ca-out", directory.path("ca.pem"), "--fault", "status=503,topic=broken.app"])
        // Read the banner until the curl example's last line.
        let banner = await mock.read(until: "/3/device/", timeout: .seconds(30))
        #expect(banner.contains("herald mock \(HeraldVersion.description): sandbox APNs on https://127.0.0.1:"), "\(banner)")
        #expect(banner.contains("NOT verified"), "no --key: the start-up says signatures are not checked")
        #expect(banner.contains("fault 1    status=503/ServiceUnavailable,topic=broken.app"))
        #expect(FileManager.default.fileExists(atPath: directory.path("ca.pem")))
        // The printed curl command works as pasted (run through sh).
        let start = try #require(banner.range(of: "curl --http2"))
        let command = String(banner[start.lowerBound...]).trimmingCharacters(in: .whitespacesAndNewlines)
        let sh = try await ExternalTools.executeInBackground("/bin/sh", ["-c", command.replacingOccurrences(of: "curl --http2", with: "curl -s -o /dev/null -w %{http_code} --max-time 10 --http2")], timeout: .seconds(30))
        #expect(String(decoding: sh.stdout, as: UTF8.self) == "200", "\(command)\n\(sh.stderr)")
        let (status, rest) = try await mock.stop()
        #expect(status == 0)
        #expect(rest.contains("herald mock: stopped"))

        // Installed (`herald` on the PATH), started in one folder with relative paths and a
        // provider key: the curl command signs with `herald token` and works pasted elsewhere.
        let key = ProviderSigningKey.generate(keyID: try KeyID("ABC123DEFG"), teamID: try TeamID("DEF123GHIJ"))
        try directory.write("start/AuthKey_ABC123DEFG.p8", key.pkcs8PEM)
        try FileManager.default.createDirectory(atPath: directory.path("bin"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.path("bin/herald"), withDestinationPath: herald)
        let path = directory.path("bin") + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let keyed = try RunningProgram("/bin/sh", ["-c", """
            cd '\(directory.path("start"))' && exec herald mock --port 0 --api-port 0 --channel-port 0 --ca-out ca.pem \
                --key AuthKey_ABC123DEFG.p8 --key-id ABC123DEFG --team-id DEF123GHIJ
            """], environment: ["PATH": path])
        let keyedBanner = await keyed.read(until: "/3/device/", timeout: .seconds(30))
        let keyedStart = try #require(keyedBanner.range(of: "curl --http2"), "\(keyedBanner)")
        let keyedCommand = String(keyedBanner[keyedStart.lowerBound...]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(keyedCommand.contains("--cacert \(directory.path("start/ca.pem"))"), "\(keyedCommand)")
        #expect(keyedCommand.contains("$(herald token --p8 \(directory.path("start/AuthKey_ABC123DEFG.p8")) --key-id ABC123DEFG"), "\(keyedCommand)")
        let pasted = try await ExternalTools.executeInBackground(
            "/bin/sh", ["-c", "cd / && " + keyedCommand.replacingOccurrences(of: "curl --http2", with: "curl -s -o /dev/null -w %{http_code} --max-time 10 --http2")],
            environment: ProcessInfo.processInfo.environment.merging(["PATH": path]) { $1 }, timeout: .seconds(30))
        #expect(String(decoding: pasted.stdout, as: UTF8.self) == "200", "\(keyedCommand)\n\(pasted.stderr)")
        _ = try await keyed.stop()
    }

    @Test func heraldMockReadsAConfigFile() async throws {
        let directory = try TemporaryDirectory()
        try directory.write("mock.json", """
            {"port": 0, "apiPort": 0, "channelPort": 0, "plaintext": true, "strict": true, "environment": "production",
             "faults": ["status=503,topic=broken.app"], "storeLimit": 50, "idleTimeout": 30}
            """)
        let program = try RunningProgram(Fixtures.heraldBinary, ["mock", "--config", directory.path("mock.json"), "--fault", "hang,topic=slow.app"])
        defer { program.process.terminate() }
        let banner = await program.read(until: "--http2-prior-knowledge", timeout: .seconds(30))
        #expect(banner.contains("herald mock \(HeraldVersion.description): production APNs on http://127.0.0.1:"), "\(banner)")
        #expect(banner.contains("strict     on"))
        #expect(banner.contains("fault 1    status=503/ServiceUnavailable,topic=broken.app"))
        #expect(banner.contains("fault 2    hang,topic=slow.app"), "flags add to the file's rules")
        #expect(banner.contains("--http2-prior-knowledge"))
    }

    @Test func heraldMockRejectsBadFlagsClearly() async throws {
        let cases: [([String], String)] = [
            (["--environment", "staging"], "sandbox or production"),
            (["--key", "/nonexistent.p8", "--key-id", "ABC123DEFG", "--team-id", "DEF123GHIJ"], "/nonexistent.p8"),
            (["--key", "a.p8"], "--key-id and --team-id"),
            (["--fault", "status=999"], "between 200 and 599"),
            (["--unregistered", "xyz"], "--unregistered 'xyz'"),
            (["--plaintext", "--auth", "certificate"], "needs TLS"),
            (["--config", "/nonexistent.json"], "cannot read '/nonexistent.json'"),
            (["--idle-timeout", "0"], "--idle-timeout must be a number of seconds above 0"),
            (["--idle-timeout", "1e300"], "at most 86400"),
            (["--db", "/nonexistent/x.db", "--db-max-age", "1e300"], "at most 876000"),
            (["--store-limit", "0"], "--store-limit must be at least 1"),
        ]
        for (arguments, message) in cases {
            let result = try await ExternalTools.executeInBackground(Fixtures.heraldBinary, ["mock", "--port", "0", "--api-port", "0"] + arguments, timeout: .seconds(30))
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        let directory = try TemporaryDirectory()
        try directory.write("bad.json", "{\"port\": \"eighty\"}")
        let result = try await ExternalTools.executeInBackground(Fixtures.heraldBinary, ["mock", "--config", directory.path("bad.json")], timeout: .seconds(30))
        #expect(result.status == 2 && result.stderr.contains("\"port\" must be a whole number"), "\(result.stderr)")
    }
}
