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
/// h2load (`herald mock` as a user starts it: HeraldCLITests' MockCommandTests).
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
}
