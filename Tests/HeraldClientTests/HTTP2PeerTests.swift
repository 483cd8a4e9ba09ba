import Foundation
import HeraldAuth
@testable import HeraldClient
import HeraldJSON
import HeraldPayload
import HeraldProtocol
import HeraldTestSupport
import HeraldHarness
import Testing

/// The client's HTTP/2 against servers that are not Herald's: Python's h2 (which checks every
/// frame and header block) answering in the ways the protocol allows, and nghttp2's nghttpd.
@Suite(.serialized) struct HTTP2PeerTests {
    static let payload = Array(#"{"aps":{"alert":{"title":"Peer","body":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 1_000) + Array(#""}}}"#.utf8)

    static func token(_ number: Int) -> DeviceToken {
        try! DeviceToken(hex: String(repeating: "ab", count: 31) + String(format: "%02x", number))
    }

    @Test func pythonH2AgreesWithEveryFrameAndHeaderBlock() async throws {
        try ExternalTools.requirePython(modules: "h2", package: "h2")
        let peer = try await ConnectionTests.Proxy.start(script: "client/h2_peer_server.py")
        var configuration = APNsClientConfiguration(
            server: .custom(host: "127.0.0.1", port: peer.port),
            credentials: .token(.generate(keyID: ClientHarness.keyID, teamID: ClientHarness.teamID)))
        configuration.plaintext = true
        configuration.maximumConnections = 1
        configuration.requestTimeout = .seconds(60)  // a pure-Python peer on a loaded machine
        configuration.retry = .init(maximumAttempts: 3, initialBackoff: .milliseconds(10))
        let client = try APNsClient(configuration: configuration)
        let requests = (0..<30).map { number in
            APNsRequest(
                headers: APNsRequestHeaders(
                    target: .device(Self.token(number)), pushType: .alert, topic: "com.example.app", apnsID: .random()),
                body: Self.payload)
        }
        let outcomes = await withTaskGroup(of: (Int, Result<APNsResponse, APNsClientError>).self) { group in
            for (number, request) in requests.enumerated() {
                group.addTask { (number, await client.outcome(of: request)) }
            }
            var outcomes: [Int: Result<APNsResponse, APNsClientError>] = [:]
            for await (number, outcome) in group { outcomes[number] = outcome }
            return outcomes
        }
        await client.shutdown()
        let lines = await peer.stop().split(separator: "\n").compactMap { line in try? JSONDocument(parsing: Array(line.utf8)) }
        let events = lines.map { $0.root["event"]?.stringValue ?? "" }

        #expect(!events.contains("error"), "h2 found no protocol error: \(lines.filter { $0.root["event"]?.stringValue == "error" }.map { $0.root["reason"]?.stringValue ?? "" })")
        #expect(outcomes.count == 30, "one outcome per request")
        // Which connection answered each apns-id last: the first answers by script, later ones 200.
        var answeredOn: [String: Int64] = [:]
        var timesReceived: [String: Int] = [:]
        for line in lines where line.root["event"]?.stringValue == "request" {
            let id = line.root["headers"]?.elements.first { $0[0]?.stringValue == "apns-id" }?[1]?.stringValue ?? ""
            answeredOn[id] = line.root["connection"]?.int64Value
            timesReceived[id, default: 0] += 1
        }
        for (number, request) in requests.enumerated() {
            let apnsID = request.headers.apnsID!.uuidString
            let scripted = answeredOn[apnsID] == 1
            switch (scripted ? number % 5 : 0, outcomes[number]) {
            case (2, .failure(let error)?):
                #expect(error.kind == .rejected && error.reason == .badDeviceToken && error.status == 400, "request \(number): \(error)")
            case (2, let other):
                Issue.record("request \(number): expected BadDeviceToken, got \(String(describing: other))")
            case (let kind, .success(let response)?):
                #expect(response.apnsID == apnsID && response.status == 200, "request \(number)")
                if kind == 4 { #expect(timesReceived[apnsID] == 2, "request \(number): refused once, then sent again") }
            case (_, let other):
                Issue.record("request \(number): expected 200, got \(String(describing: other))")
            }
        }
        #expect(answeredOn.values.filter { $0 == 1 }.count >= 10, "the first connection answered at least ten by script")

        // What h2 decoded is what the client meant to send, every time.
        let received = lines.filter { $0.root["event"]?.stringValue == "request" }
        #expect(received.count >= 30, "every request reached the server (refused and unprocessed ones again)")
        var seenIDs = Set<String>()
        for line in received {
            let fields: [(String, String)] = line.root["headers"].map { list in
                list.elements.map { pair in (pair[0]?.stringValue ?? "", pair[1]?.stringValue ?? "") }
            } ?? []
            let names = fields.map { $0.0 }
            #expect(Array(names.prefix(4)) == [":method", ":scheme", ":path", ":authority"], "pseudo-headers first: \(names)")
            let value = { (name: String) in fields.first { $0.0 == name }?.1 }
            #expect(value(":method") == "POST" && value(":scheme") == "http" && value(":authority") == "127.0.0.1")
            #expect(value("apns-topic") == "com.example.app" && value("apns-push-type") == "alert")
            #expect(value("authorization")?.hasPrefix("bearer ey") == true)
            let id = value("apns-id") ?? ""
            seenIDs.insert(id)
            let number = requests.firstIndex { $0.headers.apnsID?.uuidString == id }
            #expect(number != nil, "apns-id \(id) is one the client sent")
            if let number {
                #expect(value(":path") == "/3/device/" + Self.token(number).hex)
            }
            #expect(line.root["length"]?.int64Value == Int64(Self.payload.count), "the body arrived whole through 300-byte windows")
        }
        #expect(seenIDs.count == 30)
        #expect(events.contains("ping-acked"), "the client answered the server's PING")
        let acknowledged = lines.filter { $0.root["event"]?.stringValue == "settings-acked" }
        #expect(acknowledged.contains { $0.root["settings"]?["1"]?.int64Value == 128 && $0.root["settings"]?["3"]?.int64Value == 2 },
                "the client acknowledged the SETTINGS sent mid-connection")
        #expect(events.filter { $0 == "connection" }.count >= 2, "after GOAWAY the unprocessed requests went over a new connection")
    }

    @Test func nghttpdOverTLSWithALPN() async throws {
        let nghttpd = try ExternalTools.require("nghttpd", package: "nghttp2-server")
        let openssl = try ExternalTools.require("openssl", package: "openssl")
        let directory = try TemporaryDirectory()
        _ = try await ExternalTools.runInBackground(openssl, [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
            "-keyout", directory.path("server.key"), "-out", directory.path("server.pem"),
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        ])
        let tokens = (0..<200).map { Self.token($0 % 250) }
        for token in tokens.prefix(199) { try directory.write("root/3/device/\(token.hex)", "") }
        let port = Int(String(decoding: try await ExternalTools.onOwnThread { try ExternalTools.python(
            "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])") }, as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let process = try RunningProgram(nghttpd, [
            "-d", directory.path("root"), "\(port)", directory.path("server.key"), directory.path("server.pem"),
        ])
        defer { process.process.terminate() }
        try await Self.waitUntilListening(port)

        var configuration = APNsClientConfiguration(
            server: .custom(host: "127.0.0.1", port: port),
            credentials: .token(.generate(keyID: ClientHarness.keyID, teamID: ClientHarness.teamID)))
        configuration.additionalTrustRootsPEM = [String(decoding: try directory.read("server.pem"), as: UTF8.self)]
        configuration.trustsSystemRoots = false
        configuration.retry = .never
        let client = try APNsClient(configuration: configuration)
        var accepted = 0
        var rejected: [APNsClientError] = []
        for await outcome in client.send(APNsRequest(headers: APNsRequestHeaders(pushType: .alert, topic: "com.example.app"), body: Self.payload), to: tokens) {
            switch outcome.result {
            case .success(let response): accepted += response.status == 200 ? 1 : 0
            case .failure(let error): rejected.append(error)
            }
        }
        await client.shutdown()
        #expect(accepted == 199)
        #expect(rejected.count == 1)
        if let error = rejected.first {
            #expect(error.kind == .rejected && error.status == 404 && error.reason == nil, "\(error)")
            #expect(String(decoding: error.body ?? [], as: UTF8.self).contains("404"), "a body that is not APNs JSON is kept")
        }
    }

    /// Waits (up to 20 s) until something accepts TCP connections on 127.0.0.1:`port`.
    static func waitUntilListening(_ port: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(descriptor)
            if connected == 0 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("nothing listens on port \(port)")
    }
}
