import AsyncHTTPClient
import Foundation
import HeraldAuth
@testable import HeraldMock
import HeraldTestSupport
import HeraldProtocol
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing

/// AsyncHTTPClient (the Swift server community's HTTP client, under APNSwift) against the mock:
/// it resets (RST_STREAM CANCEL) a stream whose response body it does not read, after the
/// answer. Those resets are harmless: 10,000 pushes, half of them to unregistered devices (a
/// 410 with a JSON body, left unread), all answered, none cut off by a GOAWAY, each accepted
/// push accepted once.
@Suite struct AsyncHTTPClientTests {
    @Test(.heavy) func tenThousandPushesWithoutReadingTheBodies() async throws {
        let key = ProviderSigningKey.generate(keyID: try KeyID("ABC123DEFG"), teamID: try TeamID("DEF123GHIJ"))
        var configuration = MockConfiguration()
        configuration.port = 0
        configuration.apiPort = nil
        configuration.channelPort = nil
        configuration.transport = .generatedTLS
        configuration.keys = [key.publicKey]
        configuration.storeCapacity = 20_000
        let mock = try MockAPNsServer(configuration: configuration)
        try await mock.start()
        defer { Task { await mock.stop() } }

        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array((mock.trustRootPEM ?? "").utf8)))
        var clientConfiguration = HTTPClient.Configuration(tlsConfiguration: tls)
        clientConfiguration.httpVersion = .automatic
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        let jwt = ProviderToken.sign(with: key, issuedAt: Date()).rawValue
        let total = 10_000
        let tokens = (0..<total).map { "c1" + String(repeating: "0", count: 54) + String(format: "%08x", $0) }
        for (index, token) in tokens.enumerated() where index % 2 == 1 { mock.unregister(try DeviceToken(hex: token)) }

        let statuses = try await withThrowingTaskGroup(of: (String, Int).self) { group in
            var statuses: [String: Int] = [:]
            var next = 0
            func add() {
                let token = tokens[next]
                next += 1
                group.addTask {
                    var request = HTTPClientRequest(url: "https://127.0.0.1:\(mock.port)/3/device/\(token)")
                    request.method = .POST
                    request.headers.add(name: "authorization", value: "bearer \(jwt)")
                    request.headers.add(name: "apns-topic", value: "com.example.app")
                    request.headers.add(name: "apns-push-type", value: "alert")
                    request.body = .bytes(ByteBuffer(string: #"{"aps":{"alert":"AsyncHTTPClient"}}"#))
                    // The body is never read: AsyncHTTPClient resets the stream.
                    let response = try await client.execute(request, timeout: .seconds(60))
                    return (token, Int(response.status.code))
                }
            }
            for _ in 0..<min(100, total) { add() }
            while let (token, status) = try await group.next() {
                statuses[token] = status
                if next < total { add() }
            }
            return statuses
        }
        try await client.shutdown()

        let expected = Dictionary(uniqueKeysWithValues: tokens.enumerated().map { ($1, $0 % 2 == 0 ? 200 : 410) })
        #expect(statuses == expected, "\(statuses.filter { expected[$0.key] != $0.value }.count) answered otherwise than 200 or 410")
        var query = NotificationQuery()
        query.limit = 100_000
        query.accepted = true
        var accepted: [String: Int] = [:]
        for record in try await mock.notifications(query) { accepted[record.deviceToken ?? "", default: 0] += 1 }
        #expect(accepted.count == total / 2 && accepted.values.allSatisfy { $0 == 1 }, "each push accepted once: \(accepted.count) tokens")
        let events = mock.connectionEvents()
        #expect(!events.contains { $0.kind == .goAwaySent }, "no connection was cut off: \(events.filter { $0.kind == .goAwaySent }.map(\.jsonValue))")
        // How many answered streams it reset (AsyncHTTPClient 1.37 resets none here; the python-h2
        // peer in HeraldMockTests resets every answered stream, as reported of APNSwift).
        let metrics = String(decoding: mock.core.metrics.exposition(devices: 0, records: 0), as: UTF8.self)
        let resets = metrics.split(separator: "\n").first { $0.hasPrefix("herald_mock_resets_received_total{stream=\"answered\"}") }
        let count = resets.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) } ?? 0
        print("AsyncHTTPClient: \(total) pushes, bodies unread; the mock saw \(Int(count)) resets of answered streams and sent no GOAWAY")
    }
}
