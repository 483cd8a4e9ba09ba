import Foundation
import HeraldAuth
import HeraldClient
import HeraldMock
import HeraldPayload
import HeraldProtocol
import Synchronization
import Testing

/// A clock two parties share: the mock and the client read the same time, which a test moves.
package final class SharedClock: Sendable {
    private let offset = Mutex<TimeInterval>(0)
    package init() {}
    package func advance(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }
    package var now: Date { Date().addingTimeInterval(offset.withLock { $0 }) }
}

/// A mock APNs server over TLS (a generated CA, a registered key) started for one test, and
/// clients configured to trust it: for the tests of the client, the mock, the commands and the
/// gateway alike.
package struct ClientHarness {
    package static let keyID = try! KeyID("ABC123DEFG")
    package static let teamID = try! TeamID("DEF123GHIJ")
    package static let topic = "com.example.app"

    package let mock: MockAPNsServer
    package let key: ProviderSigningKey

    package init(mock: MockAPNsServer, key: ProviderSigningKey) {
        self.mock = mock
        self.key = key
    }

    package static func start(_ configure: (inout MockConfiguration) -> Void = { _ in }) async throws -> ClientHarness {
        let key = ProviderSigningKey.generate(keyID: keyID, teamID: teamID)
        var configuration = MockConfiguration()
        configuration.port = 0
        configuration.apiPort = nil
        configuration.channelPort = 0
        configuration.transport = .generatedTLS
        configuration.keys = [key.publicKey]
        configuration.storeCapacity = 100_000
        configure(&configuration)
        let mock = try MockAPNsServer(configuration: configuration)
        try await mock.start()
        return ClientHarness(mock: mock, key: key)
    }

    /// A client for the mock: TLS trusting only the mock's CA, token auth with the registered key.
    package func configuration(_ configure: (inout APNsClientConfiguration) -> Void = { _ in }) -> APNsClientConfiguration {
        var configuration = APNsClientConfiguration(
            server: .custom(host: "127.0.0.1", port: mock.port, environment: mock.configuration.environment), credentials: .token(key))
        configuration.additionalTrustRootsPEM = mock.trustRootPEM.map { [$0] } ?? []
        configuration.trustsSystemRoots = false
        configuration.channelManagementHost = "127.0.0.1"
        configuration.channelManagementPort = mock.channelPort
        // Room for a loaded machine: tests of deadlines set their own.
        configuration.requestTimeout = .seconds(60)
        configure(&configuration)
        return configuration
    }

    package func client(_ configure: (inout APNsClientConfiguration) -> Void = { _ in }) throws -> APNsClient {
        try APNsClient(configuration: configuration(configure))
    }

    package func stop() async { await mock.stop() }

    /// `count` distinct device tokens.
    package static func tokens(_ count: Int, salt: UInt8 = 0) -> [DeviceToken] {
        (0..<count).map { index in
            var bytes = [UInt8](repeating: salt, count: 32)
            withUnsafeBytes(of: UInt32(index).bigEndian) { bytes.replaceSubrange(28..<32, with: $0) }
            bytes[0] = 0xA0 | salt
            return try! DeviceToken(bytes: bytes)
        }
    }

    package static let alert = Payload.alert(title: "Hello", body: "From the client tests")

    package static func request(to token: DeviceToken, payload: Payload = alert) -> APNsRequest {
        try! APNsRequest(payload: payload, to: token, topic: topic)
    }

    /// Sends to every token at once (as many tasks), and returns each token's outcome.
    /// Sends to every token at once: through ``APNsClient/outcome(of:timeout:)`` in a task each,
    /// or (`throughCompletions`) through the completion-handler `send`, every completion kept,
    /// so that one called twice shows as a second outcome.
    package static func sendAll(
        _ client: APNsClient, to tokens: [DeviceToken], throughCompletions: Bool = false
    ) async -> [(DeviceToken, Result<APNsResponse, APNsClientError>)] {
        if throughCompletions {
            let collected = Mutex<(results: [(DeviceToken, Result<APNsResponse, APNsClientError>)], waiter: CheckedContinuation<Void, Never>?)>(([], nil))
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                collected.withLock { $0.waiter = done }
                for token in tokens {
                    client.send(request(to: token)) { result in
                        let waiter = collected.withLock { state -> CheckedContinuation<Void, Never>? in
                            state.results.append((token, result))
                            guard state.results.count == tokens.count else { return nil }
                            defer { state.waiter = nil }
                            return state.waiter
                        }
                        waiter?.resume()
                    }
                }
            }
            // A completion called twice would come soon after the last: it is waited for.
            try? await Task.sleep(for: .milliseconds(200))
            return collected.withLock { $0.results }
        }
        return await withTaskGroup(of: (DeviceToken, Result<APNsResponse, APNsClientError>).self) { group in
            for token in tokens {
                group.addTask { (token, await client.outcome(of: request(to: token))) }
            }
            var results: [(DeviceToken, Result<APNsResponse, APNsClientError>)] = []
            for await result in group { results.append(result) }
            return results
        }
    }

    /// The invariant every fault test checks: each request has exactly one outcome; each
    /// accepted apns-id is among the mock's accepted records for that token; the mock accepted
    /// nothing the client does not know of (an apns-id seen twice is a resend, counted).
    /// Returns the number of duplicate deliveries.
    @discardableResult
    package func checkAgreement(_ outcomes: [(DeviceToken, Result<APNsResponse, APNsClientError>)], expectedCount: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int {
        #expect(outcomes.count == expectedCount, "one outcome per request", sourceLocation: sourceLocation)
        #expect(Set(outcomes.map(\.0)).count == expectedCount, "no token has two outcomes", sourceLocation: sourceLocation)
        var query = NotificationQuery()
        query.limit = 1_000_000
        let records = try await mock.notifications(query).filter { $0.kind == .device }
        var acceptedByID: [String: Int] = [:]
        for record in records where record.isAccepted {
            if let id = record.apnsID { acceptedByID[id, default: 0] += 1 }
        }
        var clientAccepted = Set<String>()
        for (token, outcome) in outcomes {
            if case .success(let response) = outcome {
                clientAccepted.insert(response.apnsID)
                #expect(acceptedByID[response.apnsID] != nil, "the mock accepted \(response.apnsID) for \(token.hex.prefix(8))", sourceLocation: sourceLocation)
            }
        }
        let unknown = Set(acceptedByID.keys).subtracting(clientAccepted).count
        #expect(unknown == 0, "the mock accepted requests the client reported as failed", sourceLocation: sourceLocation)
        return acceptedByID.values.reduce(0) { $0 + $1 - 1 }
    }
}

extension Result {
    package var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
