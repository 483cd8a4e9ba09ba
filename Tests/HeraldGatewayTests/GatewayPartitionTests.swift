import Foundation
import HeraldAuth
@testable import HeraldGateway
import HeraldJSON
import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Logging
import Testing

/// Two processes on one PostgreSQL; one is cut off (no bytes either way, sockets open) while a
/// transaction of its holds row locks on deliveries it claimed. The server ends that session
/// (its idle-in-transaction timeout, its keepalives), so the locks go and the other process
/// takes the work over once the leases run out, instead of passing over the rows for hours.
@Suite(.serialized, .exclusive) struct GatewayPartitionTests {
    @Test func aPartitionInsideATransactionLetsTheOtherProcessFinishWithinTheLease() async throws {
        let postgres = try await PostgresTestDatabase()  // skipped, or failed under CI, without PostgreSQL
        let (proxy, proxied) = try await Self.freezeProxy(to: postgres)
        defer { proxy.process.terminate() }

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
        let cutOff = try await gateway(proxied, worker: "cut-off")
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

    /// One connection of a process hangs inside a transaction writing rows it holds (an outcome
    /// batch), its other connections fine: the call ends at its deadline, and the process's next
    /// lease renewal and outcomes go through at once instead of waiting behind the hung one (the
    /// server ends that session, rolling it back, and its rows are recorded again).
    @Test func aHungTransactionDoesNotHoldBackTheProcesssOtherWrites() async throws {
        let postgres = try await PostgresTestDatabase()  // skipped, or failed under CI, without PostgreSQL
        let (proxy, proxied) = try await Self.freezeProxy(to: postgres)
        defer { proxy.process.terminate() }
        // A lease of 8 s: the server ends a session idle inside a transaction after 2 s.
        let base = try await PostgresGatewayDatabase.open(url: proxied, logger: Logger(label: "test"), lease: .seconds(8))
        let store = GuardedStore(base, timeout: .seconds(2), metrics: GatewayMetrics(), logger: Logger(label: "test"))
        defer { Task { await store.close() } }
        _ = try await store.insertApp(StoredApp(id: "app", definition: "{}", createdAt: 1, updatedAt: 1))
        _ = try await store.submit(GatewayStoreContractTests.job("j", tokens: GatewayStoreContractTests.tokens(200), now: 1_000))
        let claimed = try await store.claim(worker: "w", limit: 200, now: 1_000, leaseUntil: 100_000, takeOver: false)
        try #require(claimed.count == 200)
        func accepted(_ deliveries: ArraySlice<ClaimedDelivery>) -> [DeliveryOutcome] {
            deliveries.map { DeliveryOutcome(delivery: $0, result: .accepted(status: 200), webhooks: []) }
        }
        let (hung, other) = (claimed.prefix(100), claimed.dropFirst(100))

        proxy.send("arm one")
        _ = await proxy.read(until: "armed", timeout: .seconds(10))
        await #expect(throws: (any Error).self, "its connection hangs: the call ends at its deadline") {
            try await store.record(accepted(hung), worker: "w", now: 2_000)
        }
        #expect(proxy.output.contains("frozen"), "\(proxy.output)")
        // A call past its deadline counts as an outage until the probe gets through (on a new connection).
        let back = ContinuousClock.now + .seconds(15)
        while store.health.unavailable != nil, ContinuousClock.now < back { try await Task.sleep(for: .milliseconds(50)) }
        try #require(store.health.unavailable == nil, "the probe gets through on a new connection")

        let kept = try await store.extendLeases(worker: "w", ids: other.map(\.id), until: 200_000, now: 3_000)
        #expect(kept == Set(other.map(\.id)), "the renewal does not wait for the hung transaction")
        try await store.record(accepted(other), worker: "w", now: 3_000)

        // The server ends the hung session (idle in its transaction for 2 s) and rolls it back:
        // those rows are still this process's, and are recorded now.
        let rolledBack = ContinuousClock.now + .seconds(20)
        while true {
            do {
                try await store.record(accepted(hung), worker: "w", now: 4_000)
                break
            } catch where ContinuousClock.now < rolledBack {
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        let summary = try #require(try await store.job(app: "app", id: "j"))
        #expect(summary.counts[.accepted] == 200 && summary.counts[.claimed] == nil, "\(summary.counts)")
    }

    /// `freeze_proxy.py` in front of `postgres`, and the database's URL through it.
    static func freezeProxy(to postgres: PostgresTestDatabase) async throws -> (RunningProgram, String) {
        let python = try ExternalTools.require("python3", package: "python3")
        let url = try #require(URLComponents(string: postgres.url))
        let proxy = try RunningProgram(python, [Fixtures.url("gateway/freeze_proxy.py").path, url.host ?? "127.0.0.1", String(url.port ?? 5432)], input: true)
        let portLine = await proxy.read(until: "port ", timeout: .seconds(20))
        let port = try #require(portLine.split(separator: "\n").first { $0.hasPrefix("port ") }.flatMap { Int($0.dropFirst(5)) }, "\(portLine)")
        var proxied = url
        proxied.port = port
        return (proxy, try #require(proxied.string))
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
