import Foundation
import HeraldAuth
@testable import HeraldClient
import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import HeraldHarness
import Logging
import MetricsTestKit
import NIOCore
import NIOEmbedded
import NIOPosix
import Testing

/// APNs that refuses connections, then comes back: attempts are coalesced and back off, the log
/// says it once each way, what waits goes out when the endpoint returns, and a refused
/// connection leaves nothing running behind it.
@Suite(.serialized) struct UnreachableEndpointTests {
    /// A port nothing listens on and nobody else can take: a TCP socket bound to it and not
    /// listening (a connection to it is refused), closed by ``release()`` just before the mock
    /// binds it. A port bound, read and released at once was taken by another test's server
    /// meanwhile once in a full run: connections then waited instead of being refused.
    final class ReservedPort: @unchecked Sendable {  // `descriptor` is closed once, by the test
        let port: Int
        private var descriptor: Int32

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw ExternalTools.Failure(description: "socket: errno \(errno)") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                    bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
                }
            }
            guard bound else {
                close(descriptor)
                throw ExternalTools.Failure(description: "bind: errno \(errno)")
            }
            self.descriptor = descriptor
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        func release() {
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }

        deinit { release() }
    }

    @Test func attemptsAreCoalescedBackOffAndResumeWhenTheEndpointReturns() async throws {
        let reserved = try ReservedPort()
        let port = reserved.port
        let key = ProviderSigningKey.generate(keyID: ClientHarness.keyID, teamID: ClientHarness.teamID)
        let metrics = TestMetrics()
        let records = LogRecorder()
        var configuration = APNsClientConfiguration(server: .custom(host: "127.0.0.1", port: port, environment: .sandbox), credentials: .token(key))
        configuration.plaintext = true
        configuration.metricsFactory = metrics
        configuration.metricsPrefix = "push"
        configuration.logger = records.logger()
        configuration.requestTimeout = .seconds(3)
        let client = try APNsClient(configuration: configuration)

        // 100 requests while nothing listens: each waits for the pool's attempts and ends at its
        // deadline with the connection error, and the attempts are few.
        let tokens = ClientHarness.tokens(100, salt: 21)
        let failed = await ClientHarness.sendAll(client, to: tokens)
        #expect(failed.allSatisfy { $0.1.failure != nil })
        let reasons = Set(failed.compactMap { $0.1.failure?.message })
        #expect(reasons.allSatisfy { $0.lowercased().contains("refused") || $0.contains("cannot connect") }, "\(reasons)")
        // An attempt begun just before the last deadline may still be failing: each attempt ends
        // in one counted failure, so wait (briefly) for the two counters to meet.
        let settled = ContinuousClock.now + .seconds(5)
        while metrics.counterTotal(label: "push_connection_failures_total") != metrics.counterTotal(label: "push_connection_attempts_total"),
            ContinuousClock.now < settled
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        let attempts = metrics.counterTotal(label: "push_connection_attempts_total")
        // One at a time, backing off from a quarter of a second: about six in three seconds
        // (without the breaker, each request opened its own: hundreds).
        #expect(attempts >= 2 && attempts <= 12, "\(attempts) connection attempts for 100 requests in 3 s")
        #expect(records.count(.warning, containing: "unreachable") == 1, "said once: \(records.lines)")
        #expect(metrics.counterTotal(label: "push_connection_failures_total") == attempts)
        // What a dashboard shows: refusing, backing off, nothing open.
        let down = client.connectionStatus
        #expect(down.open == 0 && down.failedAttempts >= 2 && down.lastFailure?.cause == .refused, "\(down)")
        #expect(down.nextAttemptIn.map { $0 >= .zero && $0 <= .seconds(30) } == true, "\(down)")

        // The endpoint comes back while requests wait: they go out at the next attempt.
        var mockConfiguration = MockConfiguration()
        mockConfiguration.port = port
        mockConfiguration.apiPort = nil
        mockConfiguration.channelPort = nil
        mockConfiguration.transport = .plaintext
        mockConfiguration.keys = [key.publicKey]
        var waiting = configuration
        waiting.requestTimeout = .seconds(60)
        let patient = try APNsClient(configuration: waiting)
        // The mock starts once this client has met the refusal itself (on a loaded machine its
        // first attempt may come late; a first attempt that finds the server up is no return).
        let early = try await Self.sendWhileDown(
            patient, tokens: Array(tokens.prefix(20)), configuration: mockConfiguration, release: reserved.release
        ) {
            records.count(.warning, containing: "unreachable") >= 2
        }
        #expect(early.outcomes.allSatisfy { (try? $0.get()) != nil }, "\(early.outcomes.compactMap(\.failure))")
        // Noticed within the backoff's cap (30 s) of its return; here much sooner.
        #expect(early.afterStart < .seconds(32), "\(early.afterStart)")
        #expect(records.count(.notice, containing: "reachable again") == 1, "\(records.lines)")
        let up = patient.connectionStatus
        #expect(up.open >= 1 && up.failedAttempts == 0 && up.lastFailure == nil && up.nextAttemptIn == nil, "\(up)")
        await patient.shutdown()
        await client.shutdown()
        await early.mock.stop()
    }

    /// Sends to `tokens` while nothing listens, starts the mock once `down` says the client met
    /// the outage (at least two seconds in; the port `release`d just before), and returns the outcomes and how long after the
    /// mock started the last one came.
    static func sendWhileDown(
        _ client: APNsClient, tokens: [DeviceToken], configuration: MockConfiguration, release: () -> Void,
        down: @escaping @Sendable () -> Bool
    ) async throws -> (outcomes: [Result<APNsResponse, APNsClientError>], afterStart: Duration, mock: MockAPNsServer) {
        let mock = try MockAPNsServer(configuration: configuration)
        let sending = Task { await ClientHarness.sendAll(client, to: tokens).map(\.1) }
        try await Task.sleep(for: .seconds(2))
        let deadline = ContinuousClock.now + .seconds(30)
        while !down(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        release()
        try await mock.start()
        let started = ContinuousClock.now
        let outcomes = await sending.value
        return (outcomes, ContinuousClock.now - started, mock)
    }

    @Test func aConnectionThatNeverOpensLeavesNoTimer() throws {
        let settings = APNsClientConnectionHandler.Settings(
            authority: "127.0.0.1", plaintext: true, token: nil, idleTimeout: .seconds(300), pingInterval: .seconds(60),
            pingTimeout: .seconds(10), now: Date.init, logger: Logger(label: "test"))
        // Refused: the handler is added, the channel never becomes active, then goes away.
        let refused = EmbeddedChannel()
        let handler = APNsClientConnectionHandler(
            settings: settings, gauge: ConnectionGauge(), ready: refused.eventLoop.makePromise(), allocator: ByteBufferAllocator())
        try refused.pipeline.syncOperations.addHandler(handler)
        #expect(handler.scheduledTimerCount == 0)
        _ = try? refused.finish()
        #expect(handler.scheduledTimerCount == 0)

        // Opened: the idle check and the PING run (the deadline sweep only while requests
        // wait), and stop when it closes.
        let opened = EmbeddedChannel()
        let ready = opened.eventLoop.makePromise(of: Void.self)
        let active = APNsClientConnectionHandler(settings: settings, gauge: ConnectionGauge(), ready: ready, allocator: ByteBufferAllocator())
        try opened.pipeline.syncOperations.addHandler(active)
        try opened.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        #expect(active.scheduledTimerCount == 2)
        _ = try? opened.finish()
        #expect(active.scheduledTimerCount == 0)
        ready.fail(CancellationError())
    }

    @Test func connectionFailuresAreNamedByCauseWithoutSourcePaths() {
        let text = "handshakeFailed(NIOSSL.BoringSSLError.sslError([Error: 268435581 error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED at /home/ci/.build-install/checkouts/swift-nio-ssl/Sources/CNIOBoringSSL/ssl/handshake.cc:320]))"
        #expect(ConnectionFailure.openSSLCode(in: text) == "CERTIFICATE_VERIFY_FAILED")
        let cleaned = ConnectionFailure.withoutPaths(text)
        #expect(!cleaned.contains("/home") && !cleaned.contains(".cc:") && cleaned.contains("CERTIFICATE_VERIFY_FAILED]"), "\(cleaned)")
        #expect(ConnectionFailure.classify(IOError(errnoCode: 111, reason: "connect"), endpoint: "h:1").cause == .refused)
        #expect(ConnectionFailure.classify(ChannelError.connectTimeout(.seconds(1)), endpoint: "h:1").cause == .timeout)
        for cause in ConnectionFailure.Cause.allCases {
            // Persistent causes fail requests at once; the others wait for the next attempt.
            var breaker = ConnectionBreaker()
            _ = breaker.failed(now: .now(), error: ConnectionFailure(cause: cause, endpoint: "h:1", detail: ""))
            #expect(breaker.lastErrorIsFatal == cause.isPersistent)
        }
    }

    @Test func theBreakerBacksOffOneAttemptAtATimeAndReportsEachChangeOnce() {
        var breaker = ConnectionBreaker(random: { $0.upperBound })
        let start = NIODeadline.now()
        let refused = ConnectionFailure(cause: .refused, endpoint: "127.0.0.1:1", detail: "ECONNREFUSED")
        #expect(breaker.mayConnect(now: start, opening: 0) && breaker.mayConnect(now: start, opening: 3))
        #expect(breaker.failed(now: start, error: refused) == .becameUnreachable(error: refused))
        #expect(!breaker.mayConnect(now: start, opening: 0), "not before the backoff")
        var previous: Int64 = 0
        var now = start
        for attempt in 2...12 {
            let wait = (breaker.retryAt! - now).nanoseconds
            #expect(wait >= previous, "the backoff grows (attempt \(attempt))")
            #expect(wait <= ConnectionBreaker.maximumBackoff.nanoseconds, "capped")
            previous = wait
            now = breaker.retryAt!
            #expect(breaker.mayConnect(now: now, opening: 0))
            #expect(!breaker.mayConnect(now: now, opening: 1), "one attempt at a time")
            #expect(breaker.failed(now: now, error: refused) == .none, "said once")
        }
        #expect(previous == ConnectionBreaker.maximumBackoff.nanoseconds)
        #expect(breaker.succeeded(now: now + .seconds(1)) == .becameReachable(after: .nanoseconds((now + .seconds(1) - start).nanoseconds)))
        #expect(breaker.succeeded(now: now + .seconds(2)) == .none)
        #expect(breaker.mayConnect(now: now, opening: 5))
    }
}
