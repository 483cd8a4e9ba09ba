import Foundation
@testable import HeraldGateway
import HeraldProtocol
import HeraldSQL
import HeraldTestSupport
import Logging
import Testing

/// The gateway store's one contract, held against SQLite and PostgreSQL alike: what a
/// submission stores, idempotency, claims and their leases, outcomes, dead tokens, webhooks.
@Suite(.serialized) struct GatewayStoreContractTests {
    typealias Backend = GatewayHarness.Backend

    /// A store on a new database, and what keeps it alive.
    final class Opened: @unchecked Sendable {
        let store: any GatewayStore
        let keep: [AnyObject]
        init(_ store: any GatewayStore, keep: [AnyObject]) {
            self.store = store
            self.keep = keep
        }
    }

    static func open(_ backend: Backend) async throws -> Opened {
        let logger = Logger(label: "test")
        switch backend {
        case .sqlite:
            let directory = try TemporaryDirectory()
            return Opened(try await SQLiteGatewayDatabase.open(path: directory.path("gateway.db"), logger: logger), keep: [directory])
        case .postgres:
            let database = try await PostgresTestDatabase()
            return Opened(try await PostgresGatewayDatabase.open(url: database.url, logger: logger), keep: [database])
        }
    }

    static func tokens(_ count: Int, salt: Int = 0) -> [String] {
        (0..<count).map { String(format: "%02x", salt) + String(repeating: "ab", count: 29) + String(format: "%06x", $0) }
    }

    static func job(_ id: String, app: String = "app", tokens: [String], key: String? = nil, hash: String = "h", now: Int64 = 1_000, expiresAt: Int64 = 1_000_000) -> NewJob {
        NewJob(
            id: id, app: app, idempotencyKey: key, requestHash: hash, headers: #"{"pushType":"alert","topic":"com.example.app"}"#,
            payload: Array(#"{"aps":{"alert":"Hi"}}"#.utf8), expiresAt: expiresAt,
            audience: .tokens(tokens.enumerated().map { ($1, "00000000-0000-4000-8000-\(String(format: "%012x", $0))") }), now: now, dueAt: { _ in now })
    }

    static func summary(_ result: SubmitResult) -> JobSummary? {
        if case .created(let summary) = result { return summary }
        return nil
    }

    @Test(arguments: Backend.available)
    func appsAndKeys(_ backend: Backend) async throws {
        let opened = try await Self.open(backend)
        let store = opened.store
        defer { Task { await store.close() } }
        #expect(try await store.insertApp(StoredApp(id: "a", definition: #"{"x":1}"#, createdAt: 5, updatedAt: 5)))
        #expect(try await !store.insertApp(StoredApp(id: "a", definition: "{}", createdAt: 6, updatedAt: 6)), "an id is taken once")
        #expect(try await store.app(id: "a") == StoredApp(id: "a", definition: #"{"x":1}"#, createdAt: 5, updatedAt: 5))
        _ = try await store.insertApp(StoredApp(id: "b", definition: "{}", createdAt: 7, updatedAt: 7))
        #expect(try await store.apps().map(\.id) == ["a", "b"])
        let key = StoredKey(id: "k1", hash: "abc", name: "ops", apps: ["a", "b"], createdAt: 9)
        try await store.insertKey(key)
        try await store.insertKey(StoredKey(id: "k2", hash: "def", name: "admin", apps: nil, createdAt: 10))
        #expect(try await store.key(hash: "abc") == key)
        #expect(try await store.key(hash: "def")?.apps == nil, "an administrator's key is for every app")
        #expect(try await store.keys().map(\.id) == ["k1", "k2"])
        #expect(try await store.deleteKey(id: "k1"))
        #expect(try await store.key(hash: "abc") == nil)
        _ = try await store.submit(Self.job("j", app: "a", tokens: Self.tokens(2)))
        try await store.upsertDevices(app: "a", tokens: [try DeviceToken(hex: Self.tokens(1)[0])], tags: [], now: 1)
        // Changed in place: the definition and its version; a pause comes and goes.
        let changed = try await store.updateApp(id: "a", definition: #"{"x":2}"#, resume: false, now: 20)
        #expect(changed?.definition == #"{"x":2}"# && changed?.updatedAt == 20 && changed?.createdAt == 5)
        #expect(try await store.updateApp(id: "nope", definition: "{}", resume: false, now: 20) == nil)
        #expect(try await !store.pauseApp(id: "a", version: 5, reason: "an answer to the old credentials", advice: "", webhook: nil, now: 30), "the app changed since")
        #expect(try await store.pauseApp(id: "a", version: 20, reason: "APNs answered 403 InvalidProviderToken", advice: "PATCH", webhook: #"{"type":"app.paused"}"#, now: 30))
        #expect(try await !store.pauseApp(id: "a", version: 20, reason: "again", advice: "", webhook: #"{"type":"app.paused"}"#, now: 31), "paused once")
        let paused = try #require(try await store.app(id: "a"))
        #expect(paused.pausedAt == 30 && paused.pausedReason == "APNs answered 403 InvalidProviderToken" && paused.pausedAdvice == "PATCH")
        #expect(try await store.claim(worker: "w", limit: 10, now: 10_000, leaseUntil: 20_000, takeOver: true).isEmpty, "a paused app's deliveries wait")
        #expect(try await store.claimWebhooks(worker: "w", limit: 10, now: 100, leaseUntil: 200).map(\.body) == [#"{"type":"app.paused"}"#], "one app.paused, with the pause")
        #expect(try await store.resumeApp(id: "a", now: 40))
        #expect(try await !store.resumeApp(id: "a", now: 41), "resumed once")
        #expect(try await store.claim(worker: "w", limit: 10, now: 10_000, leaseUntil: 20_000, takeOver: true).count == 2)
        _ = try await store.pauseApp(id: "a", version: 20, reason: "r", advice: "a", webhook: nil, now: 50)
        #expect(try await store.updateApp(id: "a", definition: #"{"x":3}"#, resume: true, now: 60)?.pausedAt == nil, "a fix resumes")
        let deleted = try await store.deleteApp(id: "a")
        #expect(deleted == AppDeletion(devices: 1, notifications: 1, deliveries: 2, webhookEvents: 1))
        #expect(try await store.app(id: "a") == nil)
        #expect(try await store.job(app: "a", id: "j") == nil)
        #expect(try await store.devices(app: "a", state: nil, tag: nil, user: nil, after: nil, limit: 10).isEmpty, "its devices go with it")
        #expect(try await store.deleteApp(id: "a") == nil)
    }

    @Test(arguments: Backend.available)
    func devicesTagsAndAudiences(_ backend: Backend) async throws {
        let opened = try await Self.open(backend)
        let store = opened.store
        defer { Task { await store.close() } }
        let tokens = try Self.tokens(5).map { try DeviceToken(hex: $0) }
        try await store.upsertDevices(app: "a", tokens: Array(tokens.prefix(3)), tags: ["beta", "staff"], now: 1)
        try await store.upsertDevices(app: "a", tokens: Array(tokens.suffix(2)), tags: [], now: 2)
        // Without "tags", a registration keeps them; addTags and removeTags edit them.
        try await store.upsertDevices(app: "a", tokens: [tokens[4]], tags: DeviceTags(add: ["vip", "beta"]), now: 2)
        try await store.upsertDevices(app: "a", tokens: [tokens[4]], tags: DeviceTags(add: ["vip"], remove: ["beta", "never"]), now: 2)
        try await store.upsertDevices(app: "a", tokens: [tokens[4]], tags: DeviceTags(replace: nil), now: 2)
        #expect(try await store.devices(app: "a", state: nil, tag: nil, user: nil, after: tokens[3].hex, limit: 1).first?.tags == ["vip"])
        try await store.upsertDevices(app: "a", tokens: [tokens[4]], tags: DeviceTags(remove: ["vip"]), now: 2)
        #expect(try await store.devices(app: "a", state: nil, tag: nil, user: nil, after: tokens[3].hex, limit: 1).first?.tags == [])
        try await store.upsertDevices(app: "other", tokens: tokens, tags: ["beta"], now: 3)
        #expect(try await store.audienceTokens(app: "a", tag: nil) == tokens)
        #expect(try await store.audienceTokens(app: "a", tag: "beta") == Array(tokens.prefix(3)))
        #expect(try await store.audienceTokens(app: "a", tag: "bet").isEmpty, "a tag matches whole")
        let page = try await store.devices(app: "a", state: nil, tag: nil, user: nil, after: tokens[1].hex, limit: 2)
        #expect(page.map(\.token) == [tokens[2].hex, tokens[3].hex])
        #expect(page[0].tags == ["beta", "staff"] && page[0].state == .active)
        // A token's first digits find it (the console's search), whatever the other tokens.
        for token in tokens {
            for length in [2, 60, 65, 66] {
                let prefix = String(token.hex.prefix(length))
                let found = try await store.devices(app: "a", filter: DeviceFilter(prefix: prefix), after: nil, limit: 10)
                #expect(found.map(\.token) == tokens.map(\.hex).filter { $0.hasPrefix(prefix) }, "prefix \(prefix)")
            }
        }
        #expect(try await store.devices(app: "a", filter: DeviceFilter(prefix: String(tokens[2].hex)), after: nil, limit: 10).map(\.token) == [tokens[2].hex], "a whole token finds itself")
        #expect(try await store.devices(app: "a", filter: DeviceFilter(prefix: "f" + String(repeating: "f", count: 70)), after: nil, limit: 10).isEmpty)
        #expect(try await store.deleteDevice(app: "a", token: tokens[0]))
        #expect(try await !store.deleteDevice(app: "a", token: tokens[0]))
        #expect(try await store.audienceTokens(app: "a", tag: "beta") == [tokens[1], tokens[2]])
    }

    @Test(arguments: Backend.available)
    func submissionsAreIdempotentAndSkipDeadTokens(_ backend: Backend) async throws {
        let opened = try await Self.open(backend)
        let store = opened.store
        defer { Task { await store.close() } }
        let tokens = Self.tokens(4_500)
        // A token APNs called dead before: stored, and skipped with its reason and time.
        let dead = ClaimedDelivery(id: 0, job: "x", app: "app", token: tokens[7], apnsID: "x", attempts: 1)
        _ = try await store.submit(Self.job("old", tokens: [tokens[7]]))
        let claimed = try await store.claim(worker: "w", limit: 10, now: 1_000, leaseUntil: 2_000, takeOver: true)
        try await store.record(
            [DeliveryOutcome(delivery: claimed[0], result: .rejected(status: 410, reason: "Unregistered", unregisteredAt: 777, deadToken: true))],
            worker: "w", now: 1_001)
        _ = dead

        let created = try #require(Self.summary(try await store.submit(Self.job("j1", tokens: tokens, key: "k", hash: "h1"))))
        #expect(created.tokenCount == 4_500 && created.counts[.queued] == 4_499 && created.counts[.skipped] == 1)
        let skipped = try await store.deliveries(job: "j1", state: .skipped, after: nil, limit: 10)
        #expect(skipped.map(\.token) == [tokens[7]] && skipped[0].reason == "Unregistered" && skipped[0].unregisteredAt == 777)
        switch try await store.submit(Self.job("j2", tokens: tokens, key: "k", hash: "h1")) {
        case .existing(let summary): #expect(summary.id == "j1", "the same request: the first job")
        default: Issue.record("a resubmission with the same key and request is the first job")
        }
        switch try await store.submit(Self.job("j3", tokens: tokens, key: "k", hash: "other")) {
        case .conflict(let id): #expect(id == "j1")
        default: Issue.record("the same key for another request is a conflict")
        }
        #expect(try await store.job(app: "app", id: "j2") == nil)
        #expect(try await store.job(app: "app", id: "j3") == nil)
        #expect(Self.summary(try await store.submit(Self.job("j4", tokens: tokens, key: "k", hash: "h1") .withApp("other"))) != nil,
                "keys are per app")
        let all = try await store.deliveries(job: "j1", state: nil, after: nil, limit: 10_000)
        #expect(all.count == 4_500 && Set(all.map(\.apnsID)).count == 4_500)
        #expect(all.map(\.token) == tokens, "in the order given")
        let content = try #require(try await store.jobContent(id: "j1"))
        #expect(content.payload == Array(#"{"aps":{"alert":"Hi"}}"#.utf8) && content.app == "app")
        #expect(try await store.job(app: "other-app", id: "j1") == nil, "a job is looked up within its app")
    }

    @Test(arguments: Backend.available)
    func claimsAreLeasesAndOutcomesNeedTheLease(_ backend: Backend) async throws {
        let opened = try await Self.open(backend)
        let store = opened.store
        defer { Task { await store.close() } }
        _ = try await store.submit(Self.job("j", tokens: Self.tokens(10), now: 1_000))
        #expect(try await store.claim(worker: "a", limit: 10, now: 999, leaseUntil: 5_000, takeOver: true).isEmpty, "not due yet")
        let first = try await store.claim(worker: "a", limit: 4, now: 1_000, leaseUntil: 5_000, takeOver: true)
        #expect(first.count == 4 && first.allSatisfy { $0.attempts == 1 && $0.job == "j" })
        let second = try await store.claim(worker: "b", limit: 10, now: 1_000, leaseUntil: 20_000, takeOver: true)
        #expect(second.count == 6 && Set(first.map(\.id)).isDisjoint(with: second.map(\.id)), "claimed rows are not claimed again")
        #expect(try await store.claim(worker: "c", limit: 10, now: 4_999, leaseUntil: 9_000, takeOver: true).isEmpty)
        #expect(try await store.queueDepth(now: 4_999) == (waiting: 10, due: 0))
        // b, alive, extends its leases (the ids it holds); a, silent, does not.
        #expect(try await store.extendLeases(worker: "b", ids: second.map(\.id), until: 30_000, now: 4_999) == Set(second.map(\.id)))
        #expect(try await store.extendLeases(worker: "nobody", ids: second.map(\.id), until: 30_000, now: 4_999).isEmpty, "only the holder extends")
        #expect(try await store.extendLeases(worker: "b", ids: first.map(\.id), until: 30_000, now: 4_999).isEmpty, "only what it holds")
        #expect(try await store.claim(worker: "c", limit: 10, now: 20_000, leaseUntil: 20_001, takeOver: false).isEmpty,
                "after an outage, expired claims are left to their holder")
        #expect(try await store.claim(worker: "a", limit: 10, now: 20_000, leaseUntil: 20_001, takeOver: true).isEmpty,
                "a worker never takes over its own claims")
        #expect(try await store.claim(worker: "c", limit: 10, now: 20_000, leaseUntil: 20_001, takeOver: true).count == 4, "only a's ran out by then")
        try await store.release(worker: "c", ids: first.map(\.id), reason: nil, now: 4_999)

        // a's lease runs out: c takes a's four over (a second attempt each).
        let taken = try await store.claim(worker: "c", limit: 10, now: 5_000, leaseUntil: 9_000, takeOver: true)
        #expect(Set(taken.map(\.id)) == Set(first.map(\.id)) && taken.allSatisfy { $0.attempts == 2 })
        // a answers late: its outcome is not recorded, c's is.
        try await store.record(first.map { DeliveryOutcome(delivery: $0, result: .accepted(status: 200)) }, worker: "a", now: 5_001)
        #expect(try await store.job(app: "app", id: "j")?.counts[.accepted] == nil)
        try await store.record(taken.map { DeliveryOutcome(delivery: $0, result: .accepted(status: 200)) }, worker: "c", now: 5_002)
        #expect(try await store.job(app: "app", id: "j")?.counts[.accepted] == 4)

        // b: one retried later, one expired, one rejected (not dead), one given back unsent, two accepted.
        try await store.record([
            DeliveryOutcome(delivery: second[0], result: .retry(at: 8_000, reason: "ServiceUnavailable")),
            DeliveryOutcome(delivery: second[1], result: .expired(reason: "ServiceUnavailable")),
            DeliveryOutcome(delivery: second[2], result: .rejected(status: 400, reason: "BadTopic", unregisteredAt: nil, deadToken: false)),
            DeliveryOutcome(delivery: second[4], result: .accepted(status: 200)),
            DeliveryOutcome(delivery: second[5], result: .accepted(status: 200)),
        ], worker: "b", now: 5_003)
        try await store.release(worker: "b", ids: [second[3].id], reason: "waiting: the app is paused", now: 5_004)
        let counts = try #require(try await store.job(app: "app", id: "j")).counts
        #expect(counts[.accepted] == 6 && counts[.expired] == 1 && counts[.rejected] == 1 && counts[.queued] == 2)
        let released = try #require(try await store.claim(worker: "d", limit: 10, now: 5_004, leaseUntil: 9_000, takeOver: true).first)
        #expect(released.id == second[3].id && released.attempts == 1, "given back untried: its attempt does not count")
        #expect(try await store.claim(worker: "d", limit: 10, now: 7_999, leaseUntil: 9_000, takeOver: true).isEmpty)
        let retried = try await store.claim(worker: "d", limit: 10, now: 8_000, leaseUntil: 9_000, takeOver: true)
        #expect(retried.map(\.id) == [second[0].id] && retried[0].attempts == 2)
        let rows = try await store.deliveries(job: "j", state: nil, after: nil, limit: 100)
        #expect(rows.first { $0.id == second[2].id }?.reason == "BadTopic")
        #expect(rows.first { $0.id == second[1].id }?.state == .expired)
        #expect(rows.first { $0.id == second[3].id }?.reason == "waiting: the app is paused", "a give-back says why it waits")
    }

    /// Accepted outcomes are counted per job by the database on PostgreSQL (a row a job, not a
    /// row a delivery): one batch of several jobs, interleaved, over more than one statement's
    /// thousand ids, with outcomes of rows another worker holds among them.
    @Test(arguments: Backend.available)
    func acceptedOutcomesOfSeveralJobsAreCountedPerJob(_ backend: Backend) async throws {
        let opened = try await Self.open(backend)
        let store = opened.store
        defer { Task { await store.close() } }
        _ = try await store.submit(Self.job("big", tokens: Self.tokens(1_203, salt: 1), now: 1_000))
        _ = try await store.submit(Self.job("small", tokens: Self.tokens(3, salt: 2), now: 1_000))
        _ = try await store.submit(Self.job("held", tokens: Self.tokens(5, salt: 3), now: 1_000))
        let mine = try await store.claim(worker: "a", limit: 1_206, now: 1_000, leaseUntil: 9_000, takeOver: true)
        let theirs = try await store.claim(worker: "b", limit: 10, now: 1_000, leaseUntil: 9_000, takeOver: true)
        #expect(mine.count == 1_206 && theirs.count == 5 && Set(theirs.map(\.job)) == ["held"])
        // Interleaved by job (the runs StateChanges folds are short), b's rows among a's.
        let batch = (mine + theirs).sorted { ($0.id % 7, $0.id) < ($1.id % 7, $1.id) }
        try await store.record(batch.map { DeliveryOutcome(delivery: $0, result: .accepted(status: 200)) }, worker: "a", now: 2_000)
        let big = try #require(try await store.job(app: "app", id: "big"))
        let small = try #require(try await store.job(app: "app", id: "small"))
        let held = try #require(try await store.job(app: "app", id: "held"))
        #expect(big.counts == [.accepted: 1_203] && big.open == 0 && big.finishedAt == 2_000, "\(big.counts)")
        #expect(small.counts == [.accepted: 3] && small.open == 0 && small.finishedAt == 2_000, "\(small.counts)")
        #expect(held.counts == [.claimed: 5] && held.open == 5 && held.finishedAt == nil, "b's rows are b's to record: \(held.counts)")
        #expect(try await store.deliveries(job: "big", state: .accepted, after: nil, limit: 2_000).count == 1_203)
    }

    @Test(arguments: Backend.available)
    func deadTokensAndWebhooks(_ backend: Backend) async throws {
        let opened = try await Self.open(backend)
        let store = opened.store
        defer { Task { await store.close() } }
        let tokens = Self.tokens(3)
        try await store.upsertDevices(app: "app", tokens: tokens.map { try DeviceToken(hex: $0) }, tags: ["all"], now: 1)
        _ = try await store.submit(Self.job("j", tokens: tokens))
        let claimed = try await store.claim(worker: "w", limit: 3, now: 1_000, leaseUntil: 9_000, takeOver: true)
        try await store.record([
            DeliveryOutcome(delivery: claimed[0], result: .rejected(status: 410, reason: "Unregistered", unregisteredAt: 123_456, deadToken: true), webhooks: [#"{"type":"token.dead"}"#]),
            DeliveryOutcome(delivery: claimed[1], result: .rejected(status: 400, reason: "BadDeviceToken", unregisteredAt: nil, deadToken: true)),
            DeliveryOutcome(delivery: claimed[2], result: .accepted(status: 200), webhooks: [#"{"type":"delivery.accepted"}"#]),
        ], worker: "w", now: 2_000)
        let dead = try await store.devices(app: "app", state: .dead, tag: nil, user: nil, after: nil, limit: 10)
        #expect(dead.map(\.token) == [tokens[0], tokens[1]].sorted())
        #expect(dead.first { $0.token == tokens[0] }?.deadAt == 123_456 && dead.first { $0.token == tokens[1] }?.deadAt == 2_000)
        // Those that died since a time (the console's "which tokens died this week").
        #expect(try await store.devices(app: "app", filter: DeviceFilter(deadSince: 1_000), after: nil, limit: 10).map(\.token) == [tokens[0], tokens[1]].sorted())
        #expect(try await store.devices(app: "app", filter: DeviceFilter(deadSince: 2_001), after: nil, limit: 10).map(\.token) == [tokens[0]])
        #expect(try await store.devices(app: "app", filter: DeviceFilter(deadSince: 123_457), after: nil, limit: 10).isEmpty)
        #expect(try await store.audienceTokens(app: "app", tag: nil) == [try DeviceToken(hex: tokens[2])], "dead tokens leave the audience")
        // Registered again: active again.
        try await store.upsertDevices(app: "app", tokens: [try DeviceToken(hex: tokens[0])], tags: [], now: 3_000)
        #expect(try await store.devices(app: "app", state: .dead, tag: nil, user: nil, after: nil, limit: 10).map(\.token) == [tokens[1]])

        let events = try await store.claimWebhooks(worker: "w", limit: 10, now: 2_000, leaseUntil: 5_000)
        #expect(events.map(\.body) == [#"{"type":"token.dead"}"#, #"{"type":"delivery.accepted"}"#] && events.allSatisfy { $0.attempts == 1 })
        #expect(try await store.claimWebhooks(worker: "v", limit: 10, now: 4_999, leaseUntil: 9_000).isEmpty)
        try await store.finishWebhook(id: events[0].id, sent: true, retryAt: nil, error: nil, now: 2_100)
        try await store.finishWebhook(id: events[1].id, sent: false, retryAt: 3_000, error: "HTTP 500", now: 2_100)
        let again = try await store.claimWebhooks(worker: "v", limit: 10, now: 3_000, leaseUntil: 9_000)
        #expect(again.map(\.id) == [events[1].id] && again[0].attempts == 2)
        try await store.finishWebhook(
            id: events[1].id, sent: false, retryAt: nil, error: "HTTP 500", attempt: WebhookAttempt(status: 500, milliseconds: 42, answer: "busy"), now: 3_100)
        #expect(try await store.claimWebhooks(worker: "v", limit: 10, now: 99_999, leaseUntil: 999_999).isEmpty, "failed for good")
        // The console's list: newest first, each with what its last attempt got.
        let listed = try await store.webhookEvents(app: "app", before: nil, limit: 10)
        #expect(listed.map(\.id) == [events[1].id, events[0].id])
        #expect(listed[0].state == "failed" && listed[0].attempts == 2 && listed[0].lastError == "HTTP 500")
        #expect(listed[0].lastAttempt == WebhookAttempt(status: 500, milliseconds: 42, answer: "busy"))
        #expect(listed[1].state == "sent" && listed[1].sentAt == 2_100 && listed[1].lastAttempt == nil)
        #expect(try await store.webhookEvents(app: "app", before: events[1].id, limit: 10).map(\.id) == [events[0].id], "paged by id")
        #expect(try await store.webhookEvents(app: "other", before: nil, limit: 10).isEmpty)
    }

    @Test(arguments: Backend.available)
    func concurrentWorkersNeverShareARow(_ backend: Backend) async throws {
        let opened = try await Self.open(backend)
        let store = opened.store
        defer { Task { await store.close() } }
        _ = try await store.submit(Self.job("j", tokens: Self.tokens(2_000)))
        let claims = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for worker in 0..<6 {
                group.addTask {
                    var ids: [Int64] = []
                    while true {
                        let batch = try await store.claim(worker: "w\(worker)", limit: 37, now: 1_000, leaseUntil: 100_000, takeOver: true)
                        if batch.isEmpty { return ids }
                        ids += batch.map(\.id)
                    }
                }
            }
            var all: [[Int64]] = []
            for try await ids in group { all.append(ids) }
            return all
        }
        let flat = claims.flatMap { $0 }
        #expect(flat.count == 2_000 && Set(flat).count == 2_000, "each row claimed exactly once")
    }

    /// Processes starting at once on a new PostgreSQL database: one migrates, the others wait
    /// for it and find nothing to do; every one opens.
    /// A job is done when its last delivery is final (job.done stored with that outcome); the
    /// listing pages newest first without repeats while jobs arrive; retention prunes finished
    /// jobs' deliveries in batches, then the jobs, and old webhook events, never what is open.
    @Test(arguments: Backend.available)
    func jobsFinishListAndArePruned(_ backend: Backend) async throws {
        let opened = try await Self.open(backend)
        let store = opened.store
        defer { Task { await store.close() } }
        var job = Self.job("j1", tokens: Self.tokens(5), now: 1_000)
        job.metadata = #"{"order":42}"#
        job.doneWebhook = true
        _ = try await store.submit(job)
        #expect(try await store.job(app: "app", id: "j1")?.open == 5)
        let claimed = try await store.claim(worker: "w", limit: 5, now: 1_000, leaseUntil: 9_000, takeOver: true)
        try await store.record(claimed.prefix(2).map { DeliveryOutcome(delivery: $0, result: .accepted(status: 200), doneWebhook: true) }, worker: "w", now: 1_100)
        try await store.record([DeliveryOutcome(delivery: claimed[2], result: .retry(at: 1_200, reason: "TooManyRequests"), doneWebhook: true)], worker: "w", now: 1_100)
        #expect(try await store.job(app: "app", id: "j1")?.open == 3, "a retry stays open")
        #expect(try await store.claimWebhooks(worker: "w", limit: 10, now: 1_100, leaseUntil: 2_000).isEmpty, "not done yet")
        try await store.record([
            DeliveryOutcome(delivery: claimed[3], result: .rejected(status: 400, reason: "BadTopic", unregisteredAt: nil, deadToken: false), doneWebhook: true),
            DeliveryOutcome(delivery: claimed[4], result: .expired(reason: "x"), doneWebhook: true),
        ], worker: "w", now: 1_300)
        let retried = try await store.claim(worker: "w", limit: 5, now: 1_300, leaseUntil: 9_000, takeOver: true)
        try await store.record(retried.map { DeliveryOutcome(delivery: $0, result: .accepted(status: 200), doneWebhook: true) }, worker: "w", now: 1_400)
        let done = try #require(try await store.job(app: "app", id: "j1"))
        #expect(done.status(at: 2_000) == .done && done.finishedAt == 1_400 && done.metadata == #"{"order":42}"#)
        let events = try await store.claimWebhooks(worker: "w", limit: 10, now: 1_400, leaseUntil: 2_000)
        #expect(events.count == 1 && events[0].body.contains(#""type":"job.done""#) && events[0].body.contains(#""order":42"#))
        #expect(events[0].body.contains(#""accepted":3"#) && events[0].body.contains(#""rejected":1"#) && events[0].body.contains(#""expired":1"#), "\(events)")
        try await store.finishWebhook(id: events[0].id, sent: true, retryAt: nil, error: nil, now: 1_500)

        // Listing: newest first; a job arriving between pages does not shift them.
        for index in 2...6 { _ = try await store.submit(Self.job("j\(index)", tokens: Self.tokens(1, salt: index), now: 1_000 + Int64(index))) }
        let first = try await store.jobs(app: "app", status: nil, now: 1_000, from: nil, until: nil, before: nil, limit: 3)
        #expect(first.map(\.id) == ["j6", "j5", "j4"])
        _ = try await store.submit(Self.job("j7", tokens: Self.tokens(1, salt: 7), now: 2_000))
        let second = try await store.jobs(app: "app", status: nil, now: 1_000, from: nil, until: nil, before: JobCursor(createdAt: first[2].createdAt, id: first[2].id), limit: 3)
        #expect(second.map(\.id) == ["j3", "j2", "j1"])
        #expect(try await store.jobs(app: "app", status: .done, now: 1_000, from: nil, until: nil, before: nil, limit: 10).map(\.id) == ["j1"])
        #expect(try await store.jobs(app: "app", status: .sending, now: 1_000, from: 1_003, until: 1_005, before: nil, limit: 10).map(\.id) == ["j4", "j3"])

        // Retention: before j1 finished, nothing; after, its 5 deliveries in batches of 2, then
        // the job; the sent event; never the open jobs.
        #expect(try await store.prune(before: 1_400, batch: 2) == Pruned())
        var total = Pruned()
        var calls = 0
        while true {
            let pruned = try await store.prune(before: 10_000, batch: 2)
            calls += 1
            total.jobs += pruned.jobs
            total.deliveries += pruned.deliveries
            total.webhookEvents += pruned.webhookEvents
            if !pruned.more { break }
        }
        #expect(total == Pruned(jobs: 1, deliveries: 5, webhookEvents: 1, more: false) && calls == 4, "\(total) in \(calls) calls")
        #expect(try await store.job(app: "app", id: "j1") == nil)
        #expect(try await store.jobs(app: "app", status: nil, now: 1_000, from: nil, until: nil, before: nil, limit: 10).count == 6, "open jobs stay")
    }

    @Test func processesStartingAtOnceMigrateOnce() async throws {
        guard PostgresTestDatabase.isAvailable else {
            try Test.cancel(Comment(rawValue: "skipped: " + PostgresTestDatabase.notConfigured))
        }
        let database = try await PostgresTestDatabase()
        let logger = Logger(label: "test")
        let stores = try await withThrowingTaskGroup(of: SQLGatewayStore.self) { group in
            for _ in 0..<6 { group.addTask { try await PostgresGatewayDatabase.open(url: database.url, logger: logger, maximumConnections: 2) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(stores.count == 6)
        let versions = try await PostgresTestDatabase.psqlInBackground(database.url, "SELECT string_agg(version::text, ',' ORDER BY version) FROM herald_gateway_schema")
        let expected = GatewaySchema.migrations(for: .postgres).map { String($0.version) }.joined(separator: ",")
        #expect(versions.trimmingCharacters(in: .whitespacesAndNewlines) == expected, "each migration recorded once: \(versions)")
        for store in stores { await store.close() }
    }
    /// Cells of text and integer types are read straight from their binary bytes: each value
    /// equals what psql prints for the same row (PostgreSQL's own text output), at the types'
    /// extremes, in any script, and `NULL` stays `NULL`; a type read otherwise (a double, a
    /// boolean) still arrives through PostgresNIO's decoding.
    @Test(.enabled(if: PostgresTestDatabase.isAvailable, Comment(rawValue: PostgresTestDatabase.notConfigured)))
    func cellsReadFromTheirBytesAgreeWithPostgreSQL() async throws {
        let database = try await PostgresTestDatabase()
        let store = try await PostgresGatewayDatabase.open(url: database.url, logger: Logger(label: "test"))
        defer { Task { await store.close() } }
        let columns = [
            "(-32768)::int2", "32767::int2", "(-2147483648)::int4", "2147483647::int4", "(-9223372036854775808)::int8",
            "9223372036854775807::int8", "0::int8", "'é 😀 \u{5B57}'::text", "''::text", "'abc'::varchar(5)", "'pg_class'::name",
            "'ab'::char(4)", "2.5::float8", "true",
        ]
        let select = "SELECT " + columns.enumerated().map { "\($1) AS c\($0)" }.joined(separator: ", ")
        let expected = try await database.query(select + ", NULL::text AS n").split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        let row = try #require(try await store.database.query(select + ", NULL::text AS n", []).first)
        for (index, column) in columns.enumerated() {
            let text: String? = switch row["c\(index)"] {
            case .integer(let value): column == "true" ? (value == 1 ? "t" : "f") : String(value)
            case .text(let value): value
            case .real(let value): String(value)
            default: nil
            }
            #expect(text == expected[index], "\(column)")
        }
        #expect(row["n"] == .null)
    }

    /// A claim on PostgreSQL reads the queue's index in order and stops after its rows, even
    /// before the table has statistics (a large first submission, before autovacuum analyzes
    /// it): the planner then guesses a handful of due rows and would read and sort every one of
    /// them for each claim, a cost that grows with the queue.
    @Test(.enabled(if: PostgresTestDatabase.isAvailable, Comment(rawValue: PostgresTestDatabase.notConfigured)))
    func aClaimReadsTheQueueInOrderWhateverTheStatisticsSay() async throws {
        let database = try await PostgresTestDatabase()
        let store = try await PostgresGatewayDatabase.open(url: database.url, logger: Logger(label: "test"))
        defer { Task { await store.close() } }
        _ = try await store.insertApp(StoredApp(id: "app", definition: "{}", createdAt: 1, updatedAt: 1))
        _ = try await database.query("ALTER TABLE deliveries SET (autovacuum_enabled = false)")
        _ = try await store.submit(Self.job("large", tokens: Self.tokens(60_000, salt: 1)))
        let plan = try await store.explainClaim(now: 3_000)
        #expect(plan.contains("Index Scan using deliveries_due on deliveries") && !plan.contains("Sort"), "\(plan)")
        let claimed = try await store.claim(worker: "w", limit: 500, now: 3_000, leaseUntil: 60_000, takeOver: false)
        #expect(claimed.count == 500 && claimed.map(\.id) == claimed.map(\.id).sorted())
        // A claim and an outcome each rewrite the row and add an entry to every index of the
        // table (they change the queue's indexed columns): each index beyond the id, the job
        // and the queue costs every delivery twice. Deleting an app and erasing a user reach
        // deliveries through their jobs.
        // The claim and a lease renewal write no indexed column: HOT updates, no index entry
        // (with room kept in each page for them); the outcome leaves the queue's index.
        let claims = try await Self.updates(of: database, atLeast: 500)
        #expect(claims == (500, 500), "every claim a HOT update: \(claims)")
        // A renewal's new row version fits in its page once the claim's old versions are pruned
        // from it. The renewal prunes as it goes, but not while the server's view of the running
        // transactions is older than the claim (under the whole suite's load: 532 of 1,000 HOT,
        // twice), so a VACUUM (the table is kept from autovacuum) prunes first.
        try await Self.waitForNoOlderSnapshot(in: database)
        _ = try await database.query("VACUUM deliveries")
        let extended = try await store.extendLeases(worker: "w", ids: claimed.map(\.id), until: 90_000, now: 3_001)
        #expect(extended.count == 500)
        let before = try await Self.updates(of: database, atLeast: 1_000)
        #expect(before == (1_000, 1_000), "every claim and renewal a HOT update: \(before)")
        try await store.record(claimed.map { DeliveryOutcome(delivery: $0, result: .accepted(status: 200)) }, worker: "w", now: 3_002)
        let after = try await Self.updates(of: database, atLeast: before.all + 500)
        #expect(after.all == before.all + 500 && after.hot == before.hot, "the outcomes rewrite the row and its indexes: \(after) after \(before)")
        let indexes = try await database.query("SELECT indexname FROM pg_indexes WHERE tablename = 'deliveries' ORDER BY indexname")
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        #expect(indexes == ["deliveries_due", "deliveries_job", "deliveries_pkey"], "\(indexes)")
    }
}

extension GatewayStoreContractTests {
    /// A queue at schema 7 (the lease in `due_at`, the queue's index on `state`), a delivery
    /// claimed by a process at the time of the upgrade: after schema 8 it is still held until its
    /// lease runs out, then taken over; a queued one is claimed; a final one stays out. Schema 9
    /// counts the job's deliveries by state into the job's row.
    @Test func aQueueUpgradedToSchemas8And9KeepsItsClaimsLeasesAndCounts() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("gateway.db")
        let raw = try await SQLiteDatabase.open(path: path, logger: Logger(label: "test"))
        try await SchemaMigrator(Array(GatewaySchema.migrations(for: .sqlite).prefix(7)), record: .table(name: GatewaySchema.versionTable, serialize: nil)).migrate(raw)
        try await raw.query(
            """
            INSERT INTO deliveries (job_id, app_id, token, apns_id, state, due_at, attempts, updated_at, claimed_by) VALUES
            ('j', 'app', 'queued', '', 'queued', 100, 0, 1, NULL), ('j', 'app', 'held', '', 'claimed', 5000, 1, 1, 'w1'),
            ('j', 'app', 'done', '', 'accepted', 100, 1, 1, NULL)
            """, [])
        try await raw.query(
            """
            INSERT INTO jobs (id, app_id, request_hash, headers, payload, expires_at, token_count, created_at, open_deliveries)
            VALUES ('j', 'app', 'h', '{}', x'7b7d', 10000, 3, 1, 2)
            """, [])
        await raw.close()
        let store = try await SQLiteGatewayDatabase.open(path: path, logger: Logger(label: "test"))
        defer { Task { await store.close() } }
        // Schema 9 counts the job's deliveries into its row.
        #expect(try await store.job(app: "app", id: "j")?.counts == [.queued: 1, .claimed: 1, .accepted: 1])
        #expect(try await store.claim(worker: "w2", limit: 10, now: 1_000, leaseUntil: 9_000, takeOver: false).map(\.token) == ["queued"])
        #expect(try await store.claim(worker: "w2", limit: 10, now: 1_000, leaseUntil: 9_000, takeOver: true).isEmpty, "w1's lease runs to 5,000")
        #expect(try await store.queueDepth(now: 6_000) == (waiting: 2, due: 0), "two in the queue, both claimed")
        let taken = try await store.claim(worker: "w2", limit: 10, now: 6_000, leaseUntil: 9_000, takeOver: true)
        #expect(taken.map(\.token) == ["held"] && taken.first?.attempts == 2, "taken over once its lease ran out")
        try await store.record(taken.map { DeliveryOutcome(delivery: $0, result: .accepted(status: 200)) }, worker: "w2", now: 6_001)
        #expect(try await store.queueDepth(now: 6_001) == (waiting: 1, due: 0))
        #expect(try await store.job(app: "app", id: "j")?.counts == [.claimed: 1, .accepted: 2], "the takeover is not a second claim")
    }

    /// The deliveries table's updates and HOT updates (`pg_stat_user_tables`), once the server's
    /// statistics show at least `count` updates (they are flushed about once a second).
    /// Waits (up to 60 s) until no other session of `database` (or one still starting up)
    /// holds a snapshot.
    static func waitForNoOlderSnapshot(in database: PostgresTestDatabase) async throws {
        for _ in 0..<300 {
            let holders = try await database.query(
                """
                SELECT count(*) FROM pg_stat_activity
                WHERE (datname = current_database() OR datname IS NULL) AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL
                """)
            if holders.trimmingCharacters(in: .whitespacesAndNewlines) == "0" { return }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    static func updates(of database: PostgresTestDatabase, atLeast count: Int) async throws -> (all: Int, hot: Int) {
        var last = (all: 0, hot: 0)
        for _ in 0..<50 {
            let fields = try await database.query("SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'deliveries'")
                .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").compactMap { Int($0) }
            if fields.count == 2 { last = (fields[0], fields[1]) }
            if last.all >= count { return last }
            try await Task.sleep(for: .milliseconds(200))
        }
        return last
    }
}

extension NewJob {
    func withApp(_ app: String) -> NewJob {
        var copy = self
        copy.app = app
        copy.id += "-" + app
        return copy
    }
}

extension GatewayStore {
    /// The active tokens of an app (with `tag`, only those tagged so), in token order.
    func audienceTokens(app: String, tag: String?) async throws -> [DeviceToken] {
        try await devices(app: app, state: .active, tag: tag, user: nil, after: nil, limit: 1_000_000).compactMap { try? DeviceToken(hex: $0.token) }
    }
}
