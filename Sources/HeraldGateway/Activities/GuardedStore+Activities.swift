/// Live Activities' store calls, each with the guard's deadline and outage tracking.
extension GuardedStore {
    func upsertStartToken(app: String, token: String, attributesType: String, user: String?, now: Int64) async throws {
        try await call("upsertStartToken") { try await $0.upsertStartToken(app: app, token: token, attributesType: attributesType, user: user, now: now) }
    }

    func startTokens(app: String, user: String, attributesType: String) async throws -> [String] {
        try await call("startTokens") { try await $0.startTokens(app: app, user: user, attributesType: attributesType) }
    }

    func insertActivity(_ activity: StoredActivity) async throws -> Bool {
        try await call("insertActivity") { try await $0.insertActivity(activity) }
    }

    func activity(app: String, id: String) async throws -> StoredActivity? {
        try await call("activity") { try await $0.activity(app: app, id: id) }
    }

    func activities(app: String, state: ActivityState?, after: String?, limit: Int) async throws -> [StoredActivity] {
        try await call("activities") { try await $0.activities(app: app, state: state, after: after, limit: limit) }
    }

    func openActivities(app: String, attributesType: String) async throws -> [StoredActivity] {
        try await call("openActivities") { try await $0.openActivities(app: app, attributesType: attributesType) }
    }

    func changeActivity<T: Sendable>(app: String, id: String, _ change: @escaping @Sendable (inout StoredActivity) throws -> T) async throws -> T? {
        try await call("changeActivity") { try await $0.changeActivity(app: app, id: id, change) }
    }

    func claimActivities(worker: String, limit: Int, now: Int64, leaseUntil: Int64) async throws -> [StoredActivity] {
        try await call("claimActivities") { try await $0.claimActivities(worker: worker, limit: limit, now: now, leaseUntil: leaseUntil) }
    }

    func expireActivities(startedBefore: Int64, now: Int64) async throws -> Int {
        try await call("expireActivities") { try await $0.expireActivities(startedBefore: startedBefore, now: now) }
    }

    func deleteStartToken(app: String, token: String) async throws {
        try await call("deleteStartToken") { try await $0.deleteStartToken(app: app, token: token) }
    }
}
