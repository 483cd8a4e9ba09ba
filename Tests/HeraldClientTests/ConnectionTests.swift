import Foundation
@testable import HeraldClient
import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import HeraldHarness
import Logging
import Synchronization
import Testing

/// A proxy, idle connections and the logs.
@Suite(.serialized) struct ConnectionTests {
    /// Runs Tests/Fixtures/client/connect_proxy.py (or another loopback server script); its port
    /// is the number on the `port N` line it prints.
    struct Proxy {
        let program: RunningProgram
        let port: Int

        static func start(refusing: Bool = false, script: String = "client/connect_proxy.py") async throws -> Proxy {
            let python = try ExternalTools.require("python3", package: "python3")
            let program = try RunningProgram(python, [Fixtures.url(script).path] + (refusing ? ["--refuse"] : []))
            let text = await program.read(untilOutput: { $0.contains("\n") && $0.contains("port ") }, timeout: .seconds(20))
            let port = text.split(separator: "\n").first { $0.hasPrefix("port ") }.flatMap { Int($0.dropFirst(5)) } ?? 0
            return Proxy(program: program, port: port)
        }

        /// Everything it printed (stops it).
        func stop() async -> String {
            program.process.signal(SIGKILL)
            _ = await program.waitForExit()
            return await program.read(until: "\u{0}", timeout: .seconds(2))
        }
    }

    @Test func sendsThroughAnHTTPConnectProxy() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        let proxy = try await Proxy.start()
        #expect(proxy.port > 0)
        let client = try harness.client { $0.proxy = .init(host: "127.0.0.1", port: proxy.port, basicCredentials: "herald:secret") }
        let response = try await client.send(ClientHarness.request(to: ClientHarness.tokens(1)[0]))
        #expect(try await harness.mock.notification(id: response.apnsID) != nil)
        await client.shutdown()
        let log = await proxy.stop()
        #expect(log.contains("CONNECT 127.0.0.1:\(harness.mock.port)"), "\(log)")
        #expect(log.contains("Proxy-Authorization: Basic aGVyYWxkOnNlY3JldA=="), "credentials sent as Basic")

        let refusing = try await Proxy.start(refusing: true)
        let refused = try harness.client { $0.proxy = .init(host: "127.0.0.1", port: refusing.port); $0.retry = .never }
        let error = try #require(await refused.outcome(of: ClientHarness.request(to: ClientHarness.tokens(1)[0])).failure)
        #expect(error.kind == .connectionFailed)
        #expect(error.message.contains("407"), "\(error.message)")
        await refused.shutdown()
        _ = await refusing.stop()
    }

    @Test func idleConnectionsCloseAndReopenOnDemand() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        let client = try harness.client { $0.idleTimeout = .seconds(1) }
        try await client.prewarm()
        #expect(client.openConnectionCount <= 2, "prewarm opens the pool, no more")
        let deadline = ContinuousClock.now + .seconds(10)
        while client.openConnectionCount > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(client.openConnectionCount == 0, "idle connections closed")
        let response = try await client.send(ClientHarness.request(to: ClientHarness.tokens(1)[0]))
        #expect(response.status == 200, "a new connection opens on demand")
        await client.shutdown()
    }

    @Test func aServerThatStopsAnsweringPINGsIsLeft() async throws {
        try ExternalTools.requirePython(modules: "h2", package: "h2")
        let silent = try await Proxy.start(script: "client/silent_h2_server.py")
        defer { silent.program.process.signal(SIGKILL) }
        var configuration = APNsClientConfiguration(
            server: .custom(host: "127.0.0.1", port: silent.port), credentials: .token(.generate(keyID: ClientHarness.keyID, teamID: ClientHarness.teamID)))
        configuration.plaintext = true
        configuration.pingInterval = .milliseconds(200)
        configuration.pingTimeout = .milliseconds(100)
        configuration.requestTimeout = .seconds(60)
        configuration.retry = .init(maximumAttempts: 2, initialBackoff: .milliseconds(10))
        let client = try APNsClient(configuration: configuration)
        let started = ContinuousClock.now
        let error = try #require(await client.outcome(of: ClientHarness.request(to: ClientHarness.tokens(1)[0])).failure)
        let waited = ContinuousClock.now - started
        #expect(error.kind == .connectionFailed)
        #expect(error.message.contains("PING"), "\(error.message)")
        #expect(error.attempts == 2)
        #expect(waited < .seconds(45), "the health check ends it before the 60-second deadline: \(waited)")
        await client.shutdown()
    }

    /// The deadline counts from the call: a request waiting for a place among those in flight
    /// ends at its deadline, unsent (a gateway that checked its claim's lease before the call
    /// relies on it).
    @Test func aRequestWaitingForAPlaceEndsAtItsDeadlineUnsent() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        _ = harness.mock.addFault(try FaultRule(parsing: "delay=6s"))
        let client = try harness.client {
            $0.maximumRequestsInFlight = 1
            $0.requestTimeout = .seconds(30)  // the first's: its 6 s answer with room for a slow machine
        }
        let tokens = ClientHarness.tokens(2, salt: 31)
        async let first = client.outcome(of: ClientHarness.request(to: tokens[0]))
        try await Task.sleep(for: .milliseconds(200))
        let started = ContinuousClock.now
        let second = await client.outcome(of: ClientHarness.request(to: tokens[1]), timeout: .seconds(1))
        let waited = ContinuousClock.now - started
        let error = try #require(second.failure)
        #expect(error.kind == .deadlineExceeded && error.attempts == 0, "\(error)")
        // Its deadline is 1 s; the place frees when the first is answered, 6 s after it was sent.
        #expect(waited < .seconds(4), "ended at its own deadline: \(waited)")
        #expect((try? await first.get()) != nil, "the first is answered after its delay")
        #expect(try await harness.mock.notifications().filter { $0.deviceToken == tokens[1].hex }.isEmpty, "the second was never sent")
        await client.shutdown()
    }

    @Test func logsShortenDeviceTokens() async throws {
        let harness = try await ClientHarness.start()
        defer { Task { await harness.stop() } }
        let token = ClientHarness.tokens(1)[0]
        harness.mock.unregister(token)
        let capture = LogRecorder()
        let client = try harness.client { $0.logger = capture.logger() }
        _ = await client.outcome(of: ClientHarness.request(to: token))
        await client.shutdown()
        let lines = capture.lines
        #expect(lines.contains { $0.contains(String(token.hex.prefix(8)) + "…") }, "\(lines)")
        #expect(!lines.contains { $0.contains(token.hex) }, "the full token is not logged")

        let capture2 = LogRecorder()
        let verbose = try harness.client {
            $0.logger = capture2.logger()
            $0.logsFullDeviceTokens = true
        }
        _ = await verbose.outcome(of: ClientHarness.request(to: token))
        await verbose.shutdown()
        #expect(capture2.lines.contains { $0.contains(token.hex) })
    }
}
