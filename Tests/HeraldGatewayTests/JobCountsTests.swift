import Foundation
@testable import HeraldGateway
import HeraldProtocol
import HeraldSQL
import HeraldTestSupport
import Logging
import Testing

/// A job's counts by state are kept in its row (schema 9) by every statement that moves a
/// delivery: held against the deliveries themselves, counted one by one, after every step of a
/// random run of everything that moves them (submissions with dead tokens, claims and takeovers,
/// every kind of outcome, give-backs, lease renewals, cancels, erased users), on both stores.
extension GatewayStoreContractTests {
    @Test(arguments: Backend.available)
    func aJobsCountsAreItsDeliveriesCountedAfterAnySequence(_ backend: Backend) async throws {
        let opened = try await Self.open(backend)
        let store = opened.store
        defer { Task { await store.close() } }
        _ = try await store.insertApp(StoredApp(id: "app", definition: "{}", createdAt: 1, updatedAt: 1))
        let pool = Self.tokens(24)
        // Half the tokens belong to four users (erasing one cancels what is queued for them).
        for (index, token) in pool.enumerated() where index % 2 == 0 {
            try await store.upsertDevices(
                app: "app", tokens: [try DeviceToken(hex: token)], registration: DeviceRegistration(user: "u\(index % 8 / 2)"), now: 1)
        }
        var random = SeededGenerator(seed: 0x0C0_0A75)
        var clock: Int64 = 1_000
        var jobs: [String] = []
        var held: [String: [ClaimedDelivery]] = [:]
        let workers = ["a", "b", "c"]
        var moves: [String: Int] = [:]
        for step in 0..<160 {
            clock += Int64.random(in: 0...40, using: &random)
            let worker = workers.randomElement(using: &random)!
            let action = jobs.isEmpty ? 0 : Int.random(in: 0..<100, using: &random)
            switch action {
            case 0..<12:
                let id = "j\(jobs.count)"
                let tokens = Array(pool.shuffled(using: &random).prefix(Int.random(in: 1...10, using: &random)))
                var job = Self.job(id, tokens: tokens, now: clock)
                job.doneWebhook = true
                _ = try await store.submit(job)
                jobs.append(id)
                moves["submit", default: 0] += 1
            case 12..<40:
                let claimed = try await store.claim(
                    worker: worker, limit: Int.random(in: 1...6, using: &random), now: clock,
                    leaseUntil: clock + Int64.random(in: 1...120, using: &random), takeOver: Bool.random(using: &random))
                for delivery in claimed { for other in workers { held[other]?.removeAll { $0.id == delivery.id } } }
                held[worker, default: []] += claimed
                moves["claim", default: 0] += claimed.count
            case 40..<68:
                let mine = held[worker, default: []].shuffled(using: &random).prefix(Int.random(in: 1...5, using: &random))
                let outcomes = mine.map { delivery in
                    let result: DeliveryOutcome.Result
                    switch Int.random(in: 0..<6, using: &random) {
                    case 0: result = .retry(at: clock + Int64.random(in: 0...60, using: &random), reason: "TooManyRequests")
                    case 1: result = .expired(reason: "ServiceUnavailable")
                    case 2: result = .rejected(status: 410, reason: "Unregistered", unregisteredAt: clock, deadToken: true)
                    case 3: result = .rejected(status: 400, reason: "BadTopic", unregisteredAt: nil, deadToken: false)
                    default: result = .accepted(status: 200)
                    }
                    // An outcome with a webhook takes the one-by-one path, the rest the batch.
                    let webhooks = Bool.random(using: &random) ? [#"{"event":"delivery.test"}"#] : []
                    return DeliveryOutcome(delivery: delivery, result: result, webhooks: webhooks, doneWebhook: true)
                }
                try await store.record(Array(outcomes), worker: worker, now: clock)
                held[worker]?.removeAll { delivery in mine.contains { $0.id == delivery.id } }
                moves["record", default: 0] += outcomes.count
            case 68..<78:
                let mine = held[worker, default: []].prefix(Int.random(in: 1...4, using: &random))
                try await store.release(worker: worker, ids: mine.map(\.id), reason: nil, now: clock)
                held[worker]?.removeAll { delivery in mine.contains { $0.id == delivery.id } }
                moves["release", default: 0] += mine.count
            case 78..<86:
                _ = try await store.extendLeases(worker: worker, ids: held[worker, default: []].map(\.id), until: clock + 100, now: clock)
            case 86..<93:
                _ = try await store.cancel(app: "app", job: jobs.randomElement(using: &random)!, webhook: nil, now: clock)
                moves["cancel", default: 0] += 1
            default:
                _ = try await store.eraseUser(app: "app", user: "u\(Int.random(in: 0..<4, using: &random))", now: clock)
                moves["erase", default: 0] += 1
            }
            for job in jobs { try await Self.expectCountsMatch(store, job: job, step: step) }
        }
        // Every kind of move happened, and deliveries reached every state.
        #expect(["submit", "claim", "record", "release", "cancel", "erase"].allSatisfy { moves[$0, default: 0] > 0 }, "\(moves)")
        var reached = Set<DeliveryState>()
        for job in jobs { reached.formUnion(try await store.deliveries(job: job, state: nil, after: nil, limit: 1_000).map(\.state)) }
        #expect(reached == Set(DeliveryState.allCases), "states reached: \(reached)")
        // A finished job's `job.done` event carries its final counts.
        var done = 0
        for event in try await store.webhookEvents(app: "app", before: nil, limit: 1_000) where event.body.contains("\"job.done\"") {
            let body = try JSONSerialization.jsonObject(with: Data(event.body.utf8)) as? [String: Any]
            guard let job = body?["job"] as? String, let counts = body?["counts"] as? [String: Int] else {
                Issue.record("a job.done event without its job and counts: \(event.body)")
                continue
            }
            let truth = try await Self.countedDeliveries(store, job: job)
            for state in DeliveryState.allCases {
                #expect(counts[state.rawValue] == truth[state, default: 0], "job.done of \(job): \(counts), deliveries \(truth)")
            }
            done += 1
        }
        #expect(done > 0, "some job finished with its job.done event")
    }

    /// The job's deliveries, counted by state one by one.
    static func countedDeliveries(_ store: any GatewayStore, job: String) async throws -> [DeliveryState: Int] {
        var truth: [DeliveryState: Int] = [:]
        for delivery in try await store.deliveries(job: job, state: nil, after: nil, limit: 1_000) { truth[delivery.state, default: 0] += 1 }
        return truth
    }

    static func expectCountsMatch(_ store: any GatewayStore, job: String, step: Int) async throws {
        let summary = try #require(try await store.job(app: "app", id: job))
        let truth = try await countedDeliveries(store, job: job)
        #expect(summary.counts == truth, "step \(step), job \(job): counts \(summary.counts), deliveries \(truth)")
        let open = truth[.queued, default: 0] + truth[.claimed, default: 0]
        #expect(summary.open == open && (summary.finishedAt != nil) == (open == 0), "step \(step), job \(job): open \(summary.open), finished \(summary.finishedAt as Any)")
    }
}

/// The moves a statement collects (`StateChanges`, which counts runs of one job's moves before
/// adding them) add up to what counting every move one by one gives.
@Test func stateChangesAddUpLikeMovesCountedOneByOne() {
    var generator = SystemRandomNumberGenerator()
    let jobs: [String?] = ["job-a", "job-b", "job-c", nil]
    let states = DeliveryState.allCases
    for _ in 0..<2_000 {
        var changes = SQLGatewayStore.StateChanges()
        var expected: [String: [DeliveryState: Int]] = [:]
        var job = jobs.randomElement(using: &generator)!
        for _ in 0..<Int.random(in: 0..<60, using: &generator) {
            // Mostly runs of one job, as a batch's rows come; sometimes another, or none.
            if Int.random(in: 0..<5, using: &generator) == 0 { job = jobs.randomElement(using: &generator)! }
            let old = states.randomElement(using: &generator)!
            let new = Int.random(in: 0..<8, using: &generator) == 0 ? nil : states.randomElement(using: &generator)!
            changes.move(job, from: old, to: new)
            if let job, let new, old != new {
                expected[job, default: [:]][old, default: 0] -= 1
                expected[job, default: [:]][new, default: 0] += 1
            }
        }
        let counted = changes.jobs.mapValues { $0.filter { $0.value != 0 } }.filter { !$0.value.isEmpty }
        #expect(counted == expected.mapValues { $0.filter { $0.value != 0 } }.filter { !$0.value.isEmpty })
    }
}

