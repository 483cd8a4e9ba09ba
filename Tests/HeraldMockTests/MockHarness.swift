import Foundation
import HeraldAuth
import HeraldJSON
import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Testing

/// A mock started for one test on free ports, with a provider key registered, and the Python
/// `h2` client (Tests/Fixtures/mock/h2client.py) to drive it.
struct MockHarness {
    static let keyID = try! KeyID("ABC123DEFG")
    static let teamID = try! TeamID("DEF123GHIJ")
    static let token = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"
    static let otherToken = "8a2ba7a6cc4c0e0b27d7e9da4b4d1df1ca5e1d9b0f43a6e3f5b2c6e7d8f9a0b1"

    let server: MockAPNsServer
    let key: ProviderSigningKey
    let directory: TemporaryDirectory

    /// Starts a mock (plaintext unless `tls`), with `key` registered unless `registerKey` is off.
    static func start(tls: Bool = false, registerKey: Bool = true, _ configure: (inout MockConfiguration) -> Void = { _ in }) async throws -> MockHarness {
        let key = ProviderSigningKey.generate(keyID: keyID, teamID: teamID)
        var configuration = MockConfiguration()
        configuration.port = 0
        configuration.apiPort = 0
        configuration.channelPort = 0
        configuration.transport = tls ? .generatedTLS : .plaintext
        if registerKey { configuration.keys = [key.publicKey] }
        configure(&configuration)
        let server = try MockAPNsServer(configuration: configuration)
        try await server.start()
        let directory = try TemporaryDirectory()
        if let pem = server.trustRootPEM { try directory.write("ca.pem", pem) }
        return MockHarness(server: server, key: key, directory: directory)
    }

    func stop() async { await server.stop() }

    /// A device push step: alert to `token` (default ``token``) on `com.example.app`, signed
    /// with the registered key unless `jwt` says otherwise.
    static func push(
        _ body: String = #"{"aps":{"alert":"Hello"}}"#, token: String = token, headers: [(String, String)] = [("apns-topic", "com.example.app"), ("apns-push-type", "alert")],
        jwt: JSONValue? = ["key": "main"], connection: String = "a", method: String = "POST", path: String? = nil
    ) -> JSONValue {
        var object: JSONObject = [
            "connection": .string(connection), "method": .string(method), "path": .string(path ?? "/3/device/\(token)"),
            "headers": .array(headers.map { [.string($0.0), .string($0.1)] }), "body": .string(body),
        ]
        if let jwt { object.members.append(.init(key: "jwt", value: jwt)) }
        return .object(object)
    }

    /// Runs the Python client over `steps`; `port` defaults to the APNs port.
    func python(_ steps: [JSONValue], port: Int? = nil, tls: Bool = false, cert: String? = nil, clientKey: String? = nil, extraKeys: [String: ProviderSigningKey] = [:], timeout: Duration = .seconds(120)) async throws -> PythonRun {
        try ExternalTools.requirePython(modules: "h2", "cryptography", package: "h2 cryptography")
        var keys = JSONObject()
        for (name, signing) in [("main", key)] + extraKeys.sorted(by: { $0.key < $1.key }).map({ ($0.key, $0.value) }) {
            keys.members.append(.init(key: name, value: ["pem": .string(signing.pkcs8PEM), "kid": .string(signing.keyID.rawValue), "iss": .string(signing.teamID.rawValue)]))
        }
        var script: JSONObject = [
            "host": "127.0.0.1", "port": .number(JSONNumber(port ?? server.port)), "tls": .bool(tls), "keys": .object(keys), "steps": .array(steps),
        ]
        if tls { script.members.append(.init(key: "cafile", value: .string(directory.path("ca.pem")))) }
        if let cert { script.members.append(.init(key: "cert", value: .string(cert))) }
        if let clientKey { script.members.append(.init(key: "key", value: .string(clientKey))) }
        var writer = JSONWriter(output: JSONBytes())
        writer.value(.object(script))
        let python = try ExternalTools.require("python3", package: "python3")
        let output = try await ExternalTools.runInBackground(python, [Fixtures.url("mock/h2client.py").path], stdin: writer.output.bytes, timeout: timeout)
        return try PythonRun(json: output)
    }
}

/// What the Python client saw, read with Foundation's `JSONSerialization`.
struct PythonRun {
    struct Answer {
        var status: Int?
        var headers: [(String, String)]
        var body: String
        var error: String?

        func header(_ name: String) -> String? { headers.first { $0.0 == name }?.1 }
        var reason: String? {
            guard let data = body.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
            return object["reason"] as? String
        }
        var bodyObject: [String: Any]? {
            guard let data = body.data(using: .utf8) else { return nil }
            return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        }
    }

    var answers: [Answer]
    var connections: [String: [String: Any]]

    init(json: [UInt8]) throws {
        let object = try JSONSerialization.jsonObject(with: Data(json)) as! [String: Any]
        answers = (object["results"] as! [[String: Any]]).map { item in
            Answer(
                status: item["status"] as? Int,
                headers: (item["headers"] as? [[String]] ?? []).map { ($0[0], $0[1]) },
                body: item["body"] as? String ?? "", error: item["error"] as? String)
        }
        connections = object["connections"] as? [String: [String: Any]] ?? [:]
    }

    func settings(_ connection: String = "a") -> [Int] { connections[connection]?["settings"] as? [Int] ?? [] }
    func goAway(_ connection: String = "a") -> [String: Any]? { connections[connection]?["goaway"] as? [String: Any] }
}

extension JSONValue {
    /// A step that closes a connection, or sleeps.
    static func close(_ connection: String = "a") -> JSONValue { ["connection": .string(connection), "action": "close"] }
}
