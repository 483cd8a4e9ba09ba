import Foundation
import HeraldAuth
@testable import HeraldGateway
import HeraldJSON
import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Testing

/// Two processes on one PostgreSQL; one is cut off (no bytes either way, sockets open) while a
/// transaction of its holds row locks on deliveries it claimed. The server ends that session
/// (its idle-in-transaction timeout, its keepalives), so the locks go and the other process
/// takes the work over once the leases run out, instead of passing over the rows for hours.
@Suite(.serialized, .exclusive) struct GatewayPartitionTests {
    @Test func aPartitionInsideATransactionLetsTheOtherProcessFinishWithinTheLease() async throws {
        let python = try ExternalTools.require("python3", package: "python3")
        let postgres = try PostgresTestDatabase()  // skipped, or failed under CI, without PostgreSQL
        let url = try #require(URLComponents(string: postgres.url))
        let proxy = try RunningProgram(python, [Fixtures.url("gateway/freeze_proxy.py").path, url.host ?? "127.0.0.1", String(url.port ?? 5432)], input: true)
        defer { proxy.process.terminate() }
        let portLine = await proxy.read(until: "port ", timeout: .seconds(20))
        let proxyPort = try #require(portLine.split(separator: "\n").first { $0.hasPrefix("port ") }.flatMap { Int($0.dropFirst(5)) }, "\(portLine)")
        var proxied = url
        proxied.port = proxyPort

        let key = ProviderSigningKey.generate(keyID: GatewayHarness.keyID, teamID: GatewayHarness.teamID)
        let delay = try FaultRule(parsing: "delay=300ms")
        let mock = try await GatewayHarness.startMock(key: key) { $0.faults = [delay] }
        defer { Task { await mock.stop() } }

        func gateway(_ database: String, worker: String) async throws -> GatewayServer {
            var configuration = GatewayConfiguration(database: .postgres(url: database))
            configuration.port = 0
            configuration.adminKey = GatewayHarness.adminKey
            configuration.workerName = worker
            configuration.requestTimeout = .seconds(4)
            configuration.claimLease = .seconds(12)
            configuration.pollInterval = .milliseconds(50)
            configuration.shutdownGracePeriod = .seconds(2)
            configuration.databaseTimeout = .seconds(3)
            let server = try await GatewayServer.open(configuration: configuration)
            try await server.start()
            return server
        }
        let cutOff = try await gateway(try #require(proxied.string), worker: "cut-off")
        let harness = GatewayHarness(mock: mock, gateway: cutOff, key: key, port: cutOff.port ?? 0, keep: [postgres])
        try await harness.registerApp()
        let tokens = GatewayHarness.tokens(300, salt: 30)
        let job = try await harness.submit(tokens: tokens)
        // Sending: then cut off at its next statement that writes rows it holds inside a
        // transaction (an outcome's record or a lease's extension).
        let deadline = ContinuousClock.now + .seconds(20)
        while try await mock.notifications().isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        proxy.send("arm")
        let frozen = await proxy.read(until: "frozen", timeout: .seconds(30))
        #expect(frozen.contains("frozen"), "\(frozen)")
        let cutAt = ContinuousClock.now

        let other = try await gateway(postgres.url, worker: "other")
        defer { Task { await other.stop() } }
        let survivor = GatewayHarness(mock: mock, gateway: other, key: key, port: other.port ?? 0, keep: [])
        let done = try await survivor.waitUntilDone(job, timeout: .seconds(60))
        let took = ContinuousClock.now - cutAt
        #expect(done.root["counts"]?["accepted"]?.int64Value == 300, "\(done.root.value)")
        // The lease (12 s) and the server's idle-in-transaction timeout (3 s here), with room:
        // not the two hours of the server's default keepalives.
        #expect(took < .seconds(40), "the other process finished \(took) after the cut")
        let accepted = Set(try await mock.notifications(NotificationQuery.limit(10_000)).filter { $0.status == 200 }.compactMap(\.deviceToken))
        #expect(accepted == Set(tokens.map(\.hex)), "nothing lost")
        // The cut-off process stops within its grace, whatever its database does.
        let stopping = ContinuousClock.now
        await cutOff.stop()
        #expect(ContinuousClock.now - stopping < .seconds(15))
    }
}

extension NotificationQuery {
    /// A query for at most `limit` records.
    static func limit(_ limit: Int) -> NotificationQuery {
        var query = NotificationQuery()
        query.limit = limit
        return query
    }
}
