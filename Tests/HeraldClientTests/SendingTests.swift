import Foundation
import HeraldAuth
@testable import HeraldClient
import HeraldJSON
import HeraldLint
import HeraldMock
import HeraldPayload
import HeraldProtocol
import HeraldHarness
import Testing

/// Sending to the mock over TLS: the answers, the request model on the wire, limits, lint.
@Suite(.serialized) struct SendingTests {
    @Test func sendsAnAlertInThreeLines() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        let client = try harness.client()
        let token = ClientHarness.tokens(1)[0]

        let response = try await client.send(.alert(title: "Hello", body: "World"), to: token, topic: ClientHarness.topic)

        #expect(response.status == 200)
        #expect(APNsID.isCanonical(response.apnsID), "the client gives every request a lowercase apns-id")
        #expect(response.uniqueID != nil, "the sandbox answers with apns-unique-id")
        let record = try #require(try await harness.mock.notification(id: response.apnsID))
        #expect(record.deviceToken == token.hex)
        #expect(record.topic == ClientHarness.topic)
        #expect(record.body == (try Payload.alert(title: "Hello", body: "World").encode()), "the body is the payload's exact bytes")
        #expect(record.uniqueID == response.uniqueID)
        let fields = Dictionary(record.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(fields["apns-push-type"] == "alert")
        #expect(fields["authorization"]?.hasPrefix("bearer ") == true)
        await client.shutdown()
    }

    /// Durations too long for NIO's nanoseconds mean "no limit", not an overflow trap.
    @Test func durationsBeyondNanosecondsAreNoLimit() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        let client = try harness.client {
            $0.requestTimeout = .seconds(Int64.max)
            $0.connectTimeout = .seconds(Int64.max / 2)
            $0.idleTimeout = .seconds(Int64.max)
            $0.pingInterval = .seconds(Int64.max)
        }
        let response = try await client.send(.alert(title: "Hello", body: "World"), to: ClientHarness.tokens(1)[0], topic: ClientHarness.topic)
        #expect(response.status == 200)
        await client.shutdown()
    }

    @Test func headersOfTheRequestModelReachTheServer() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        let client = try harness.client()
        let token = ClientHarness.tokens(1)[0]
        let id = try APNsID(parsing: "0c8f4e0a-7a4b-4e5c-9c1d-2f3e4a5b6c7d")
        let request = try APNsRequest(
            payload: .background(), to: token, topic: ClientHarness.topic, pushType: .background, priority: .conservePower,
            collapseID: try CollapseID("scores"), expiration: .at(epochSeconds: 2_000_000_000), apnsID: id)
        let response = try await client.send(request)
        #expect(response.apnsID == id.uuidString, "the given apns-id is echoed")
        let record = try #require(try await harness.mock.notification(id: id.uuidString))
        let parsed = try #require(record.request)
        #expect(parsed.pushType == .background)
        #expect(parsed.priority == .conservePower)
        #expect(parsed.collapseID?.value == "scores")
        #expect(parsed.expiration?.epochSeconds == 2_000_000_000)
        await client.shutdown()
    }

    @Test func rejectionsCarryReasonStatusAndAdvice() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        let client = try harness.client()
        let token = ClientHarness.tokens(1)[0]
        // The token is bound to com.example.app by its first push; another topic is refused.
        try await client.send(ClientHarness.alert, to: token, topic: ClientHarness.topic)
        do {
            try await client.send(ClientHarness.alert, to: token, topic: "com.example.other")
            Issue.record("a push to another topic was accepted")
        } catch {
            #expect(error.kind == .rejected)
            #expect(error.reason == .deviceTokenNotForTopic)
            #expect(error.status == 400)
            #expect(error.attempts == 1, "never retried: Apple says not to")
            #expect(error.advice?.contains("apns-topic") == true)
        }
        await client.shutdown()
    }

    @Test func unregisteredTokensGive410WithTheDate() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        let client = try harness.client()
        let token = ClientHarness.tokens(1)[0]
        let removed = Date(timeIntervalSince1970: 1_700_000_000.123)
        harness.mock.unregister(token, at: removed)
        let outcome = await client.outcome(of: ClientHarness.request(to: token))
        let error = try #require(outcome.failure)
        #expect(error.reason == .unregistered)
        #expect(error.status == 410)
        let date = try #require(error.unregisteredAt)
        #expect(abs(date.timeIntervalSince1970 - 1_700_000_000.123) < 0.001, "milliseconds kept: \(date.timeIntervalSince1970)")
        #expect(error.advice?.contains("stop sending") == true)
        await client.shutdown()
    }

    @Test func oversizedPayloadsAndLintFindingsNeverLeave() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        let client = try harness.client { $0.lintsBeforeSending = true }
        let token = ClientHarness.tokens(1)[0]
        let big = Payload.alert(String(repeating: "x", count: 5_000))
        let tooLarge = try #require(await client.outcome(of: ClientHarness.request(to: token, payload: big)).failure)
        #expect(tooLarge.kind == .payloadTooLarge)
        #expect(tooLarge.message.contains("4096"))
        // A VoIP push to a topic without .voip: APNs answers DeviceTokenNotForTopic (the lint
        // rule topic-mismatch says so), so it is refused before it leaves.
        let voip = try APNsRequest(payload: ClientHarness.alert, to: token, topic: ClientHarness.topic, pushType: .voip)
        let refused = try #require(await client.outcome(of: voip).failure)
        #expect(refused.kind == .refusedByLint)
        #expect(refused.reason == .deviceTokenNotForTopic)
        #expect(refused.diagnostics.contains { $0.rule == .topicMismatch })
        let empty = APNsRequest(headers: .init(target: .device(token), pushType: .alert, topic: ClientHarness.topic), body: [])
        #expect(await client.outcome(of: empty).failure?.reason == .payloadEmpty)
        #expect(try await harness.mock.notifications().isEmpty, "nothing reached the server")
        // Raw bytes are sent as they are.
        let raw = APNsRequest(headers: .init(target: .device(token), pushType: .alert, topic: ClientHarness.topic), body: Array(#"{"aps":{"alert":"raw"}}"#.utf8))
        let accepted = try await client.send(raw)
        #expect(try await harness.mock.notification(id: accepted.apnsID)?.body == Array(#"{"aps":{"alert":"raw"}}"#.utf8))
        await client.shutdown()
    }

    @Test func certificateAuthentication() async throws {
        let harness = try await ClientHarness.start { $0.authentication = .certificate(trustRoots: [], acceptsAnyCertificate: false) }
        defer { Task { await harness.stop() } }
        let authority = try #require(harness.mock.certificateAuthority)
        let identity = try authority.issueClientCertificate(bundleID: ClientHarness.topic, environments: [.sandbox]).identity()
        var configuration = harness.configuration()
        configuration.credentials = .certificate(identity)
        let client = try APNsClient(configuration: configuration)
        let token = ClientHarness.tokens(1)[0]
        let response = try await client.send(ClientHarness.alert, to: token, topic: ClientHarness.topic)
        let record = try #require(try await harness.mock.notification(id: response.apnsID))
        #expect(!record.headers.contains { $0.name == "authorization" }, "no provider token with a certificate")
        let refused = try #require(await client.outcome(of: try APNsRequest(payload: ClientHarness.alert, to: token, topic: "com.example.elsewhere")).failure)
        #expect(refused.reason == .topicDisallowed || refused.reason == .deviceTokenNotForTopic)
        await client.shutdown()
    }

    @Test func connectionProblemsSayWhatToCheck() async throws {
        let harness = try await ClientHarness.start()
        let port = harness.mock.port
        await harness.stop()
        // Nothing listens any more.
        let configuration = harness.configuration {
            $0.retry = .init(maximumAttempts: 2, initialBackoff: .milliseconds(10))
            $0.requestTimeout = .seconds(10)
            $0.server = .custom(host: "127.0.0.1", port: port)
        }
        let client = try APNsClient(configuration: configuration)
        let error = try #require(await client.outcome(of: ClientHarness.request(to: ClientHarness.tokens(1)[0])).failure)
        #expect(error.kind == .connectionFailed)
        #expect(error.attempts >= 1 && error.attempts <= 2)
        #expect(error.advice?.contains("port") == true)
        await client.shutdown()

        // A server whose certificate is not trusted.
        let other = try await ClientHarness.start()
        defer { Task { await other.stop() } }
        let untrusting = try other.client { $0.additionalTrustRootsPEM = []; $0.retry = .never }
        let tlsError = try #require(await untrusting.outcome(of: ClientHarness.request(to: ClientHarness.tokens(1)[0])).failure)
        #expect(tlsError.kind == .connectionFailed)
        #expect(tlsError.message.lowercased().contains("certificate"), "\(tlsError.message)")
        await untrusting.shutdown()
    }

    @Test func broadcastAndChannelManagement() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        let client = try harness.client()
        let channel = try await client.createChannel(bundleID: ClientHarness.topic, storesMessages: true)
        #expect(try await client.channelIDs(bundleID: ClientHarness.topic) == [channel])
        #expect(try await client.channel(channel, bundleID: ClientHarness.topic).storesMessages)
        let update = Payload.liveActivity(event: "update", timestamp: Date().timeIntervalSince1970.rounded(), contentState: ["score": 3])
        let response = try await client.broadcast(update, bundleID: ClientHarness.topic, channelID: channel)
        #expect(response.status == 200)
        #expect(response.requestID != nil, "broadcasts answer with apns-request-id")
        try await client.deleteChannel(channel, bundleID: ClientHarness.topic)
        #expect(try await client.channelIDs(bundleID: ClientHarness.topic).isEmpty)
        do {
            try await client.broadcast(update, bundleID: ClientHarness.topic, channelID: channel)
            Issue.record("a broadcast to a deleted channel was accepted")
        } catch {
            #expect(error.reason == .channelNotRegistered)
        }
        await client.shutdown()
    }
}
