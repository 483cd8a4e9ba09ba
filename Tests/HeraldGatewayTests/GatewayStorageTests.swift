import Foundation
@testable import HeraldGateway
import HeraldJSON
import HeraldProtocol
import HeraldSQL
import HeraldTestSupport
import Synchronization
import Testing

/// The database over months: a disk that fills, and retention of a million old deliveries while
/// sending goes on.
@Suite(.serialized) struct GatewayStorageTests {
    static let app = GatewayHarness.bundleID

    /// The SQL database under the harness's gateway (tests set SQLite's limits through it).
    static func database(_ harness: GatewayHarness) throws -> any GatewayDatabase {
        try #require((harness.gateway.store.base as? SQLGatewayStore)?.database)
    }

    /// SQLite refusing to grow (`max_page_count` at the file's size answers `SQLITE_FULL`, as a
    /// full disk does): submissions answer 503 with Retry-After, /readyz 503, database_up 0, the
    /// log says it once; room again: said once, ready, and what is submitted is sent.
    @Test func aFullDiskIsAnOutageOfWritesNotAHealthyGateway() async throws {
        let recorder = LogRecorder()
        let harness = try await GatewayHarness.start(gateway: { $0.logger = recorder.logger() })
        defer { Task { await harness.stop() } }
        try await harness.registerApp()
        let database = try Self.database(harness)
        let pages = try #require(try await database.query("PRAGMA page_count").first?.integer("page_count"))
        try await database.query("PRAGMA max_page_count = \(pages)")

        let tokens = GatewayHarness.tokens(3_000, salt: 20)
        let body = #"{"payload":{"aps":{"alert":"Hi"}},"tokens":[\#(tokens.map { "\"\($0.hex)\"" }.joined(separator: ","))]}"#
        let (refused, data, response) = try await harness.raw("POST", "/v1/apps/\(Self.app)/notifications", body)
        let answer = try? JSONDocument(parsing: data)
        #expect(refused == 503 && response?.value(forHTTPHeaderField: "Retry-After") != nil, "\(refused) \(String(decoding: data, as: UTF8.self))")
        #expect(answer?.root["error"]?["database"]?.stringValue == "full" && answer?.root["error"]?["message"]?.stringValue?.contains("disk is full") == true)
        let (notReady, readiness, _) = try await harness.raw("GET", "/readyz", key: nil)
        #expect(notReady == 503, "\(String(decoding: readiness, as: UTF8.self))")
        #expect(String(decoding: try await harness.raw("GET", "/metrics", key: nil).1, as: UTF8.self).contains("herald_gateway_database_up 0"))
        // Asked again while full: still 503, and not said again.
        #expect(try await harness.raw("POST", "/v1/apps/\(Self.app)/notifications", body).0 == 503)
        #expect(recorder.count(.error, containing: "disk is full") == 1, "\(recorder.lines.filter { $0.contains("full") })")

        // Room again: the write probe sees it within seconds.
        try await database.query("PRAGMA max_page_count = 1073741823")
        let deadline = ContinuousClock.now + .seconds(15)
        while try await harness.raw("GET", "/readyz", key: nil).0 != 200, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        #expect(try await harness.raw("GET", "/readyz", key: nil).0 == 200)
        #expect(recorder.count(.notice, containing: "takes writes again") == 1)
        let job = try await harness.submit(tokens: Array(tokens.prefix(50)))
        let done = try await harness.waitUntilDone(job)
        #expect(done.root["counts"]?["accepted"]?.int64Value == 50)
        #expect(try await harness.mock.notifications().count == 50, "nothing refused was sent")
    }

    /// A million deliveries of a notification finished long ago are pruned in bounded time, in
    /// small transactions, while a new notification is sent beside them; devices stay.
    @Test(.heavy, arguments: GatewayHarness.Backend.available)
    func retentionPrunesAMillionOldDeliveriesWhileSending(_ backend: GatewayHarness.Backend) async throws {
        // The clock runs 40 days ahead: the old job is 40 days finished, past the 30-day retention.
        let harness = try await GatewayHarness.start(backend, gateway: { configuration in
            configuration.now = { Date().addingTimeInterval(40 * 86_400) }
            configuration.retentionBatch = 5_000
            configuration.retentionInterval = .seconds(1)
        })
        defer { Task { await harness.stop() } }
        try await harness.registerApp()
        let database = try Self.database(harness)
        let count = 1_000_000
        let old = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        try await database.transaction { executor in
            try await executor.query(
                "INSERT INTO jobs (id, app_id, request_hash, headers, payload, expires_at, token_count, created_at, open_deliveries, finished_at) VALUES ('old', ?, 'h', '{}', ?, ?, ?, ?, 0, ?)",
                [.text(Self.app), .blob(Array(#"{"aps":{"alert":"old"}}"#.utf8)), .integer(old), .integer(Int64(count)), .integer(old), .integer(old)])
            let series = backend == .postgres
                ? "SELECT n FROM generate_series(1, \(count)) AS s(n)"
                : "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < \(count)) SELECT n FROM s"
            try await executor.query(
                """
                INSERT INTO deliveries (job_id, app_id, token, apns_id, state, due_at, attempts, status, updated_at)
                SELECT 'old', ?, 'c0' || n, '00000000-0000-4000-8000-000000000000', 'accepted', ?, 1, 200, ? FROM (\(series)) AS numbers
                """,
                [.text(Self.app), .integer(old), .integer(old)])
        }
        let started = ContinuousClock.now
        // A pass a second here (a minute by default); sending goes on beside it.
        let tokens = GatewayHarness.tokens(2_000, salt: 21)
        let job = try await harness.submit(tokens: tokens)
        let done = try await harness.waitUntilDone(job, timeout: .seconds(120))
        #expect(done.root["counts"]?["accepted"]?.int64Value == 2_000, "sending went on")
        // The deliveries go a batch at a time, then (in the same pass) the job.
        var left = Int64(count) + 1
        while left > 0, ContinuousClock.now - started < .seconds(300) {
            let deliveries = try await database.query("SELECT count(*) AS n FROM deliveries WHERE job_id = 'old'").first?.integer("n") ?? -1
            let jobs = try await database.query("SELECT count(*) AS n FROM jobs WHERE id = 'old'").first?.integer("n") ?? -1
            left = deliveries + jobs
            if left > 0 { try await Task.sleep(for: .milliseconds(200)) }
        }
        let took = ContinuousClock.now - started
        #expect(left == 0, "\(left) rows left after \(took)")
        let metrics = String(decoding: try await harness.raw("GET", "/metrics", key: nil).1, as: UTF8.self)
        #expect(metrics.contains(#"herald_gateway_pruned_total{kind="deliveries"} 1000000"#), "\(metrics.split(separator: "\n").filter { $0.contains("pruned") })")
        #expect(try await harness.call("GET", "/v1/apps/\(Self.app)/notifications/\(job)").0 == 200, "the new one stays")
        print("retention (\(backend)): 1,000,000 deliveries pruned in \(took) while 2,000 were sent")
    }
}

/// A busy PostgreSQL pool is not a broken one: a probe (`/readyz`, the outage probe) that finds
/// every connection of the pool taken replaces the pool for new calls, and the transactions
/// running on the old one still commit (closing it at once left them hanging, uncommitted).
@Suite(.serialized) struct PostgresPoolReplacementTests {
    /// How each transaction ended: nil when it committed.
    final class Outcomes: Sendable { let list = Mutex<[String?]>([]) }

    @Test(.enabled(if: PostgresTestDatabase.isAvailable, Comment(rawValue: PostgresTestDatabase.notConfigured)))
    func aProbeOfABusyPoolLetsItsTransactionsCommit() async throws {
        let harness = try await GatewayHarness.start(.postgres)
        defer { Task { await harness.stop() } }
        let database = try GatewayStorageTests.database(harness)
        try await database.query("CREATE TABLE pool_probe (n INTEGER)")
        // Every connection of the pool (8) in a transaction for six seconds.
        let outcomes = Outcomes()
        for n in 0..<8 {
            Task {
                do {
                    try await database.transaction { executor in
                        try await executor.query("INSERT INTO pool_probe (n) VALUES (?)", [.integer(Int64(n))])
                        try await executor.query("SELECT pg_sleep(6)")
                    }
                    outcomes.list.withLock { $0.append(nil) }
                } catch {
                    outcomes.list.withLock { $0.append("\(n): \(error)") }
                }
            }
        }
        try await Task.sleep(for: .milliseconds(800))
        // What a probe whose statement waited past its second does (`ping`, `/readyz`): new
        // calls go to a new pool, which answers while the old one's transactions run. (Called
        // directly: the probe's own two-second connection check is a loaded machine's to miss.)
        let postgres = try #require(database as? PostgresGatewayDatabase)
        await postgres.reconnect()
        let answered = try await database.query("SELECT count(*) AS n FROM pool_probe").first?.integer("n")
        #expect(answered == 0, "the new pool reads before the old one's transactions commit")
        let deadline = ContinuousClock.now + .seconds(30)
        while outcomes.list.withLock({ $0.count }) < 8, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        let ended = outcomes.list.withLock { $0 }
        #expect(ended.count == 8, "\(8 - ended.count) transactions never ended")
        #expect(ended.allSatisfy { $0 == nil }, "transactions cut: \(ended.compactMap { $0 })")
        let committed = try await database.query("SELECT count(*) AS n FROM pool_probe").first?.integer("n")
        #expect(committed == 8)
    }
}
