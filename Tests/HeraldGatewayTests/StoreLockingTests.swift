import Foundation
@testable import HeraldGateway
import HeraldTestSupport
import Logging
import Testing

/// One process writes the rows it holds from several tasks at once (the dispatcher records
/// outcomes while it renews leases and gives rows back): on PostgreSQL those transactions lock
/// rows in different orders (a batch of accepted ones, then each other outcome in its order; the
/// renewals by id; a give-back in its order), so run concurrently they would deadlock. The store
/// runs them one at a time instead of locking every row first (which cost a WAL record a delivery).
extension GatewayStoreContractTests {
    @Test(.enabled(if: PostgresTestDatabase.isAvailable, Comment(rawValue: PostgresTestDatabase.notConfigured)))
    func aProcesssOutcomesRenewalsAndGiveBacksNeverDeadlock() async throws {
        let database = try await PostgresTestDatabase()
        let store = try await PostgresGatewayDatabase.open(url: database.url, logger: Logger(label: "test"))
        defer { Task { await store.close() } }
        _ = try await store.insertApp(StoredApp(id: "app", definition: "{}", createdAt: 1, updatedAt: 1))
        _ = try await store.submit(Self.job("j", tokens: Self.tokens(2_400), now: 1_000))
        var recorded = 0
        for round in 0..<8 {
            let claimed = try await store.claim(worker: "w", limit: 300, now: 1_000, leaseUntil: 100_000, takeOver: false)
            #expect(claimed.count == 300, "round \(round)")
            // Highest id first; every third one on the one-by-one path (a webhook), the rest in the batch.
            let outcomes = claimed.reversed().enumerated().map { index, delivery in
                DeliveryOutcome(delivery: delivery, result: .accepted(status: 200), webhooks: index % 3 == 0 ? [#"{"event":"test"}"#] : [])
            }
            let given = Array(claimed.map(\.id).shuffled().prefix(100))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await store.record(outcomes, worker: "w", now: 2_000) }
                group.addTask {
                    for _ in 0..<4 { _ = try await store.extendLeases(worker: "w", ids: claimed.map(\.id), until: 200_000, now: 2_000) }
                }
                group.addTask { try await store.release(worker: "w", ids: given, reason: nil, now: 2_000) }
                try await group.waitForAll()
            }
            let summary = try #require(try await store.job(app: "app", id: "j"))
            recorded = summary.counts[.accepted] ?? 0
            #expect(summary.counts[.claimed] == nil, "round \(round): every row recorded or given back: \(summary.counts)")
        }
        #expect(recorded >= 8 * 200, "at least the rows not given back were recorded: \(recorded)")
    }
}
