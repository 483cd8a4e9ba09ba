import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HeraldAuth
@testable import HeraldGateway
import HeraldJSON
import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Testing

/// A herald mock (APNs) and a gateway sending to it, both in this process, for one test.
struct GatewayHarness {
    static let adminKey = "test-admin-key-0123456789"
    static let keyID = try! KeyID("ABC123DEFG")
    static let teamID = try! TeamID("DEF123GHIJ")
    static let bundleID = "com.example.app"

    let mock: MockAPNsServer
    let gateway: GatewayServer
    let key: ProviderSigningKey
    let port: Int
    let keep: [any Sendable]

    enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }

        /// The backends a parameterized test runs on here: PostgreSQL only where it is
        /// configured (or under CI, where its absence fails). A case that cancelled itself
        /// would be reported as passed; `PostgresAvailabilityTests` reports the skip instead.
        static var available: [Backend] { PostgresTestDatabase.isAvailable ? allCases : [.sqlite] }
    }

    static func start(
        _ backend: Backend = .sqlite, mock configureMock: (inout MockConfiguration) -> Void = { _ in },
        gateway configureGateway: (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws -> GatewayHarness {
        let key = ProviderSigningKey.generate(keyID: keyID, teamID: teamID)
        let mock = try await startMock(key: key, configureMock)

        var keep: [any Sendable] = []
        let database: GatewayConfiguration.Database
        switch backend {
        case .sqlite:
            let directory = try TemporaryDirectory()
            keep.append(directory)
            database = .sqlite(path: directory.path("gateway.db"))
        case .postgres:
            let postgres = try await PostgresTestDatabase()
            keep.append(postgres)
            database = .postgres(url: postgres.url)
        }
        var configuration = GatewayConfiguration(database: database)
        configuration.port = 0
        configuration.adminKey = adminKey
        configuration.pollInterval = .milliseconds(50)
        // Room for a loaded machine: a request unanswered past its deadline is sent again (its
        // answer may only be late), and a test counting each push once would see it twice.
        configuration.requestTimeout = .seconds(30)
        configuration.claimLease = .seconds(40)
        configuration.retry = GatewayRetryPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200))
        // The access log's lines (info) would fill the test log; what tests count they record.
        configuration.logger.logLevel = .notice
        configureGateway(&configuration)
        let gateway = try await GatewayServer.open(configuration: configuration)
        try await gateway.start()
        return GatewayHarness(mock: mock, gateway: gateway, key: key, port: gateway.port ?? 0, keep: keep)
    }

    /// A mock over TLS (a CA of its own) that knows `key`, started.
    static func startMock(key: ProviderSigningKey, _ configure: (inout MockConfiguration) -> Void = { _ in }) async throws -> MockAPNsServer {
        var configuration = MockConfiguration()
        configuration.port = 0
        configuration.apiPort = nil
        configuration.channelPort = nil
        configuration.transport = .generatedTLS
        configuration.keys = [key.publicKey]
        configuration.storeCapacity = 200_000
        configure(&configuration)
        let mock = try MockAPNsServer(configuration: configuration)
        try await mock.start()
        return mock
    }

    func stop() async {
        await gateway.stop()
        await mock.stop()
    }

    /// The app definition that sends to this harness's mock with its registered key.
    func appDefinition(id: String? = nil, extra: String = "", key signingKey: ProviderSigningKey? = nil, trustsMock: Bool = true) -> String {
        let pem = (mock.trustRootPEM ?? "").replacingOccurrences(of: "\n", with: "\\n")
        let used = signingKey ?? key
        return """
            {\(id.map { "\"id\":\"\($0)\"," } ?? "")"bundleId":"\(Self.bundleID)","environment":"sandbox",
             "server":{"host":"127.0.0.1","port":\(mock.port)\(trustsMock ? ",\"caCertificate\":\"\(pem)\"" : "")},
             "token":\(Self.tokenJSON(used))\(extra)}
            """
    }

    /// `{"key", "keyId", "teamId"}` of a signing key, as an app definition gives it.
    static func tokenJSON(_ key: ProviderSigningKey) -> String {
        let keyPEM = key.pkcs8PEM.replacingOccurrences(of: "\n", with: "\\n")
        return #"{"key":"\#(keyPEM)","keyId":"\#(key.keyID)","teamId":"\#(key.teamID)"}"#
    }

    /// Registers the app (as the administrator).
    func registerApp(id: String? = nil, extra: String = "") async throws {
        let (status, body) = try await call("POST", "/v1/apps", appDefinition(id: id, extra: extra))
        #expect(status == 201, "\(String(describing: body?.root.value))")
    }

    /// An HTTP call to the gateway: the status and the JSON answer.
    @discardableResult
    func call(_ method: String, _ path: String, _ body: String? = nil, key: String? = adminKey, headers: [String: String] = [:]) async throws -> (Int, JSONDocument?) {
        let (status, data, _) = try await raw(method, path, body, key: key, headers: headers)
        return (status, try? JSONDocument(parsing: data))
    }

    func raw(_ method: String, _ path: String, _ body: String? = nil, key: String? = adminKey, headers: [String: String] = [:]) async throws -> (Int, [UInt8], HTTPURLResponse?) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.timeoutInterval = 60
        if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        return (http?.statusCode ?? 0, Array(data), http)
    }

    /// Submits a notification; the job's id.
    func submit(_ payload: String = #"{"aps":{"alert":"Hello"}}"#, tokens: [DeviceToken], extra: String = "", app: String = bundleID, idempotencyKey: String? = nil) async throws -> String {
        let body = #"{"payload":\#(payload),"tokens":[\#(tokens.map { "\"\($0.hex)\"" }.joined(separator: ","))]\#(extra)}"#
        let (status, document) = try await call("POST", "/v1/apps/\(app)/notifications", body, headers: idempotencyKey.map { ["Idempotency-Key": $0] } ?? [:])
        #expect(status == 202, "\(String(describing: document?.root.value))")
        return try #require(document?.root["id"]?.stringValue)
    }

    /// Waits (up to `timeout`) until the job has nothing queued or claimed; its summary.
    func waitUntilDone(_ job: String, app: String = bundleID, timeout: Duration = .seconds(60)) async throws -> JSONDocument {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (_, document) = try await call("GET", "/v1/apps/\(app)/notifications/\(job)")
            if document?.root["status"]?.stringValue == "done" { return try #require(document) }
            if ContinuousClock.now > deadline {
                Issue.record("job \(job) not done in \(timeout): \(String(describing: document?.root.value))")
                return try #require(document)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Every delivery of a job.
    func deliveries(_ job: String, app: String = bundleID) async throws -> [JSONDocument.Node] {
        var all: [JSONDocument.Node] = []
        var after: String?
        repeat {
            let (_, document) = try await call("GET", "/v1/apps/\(app)/notifications/\(job)/deliveries?limit=10000" + (after.map { "&after=\($0)" } ?? ""))
            let page = document?.root["deliveries"].map { Array($0.elements) } ?? []
            all += page
            after = document?.root["next"]?.int64Value.map(String.init)
        } while after != nil
        return all
    }

    static func tokens(_ count: Int, salt: UInt8 = 0) -> [DeviceToken] {
        (0..<count).map { index in
            var bytes = [UInt8](repeating: salt, count: 32)
            withUnsafeBytes(of: UInt32(index).bigEndian) { bytes.replaceSubrange(28..<32, with: $0) }
            bytes[0] = 0xC0 | (salt & 0x0F)
            return try! DeviceToken(bytes: bytes)
        }
    }
}
