import Foundation
import HeraldAuth
@testable import HeraldClient
import HeraldMock
import HeraldPayload
import HeraldProtocol
import HeraldHarness
import Synchronization
import Testing

/// The client against the mock's faults. Every test checks the invariant: each request has
/// exactly one outcome, and the mock's record agrees with the client's outcomes. One at a time:
/// each loads the machine, and deadlines are part of what they check.
@Suite(.serialized) struct FaultTests {
    @Test(arguments: [false, true])
    func manyRequestsOverFewConnectionsWithinTheStreamLimit(throughCompletions: Bool) async throws {
        let harness = try await ClientHarness.start { $0.maximumConcurrentStreams = 50 }
        defer { Task { await harness.stop() } }
        let client = try harness.client { $0.maximumConnections = 2 }
        let tokens = ClientHarness.tokens(600)
        let outcomes = await ClientHarness.sendAll(client, to: tokens, throughCompletions: throughCompletions)
        #expect(outcomes.filter { $0.1.failure != nil }.count == 0, "\(outcomes.compactMap { $0.1.failure }.prefix(3))")
        #expect(try await harness.checkAgreement(outcomes, expectedCount: 600) == 0, "no duplicates without faults")
        #expect(client.openConnectionCount <= 2)
        await client.shutdown()
    }

    @Test(arguments: [false, true])
    func goAwayMidFlightLosesNothing(throughCompletions: Bool) async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        // After answering, and before answering (the request above last-stream-id is not
        // processed): both leave the rest of the connection's streams to be retried elsewhere.
        _ = harness.mock.addFault(try FaultRule(parsing: "goaway=Shutdown,every=80,times=2"))
        _ = harness.mock.addFault(try FaultRule(parsing: "goaway=Shutdown/before,every=200,times=2"))
        let client = try harness.client { $0.retry = .init(maximumAttempts: 4, initialBackoff: .milliseconds(5)) }
        let outcomes = await ClientHarness.sendAll(client, to: ClientHarness.tokens(500), throughCompletions: throughCompletions)
        let failures = outcomes.compactMap { $0.1.failure }
        #expect(failures.count == 0, "\(failures.prefix(3))")
        let duplicates = try await harness.checkAgreement(outcomes, expectedCount: 500)
        // A GOAWAY's unprocessed streams are sent once more and never doubled: the mock closes a
        // connection only once its answers are written, even when frames the client sent before
        // it read the GOAWAY trip a protocol error, so no accepted request is sent again.
        #expect(duplicates == 0, "\(duplicates) duplicates")
        await client.shutdown()
    }

    /// GOAWAYs one after another (each before its request is processed, every 10th request):
    /// a request refused unprocessed is safe to send again, and is, until its deadline; the
    /// first few at once, then after a growing pause, so no request gives up while the server
    /// still takes requests. (Every tenth request opens a connection, with its TLS handshake:
    /// the test takes the machine to itself and gives requests a minute.)
    @Test(.exclusive) func aStormOfGoAwaysStillDeliversEverything() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        _ = harness.mock.addFault(try FaultRule(parsing: "goaway=Shutdown/before,every=10"))
        let client = try harness.client {
            $0.maximumConnections = 4
            $0.requestTimeout = .seconds(60)
        }
        let outcomes = await ClientHarness.sendAll(client, to: ClientHarness.tokens(1_000))
        let failures = outcomes.compactMap { $0.1.failure }
        #expect(failures.isEmpty, "\(failures.count) failed: \(failures.prefix(3))")
        #expect(try await harness.checkAgreement(outcomes, expectedCount: 1_000) == 0, "an unprocessed request is never doubled")
        await client.shutdown()
    }

    @Test(arguments: [false, true])
    func resetStreamsAndClosedConnectionsAreRetried(throughCompletions: Bool) async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        _ = harness.mock.addFault(try FaultRule(parsing: "reset,every=7,times=20"))
        _ = harness.mock.addFault(try FaultRule(parsing: "close,every=90,times=3"))
        let client = try harness.client { $0.retry = .init(maximumAttempts: 5, initialBackoff: .milliseconds(5)) }
        let outcomes = await ClientHarness.sendAll(client, to: ClientHarness.tokens(600), throughCompletions: throughCompletions)
        let failures = outcomes.compactMap { $0.1.failure }
        #expect(failures.count == 0, "\(failures.prefix(3))")
        let duplicates = try await harness.checkAgreement(outcomes, expectedCount: 600)
        // A request whose connection closed after the server accepted it may be sent again
        // (same apns-id): at most the streams in flight on the three closed connections.
        #expect(duplicates <= 3 * 1_000)
        await client.shutdown()
    }

    @Test func serverErrorsAreRetriedThenSucceed() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        let tokens = ClientHarness.tokens(3)
        _ = harness.mock.addFault(try FaultRule(parsing: "status=503/ServiceUnavailable,token=\(tokens[0].hex),times=2"))
        _ = harness.mock.addFault(try FaultRule(parsing: "status=429/TooManyRequests,token=\(tokens[1].hex),times=1"))
        _ = harness.mock.addFault(try FaultRule(parsing: "status=500/InternalServerError,token=\(tokens[2].hex),times=5"))
        let client = try harness.client { $0.retry = .init(maximumAttempts: 3, initialBackoff: .milliseconds(10)) }
        let first = try await client.send(ClientHarness.request(to: tokens[0]))
        #expect(first.attempts == 3)
        let second = try await client.send(ClientHarness.request(to: tokens[1]))
        #expect(second.attempts == 2)
        let third = try #require(await client.outcome(of: ClientHarness.request(to: tokens[2])).failure)
        #expect(third.reason == .internalServerError && third.status == 500 && third.attempts == 3, "\(third)")
        // Each attempt carried the same apns-id.
        var query = NotificationQuery()
        query.token = tokens[0].hex
        let attempts = try await harness.mock.notifications(query)
        #expect(attempts.count == 3 && Set(attempts.compactMap(\.apnsID)) == [first.apnsID])
        await client.shutdown()
    }

    /// The completion-handler `send` follows the same policy as `outcome(of:)`: an answer to
    /// retry goes on in a task, and the completion is called once, with the request's outcome.
    @Test func completionsFollowTheRetryPolicy() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        let tokens = ClientHarness.tokens(4)
        _ = harness.mock.addFault(try FaultRule(parsing: "status=503/ServiceUnavailable,token=\(tokens[0].hex),times=2"))
        _ = harness.mock.addFault(try FaultRule(parsing: "status=500/InternalServerError,token=\(tokens[1].hex),times=5"))
        _ = harness.mock.addFault(try FaultRule(parsing: "hang,token=\(tokens[2].hex)"))
        let client = try harness.client { $0.retry = .init(maximumAttempts: 3, initialBackoff: .milliseconds(10)) }
        func completion(_ token: DeviceToken, timeout: Duration? = nil) async -> Result<APNsResponse, APNsClientError> {
            await withCheckedContinuation { done in client.send(ClientHarness.request(to: token), timeout: timeout) { done.resume(returning: $0) } }
        }
        let retried = try await completion(tokens[0]).get()
        #expect(retried.status == 200 && retried.attempts == 3)
        let refused = try #require(await completion(tokens[1]).failure)
        #expect(refused.reason == .internalServerError && refused.attempts == 3, "\(refused)")
        let silent = try #require(await completion(tokens[2], timeout: .seconds(1)).failure)
        #expect(silent.kind == .deadlineExceeded, "\(silent)")
        let plain = try await completion(tokens[3]).get()
        #expect(plain.attempts == 1)
        var query = NotificationQuery()
        query.token = tokens[0].hex
        let attempts = try await harness.mock.notifications(query)
        #expect(attempts.count == 3 && Set(attempts.compactMap(\.apnsID)) == [retried.apnsID], "each attempt carries the request's apns-id")
        await client.shutdown()
        let late = await completion(tokens[3])
        #expect(late.failure?.kind == .shutDown, "\(late)")
    }

    @Test func deadlineFiresWhenTheServerStopsAnswering() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        let tokens = ClientHarness.tokens(2)
        _ = harness.mock.addFault(try FaultRule(parsing: "hang,token=\(tokens[0].hex)"))
        let client = try harness.client()
        let started = ContinuousClock.now
        let error = try #require(await client.outcome(of: ClientHarness.request(to: tokens[0]), timeout: .seconds(2)).failure)
        let waited = ContinuousClock.now - started
        #expect(error.kind == .deadlineExceeded)
        #expect(error.message.contains("2.0 seconds"), "\(error.message)")
        #expect(waited >= .seconds(2) && waited < .seconds(20), "\(waited)")
        // The connection is still good for others.
        let response = try await client.send(ClientHarness.request(to: tokens[1]))
        #expect(response.status == 200)
        await client.shutdown()
    }

    @Test(arguments: [false, true])
    func loweredStreamLimitMidRunIsRespected(throughCompletions: Bool) async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        _ = harness.mock.addFault(try FaultRule(parsing: "max-streams=3,every=100,times=1"))
        let client = try harness.client { $0.maximumConnections = 1 }
        let outcomes = await ClientHarness.sendAll(client, to: ClientHarness.tokens(800), throughCompletions: throughCompletions)
        let failures = outcomes.compactMap { $0.1.failure }
        #expect(failures.count == 0, "\(failures.prefix(3))")
        try await harness.checkAgreement(outcomes, expectedCount: 800)
        await client.shutdown()
    }

    @Test func expiredTokenIsRefreshedOnceWithoutTooManyUpdates() async throws {
        let clock = SharedClock()
        let harness = try await ClientHarness.start { configuration in configuration.now = { clock.now } }
        defer { Task { await harness.stop() } }
        let client = try harness.client { $0.now = { clock.now } }
        let tokens = ClientHarness.tokens(4)
        let first = try await client.send(ClientHarness.request(to: tokens[0]))
        #expect(first.attempts == 1)

        // APNs says the token expired: the client makes a new one and sends again once, never
        // with the refused token. Its connection changed token less than 20 minutes ago and may
        // not change again (TooManyProviderTokenUpdates), so a new connection carries it.
        _ = harness.mock.addFault(try FaultRule(parsing: "status=403/ExpiredProviderToken,token=\(tokens[1].hex),times=1"))
        let second = try await client.send(ClientHarness.request(to: tokens[1]))
        #expect(second.attempts == 2)
        func bearer(_ id: String) async throws -> String? {
            // The accepted record: a faulted attempt carries the same apns-id.
            try await harness.mock.notifications().first { $0.apnsID == id && $0.isAccepted }?.headers.first { $0.name == "authorization" }?.value
        }
        // The mock shows tokens without their signature, and the new token has the same iat
        // (the same second): the retry is recognised by its new connection.
        func connection(_ id: String) async throws -> Int? { try await harness.mock.notifications().first { $0.apnsID == id && $0.isAccepted }?.connection }
        #expect(try await connection(second.apnsID) != connection(first.apnsID), "the refused token is not sent again on its connection")

        // 55 minutes on: the signer's policy (50 minutes) gives a new token, and the connection
        // (last change over 20 minutes ago) takes it.
        clock.advance(by: 55 * 60)
        let third = try await client.send(ClientHarness.request(to: tokens[2]))
        #expect(third.attempts == 1)
        #expect(try await bearer(third.apnsID) != bearer(second.apnsID), "a token with a new iat")
        #expect(try await connection(third.apnsID) == connection(second.apnsID), "the same connection rotates")
        #expect(try await harness.mock.notifications().allSatisfy { $0.reason != .tooManyProviderTokenUpdates })
        await client.shutdown()
    }

    @Test func aSkewedClockIsReportedAfterOneRefresh() async throws {
        let serverClock = SharedClock()
        let harness = try await ClientHarness.start { configuration in configuration.now = { serverClock.now } }
        defer { Task { await harness.stop() } }
        let client = try harness.client()
        serverClock.advance(by: 2 * 3600)  // the server's clock is two hours ahead
        let error = try #require(await client.outcome(of: ClientHarness.request(to: ClientHarness.tokens(1)[0])).failure)
        #expect(error.reason == .expiredProviderToken)
        #expect(error.attempts == 2, "refreshed once, then reported")
        #expect(error.advice?.contains("clock") == true)
        await client.shutdown()
    }

    @Test func sendSuspendsAtTheInFlightBound() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        _ = harness.mock.addFault(try FaultRule(parsing: "delay=50ms"))
        let client = try harness.client { $0.maximumRequestsInFlight = 8 }
        let highest = Atomic<Int>(0)
        let sampler = Task {
            while !Task.isCancelled {
                let now = client.requestsInFlight
                _ = highest.max(now, ordering: .relaxed)
                try? await Task.sleep(for: .milliseconds(2))
            }
        }
        let outcomes = await ClientHarness.sendAll(client, to: ClientHarness.tokens(120))
        sampler.cancel()
        #expect(outcomes.allSatisfy { (try? $0.1.get()) != nil })
        #expect(highest.load(ordering: .relaxed) <= 8, "never more than the bound in flight")
        #expect(highest.load(ordering: .relaxed) >= 4, "the bound is used")
        await client.shutdown()
    }

    @Test func batchYieldsOneResultPerToken() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        let tokens = ClientHarness.tokens(1_000)
        harness.mock.unregister(tokens[17])
        let client = try harness.client { $0.maximumRequestsInFlight = 64 }
        var outcomes: [(DeviceToken, Result<APNsResponse, APNsClientError>)] = []
        for await result in client.send(ClientHarness.request(to: tokens[0]), to: tokens) {
            outcomes.append((result.token, result.result))
        }
        try await harness.checkAgreement(outcomes, expectedCount: 1_000)
        let failed = outcomes.filter { $0.1.failure != nil }
        #expect(failed.count == 1 && failed[0].0 == tokens[17] && failed[0].1.failure?.reason == .unregistered)
        let ids = outcomes.compactMap { try? $0.1.get().apnsID }
        #expect(Set(ids).count == ids.count, "each token's notification has its own apns-id")
        await client.shutdown()
    }

    @Test func shutdownDrainsRequestsInFlight() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        _ = harness.mock.addFault(try FaultRule(parsing: "delay=300ms"))
        let client = try harness.client()
        let sending = Task { await ClientHarness.sendAll(client, to: ClientHarness.tokens(50)) }
        // Shut down once some requests are in flight (the tasks start on a busy machine too).
        let waitedSince = ContinuousClock.now
        while client.requestsInFlight < 10, ContinuousClock.now - waitedSince < .seconds(20) {
            try await Task.sleep(for: .milliseconds(5))
        }
        await client.shutdown()
        let outcomes = await sending.value
        let accepted = outcomes.filter { (try? $0.1.get()) != nil }.count
        let refused = outcomes.filter { $0.1.failure?.kind == .shutDown }.count
        #expect(accepted + refused == 50)
        #expect(accepted > 0, "requests in flight finished")
        try await harness.checkAgreement(outcomes, expectedCount: 50)
        let after = try #require(await client.outcome(of: ClientHarness.request(to: ClientHarness.tokens(1, salt: 9)[0])).failure)
        #expect(after.kind == .shutDown)
        #expect(client.openConnectionCount == 0)
    }
}
