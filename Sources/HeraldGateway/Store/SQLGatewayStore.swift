import HeraldProtocol
import HeraldSQL

/// The gateway's store over either database: every statement and its control flow written once,
/// with `?` for bound values; ``GatewayDatabase`` runs them on SQLite or PostgreSQL.
///
/// Locking: on PostgreSQL several processes share the rows, so claims skip rows another holds
/// (`FOR UPDATE SKIP LOCKED`) and every statement that writes several claimed rows first locks
/// those this worker still holds in the order of their ids (two processes whose claims overlap
/// then wait for each other in one order and never deadlock; PostgreSQL would end one of the
/// pair with 40P01). SQLite has one process and one connection; its transactions take the
/// file's write lock at once.
final class SQLGatewayStore: GatewayStore {
    let database: any GatewayDatabase
    private let dialect: GatewaySchema.Dialect

    /// Rows per multi-row statement: SQLite allows 32,766 bound values in one statement,
    /// PostgreSQL 65,535; an `IN` list of ids stays at a thousand.
    static let rowsPerInsert = 2_000
    static let idsPerStatement = 1_000

    init(_ database: any GatewayDatabase) {
        self.database = database
        dialect = database.dialect
    }

    func migrate() async throws { try await database.migrate() }

    // MARK: Apps and keys

    func insertApp(_ app: StoredApp) async throws -> Bool {
        !(try await database.query(
            "INSERT INTO apps (id, definition, created_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING id",
            [.text(app.id), .text(app.definition), .integer(app.createdAt), .integer(app.updatedAt)])).isEmpty
    }

    private static let appColumns = "id, definition, created_at, updated_at, paused_at, paused_reason, paused_advice"

    func app(id: String) async throws -> StoredApp? {
        try await database.query("SELECT \(Self.appColumns) FROM apps WHERE id = ?", [.text(id)]).first.map(Self.app(from:))
    }

    func apps() async throws -> [StoredApp] {
        try await database.query("SELECT \(Self.appColumns) FROM apps ORDER BY id").map(Self.app(from:))
    }

    private static func app(from row: SQLRow) -> StoredApp {
        let created = row.integer("created_at") ?? 0
        return StoredApp(
            id: row.text("id") ?? "", definition: row.text("definition") ?? "{}", createdAt: created, updatedAt: row.integer("updated_at") ?? created,
            pausedAt: row.integer("paused_at"), pausedReason: row.text("paused_reason"), pausedAdvice: row.text("paused_advice"))
    }

    func updateApp(id: String, definition: String, resume: Bool, now: Int64) async throws -> StoredApp? {
        let pause = resume ? ", paused_at = NULL, paused_reason = NULL, paused_advice = NULL" : ""
        return try await database.query(
            "UPDATE apps SET definition = ?, updated_at = ?\(pause) WHERE id = ? RETURNING \(Self.appColumns)",
            [.text(definition), .integer(now), .text(id)]).first.map(Self.app(from:))
    }

    func pauseApp(id: String, version: Int64, reason: String, advice: String, webhook: String?, now: Int64) async throws -> Bool {
        try await database.transaction { executor in
            let paused = !(try await executor.query(
                "UPDATE apps SET paused_at = ?, paused_reason = ?, paused_advice = ? WHERE id = ? AND paused_at IS NULL AND updated_at = ? RETURNING id",
                [.integer(now), .text(reason), .text(advice), .text(id), .integer(version)])).isEmpty
            if paused, let webhook { try await Self.insertWebhook(app: id, body: webhook, now: now, on: executor) }
            return paused
        }
    }

    func resumeApp(id: String, now: Int64) async throws -> Bool {
        !(try await database.query(
            "UPDATE apps SET paused_at = NULL, paused_reason = NULL, paused_advice = NULL WHERE id = ? AND paused_at IS NOT NULL RETURNING id", [.text(id)])).isEmpty
    }

    func deleteApp(id: String) async throws -> AppDeletion? {
        try await database.transaction { executor in
            var counts: [String: Int] = [:]
            for table in ["webhook_events", "deliveries", "jobs", "devices"] {
                let row = try await executor.query("SELECT count(*) AS n FROM \(table) WHERE app_id = ?", [.text(id)]).first
                counts[table] = Int(row?.integer("n") ?? 0)
                try await executor.query("DELETE FROM \(table) WHERE app_id = ?", [.text(id)])
            }
            guard !(try await executor.query("DELETE FROM apps WHERE id = ? RETURNING id", [.text(id)])).isEmpty else { return nil }
            return AppDeletion(
                devices: counts["devices"] ?? 0, notifications: counts["jobs"] ?? 0, deliveries: counts["deliveries"] ?? 0,
                webhookEvents: counts["webhook_events"] ?? 0)
        }
    }

    private static func insertWebhook(app: String, body: String, now: Int64, on executor: any SQLExecutor) async throws {
        try await executor.query(
            "INSERT INTO webhook_events (app_id, body, state, due_at, attempts, created_at) VALUES (?, ?, 'queued', ?, 0, ?)",
            [.text(app), .text(body), .integer(now), .integer(now)])
    }

    func insertKey(_ key: StoredKey) async throws {
        try await database.query(
            "INSERT INTO api_keys (id, hash, name, apps, created_at) VALUES (?, ?, ?, ?, ?)",
            [.text(key.id), .text(key.hash), .text(key.name), .text(GatewaySchema.encodeApps(key.apps)), .integer(key.createdAt)])
    }

    func key(hash: String) async throws -> StoredKey? {
        try await database.query("SELECT id, hash, name, apps, created_at FROM api_keys WHERE hash = ?", [.text(hash)]).first.map(Self.key(from:))
    }

    func keys() async throws -> [StoredKey] {
        try await database.query("SELECT id, hash, name, apps, created_at FROM api_keys ORDER BY created_at, id").map(Self.key(from:))
    }

    private static func key(from row: SQLRow) -> StoredKey {
        StoredKey(
            id: row.text("id") ?? "", hash: row.text("hash") ?? "", name: row.text("name") ?? "",
            apps: GatewaySchema.decodeApps(row.text("apps") ?? "*"), createdAt: row.integer("created_at") ?? 0)
    }

    func deleteKey(id: String) async throws -> Bool {
        !(try await database.query("DELETE FROM api_keys WHERE id = ? RETURNING id", [.text(id)])).isEmpty
    }

    // MARK: Devices

    func upsertDevices(app: String, tokens: [DeviceToken], tags: DeviceTags, now: Int64) async throws {
        // Distinct (one statement may not update a row twice) and sorted, so two submissions
        // naming the same devices lock them in one order.
        let hex = Set(tokens.map(\.hex)).sorted()
        let tagText = GatewaySchema.encodeTags(tags.replace ?? [])
        let keepTags = tags.replace == nil ? "devices.tags" : "excluded.tags"
        let dialect = self.dialect
        try await database.transaction { executor in
            for chunk in hex.chunked(Self.rowsPerInsert) {
                var binds: [SQLValue] = []
                binds.reserveCapacity(chunk.count * 4)
                for token in chunk { binds += [.text(app), .text(token), .text(tagText), .integer(now)] }
                try await executor.query(
                    "INSERT INTO devices (app_id, token, state, tags, updated_at) VALUES "
                        + Array(repeating: "(?, ?, 'active', ?, ?)", count: chunk.count).joined(separator: ", ")
                        + " ON CONFLICT (app_id, token) DO UPDATE SET state = 'active', tags = \(keepTags), reason = NULL, dead_at = NULL, updated_at = excluded.updated_at",
                    binds)
                let scope = "app_id = ? AND token IN (\(placeholders(chunk.count)))"
                let rows: [SQLValue] = [.text(app)] + chunk.map(SQLValue.text)
                // ",a,b," holds each tag between commas: adding appends "t,", removing replaces ",t," by ",".
                for tag in tags.add {
                    let wrapped = GatewaySchema.encodeTags([tag])
                    try await executor.query(
                        "UPDATE devices SET tags = CASE WHEN \(dialect.tagged) THEN tags WHEN tags = '' THEN ? ELSE tags || ? END WHERE \(scope)",
                        [.text(wrapped), .text(wrapped), .text(tag + ",")] + rows)
                }
                for tag in tags.remove {
                    let wrapped = GatewaySchema.encodeTags([tag])
                    try await executor.query(
                        "UPDATE devices SET tags = CASE WHEN replace(tags, ?, ',') = ',' THEN '' ELSE replace(tags, ?, ',') END WHERE \(scope)",
                        [.text(wrapped), .text(wrapped)] + rows)
                }
            }
        }
    }

    func devices(app: String, state: DeviceState?, tag: String?, after: String?, limit: Int) async throws -> [StoredDevice] {
        var statement = SQLStatement("SELECT token, state, tags, reason, dead_at, updated_at FROM devices WHERE app_id = ?", [.text(app)])
        statement.and("state = ?", state.map { .text($0.rawValue) })
        statement.and(dialect.tagged, tag.map { .text(GatewaySchema.encodeTags([$0])) })
        statement.and("token > ?", after.map(SQLValue.text))
        statement.append(" ORDER BY token LIMIT ?", SQLValue(limit))
        return try await database.query(statement).map { row in
            StoredDevice(
                token: row.text("token") ?? "", state: DeviceState(rawValue: row.text("state") ?? "") ?? .active,
                tags: GatewaySchema.decodeTags(row.text("tags") ?? ""), reason: row.text("reason"),
                deadAt: row.integer("dead_at"), updatedAt: row.integer("updated_at") ?? 0)
        }
    }

    func deleteDevice(app: String, token: DeviceToken) async throws -> Bool {
        !(try await database.query("DELETE FROM devices WHERE app_id = ? AND token = ? RETURNING token", [.text(app), .text(token.hex)])).isEmpty
    }

    func audience(app: String, tag: String?) async throws -> [DeviceToken] {
        var statement = SQLStatement("SELECT token FROM devices WHERE app_id = ? AND state = 'active'", [.text(app)])
        statement.and(dialect.tagged, tag.map { .text(GatewaySchema.encodeTags([$0])) })
        statement.append(" ORDER BY token")
        return try await database.query(statement).compactMap { row in
            row.text("token").flatMap { try? DeviceToken(hex: $0) }
        }
    }

    // MARK: Notifications

    func submit(_ job: NewJob) async throws -> SubmitResult {
        do {
            return try await submitOnce(job)
        } catch where job.idempotencyKey != nil && database.isUniqueViolation(error) {
            // The same key submitted at the same moment by another request: its job stands.
            return try await submitOnce(job)
        }
    }

    private func submitOnce(_ job: NewJob) async throws -> SubmitResult {
        let database = self.database
        return try await database.transaction { executor in
            if let key = job.idempotencyKey,
               let row = try await executor.query(
                   "SELECT id, request_hash FROM jobs WHERE app_id = ? AND idempotency_key = ?", [.text(job.app), .text(key)]).first,
               let id = row.text("id") {
                guard row.text("request_hash") == job.requestHash else { return .conflict(jobID: id) }
                return .existing(try await Self.found(executor, app: job.app, id: id))
            }
            try await executor.query(
                "INSERT INTO jobs (id, app_id, idempotency_key, request_hash, headers, payload, expires_at, token_count, created_at, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    .text(job.id), .text(job.app), SQLValue(job.idempotencyKey), .text(job.requestHash), .text(job.headers),
                    .blob(job.payload), .integer(job.expiresAt), SQLValue(job.tokens.count), .integer(job.now), SQLValue(job.metadata),
                ])
            try await database.insertDeliveries(job, on: executor)
            // Tokens APNs called dead are not sent again: recorded as skipped, with the reason.
            try await executor.query(
                """
                UPDATE deliveries SET state = 'skipped', reason = d.reason, unregistered_at = d.dead_at
                FROM devices d WHERE deliveries.job_id = ? AND d.app_id = ? AND d.token = deliveries.token AND d.state = 'dead'
                """,
                [.text(job.id), .text(job.app)])
            // What is left to send; a job of dead tokens only is done at once.
            let open = try await executor.query(
                """
                UPDATE jobs SET open_deliveries = (SELECT count(*) FROM deliveries WHERE job_id = ? AND state = 'queued')
                WHERE id = ? RETURNING open_deliveries
                """,
                [.text(job.id), .text(job.id)]).first?.integer("open_deliveries") ?? 0
            if open == 0 { try await Self.finish(job: job.id, app: job.app, metadata: job.metadata, webhook: job.doneWebhook, now: job.now, on: executor) }
            return .created(try await Self.found(executor, app: job.app, id: job.id))
        }
    }

    /// Marks a job finished and stores its `job.done` event when the app's webhook wants it.
    private static func finish(job: String, app: String, metadata: String?, webhook: Bool, now: Int64, on executor: any SQLExecutor) async throws {
        try await executor.query("UPDATE jobs SET finished_at = ? WHERE id = ? AND finished_at IS NULL", [.integer(now), .text(job)])
        guard webhook else { return }
        var counts: [DeliveryState: Int] = [:]
        for row in try await executor.query("SELECT state, count(*) AS n FROM deliveries WHERE job_id = ? GROUP BY state", [.text(job)]) {
            if let state = row.text("state").flatMap(DeliveryState.init(rawValue:)) { counts[state] = Int(row.integer("n") ?? 0) }
        }
        try await insertWebhook(app: app, body: WebhookEvents.jobDone(app: app, job: job, metadata: metadata, counts: counts, now: now), now: now, on: executor)
    }

    func job(app: String, id: String) async throws -> JobSummary? {
        // One transaction: the job and its counts as of one moment.
        try await database.transaction { executor in try await Self.summary(executor, app: app, id: id) }
    }

    /// ``summary(_:app:id:)`` of a job the caller found or inserted in the same transaction.
    private static func found(_ executor: any SQLExecutor, app: String, id: String) async throws -> JobSummary {
        guard let summary = try await summary(executor, app: app, id: id) else {
            throw GatewayStoreError(message: "the job \(id) vanished inside its transaction")
        }
        return summary
    }

    /// The job `id` of `app` with its deliveries counted by state.
    private static func summary(_ executor: any SQLExecutor, app: String, id: String) async throws -> JobSummary? {
        guard let row = try await executor.query(
            "SELECT \(jobColumns) FROM jobs WHERE app_id = ? AND id = ?", [.text(app), .text(id)]).first
        else { return nil }
        var counts: [DeliveryState: Int] = [:]
        for count in try await executor.query("SELECT state, count(*) AS n FROM deliveries WHERE job_id = ? GROUP BY state", [.text(id)]) {
            if let state = count.text("state").flatMap(DeliveryState.init(rawValue:)) { counts[state] = Int(count.integer("n") ?? 0) }
        }
        var summary = job(from: row)
        summary.counts = counts
        return summary
    }

    private static let jobColumns = "id, app_id, headers, expires_at, token_count, created_at, open_deliveries, finished_at, metadata"

    private static func job(from row: SQLRow) -> JobSummary {
        JobSummary(
            id: row.text("id") ?? "", app: row.text("app_id") ?? "", headers: row.text("headers") ?? "{}", expiresAt: row.integer("expires_at") ?? 0,
            tokenCount: Int(row.integer("token_count") ?? 0), createdAt: row.integer("created_at") ?? 0, counts: [:],
            open: Int(row.integer("open_deliveries") ?? 0), finishedAt: row.integer("finished_at"), metadata: row.text("metadata"))
    }

    func jobs(app: String, status: JobStatus?, from: Int64?, until: Int64?, before: JobCursor?, limit: Int) async throws -> [JobSummary] {
        var statement = SQLStatement("SELECT \(Self.jobColumns) FROM jobs WHERE app_id = ?", [.text(app)])
        switch status {
        case .sending?: statement.append(" AND open_deliveries > 0")
        case .done?: statement.append(" AND open_deliveries = 0")
        case nil: break
        }
        statement.and("created_at >= ?", from.map(SQLValue.integer))
        statement.and("created_at < ?", until.map(SQLValue.integer))
        if let before {
            // Newest first, and stable while jobs are added: strictly after the cursor.
            statement.append(" AND (created_at < ? OR (created_at = ? AND id < ?))", .integer(before.createdAt), .integer(before.createdAt), .text(before.id))
        }
        statement.append(" ORDER BY created_at DESC, id DESC LIMIT ?", SQLValue(limit))
        return try await database.query(statement).map(Self.job(from:))
    }

    func deliveries(job: String, state: DeliveryState?, after: Int64?, limit: Int) async throws -> [StoredDelivery] {
        var statement = SQLStatement(
            "SELECT id, token, apns_id, state, attempts, status, reason, unregistered_at, updated_at FROM deliveries WHERE job_id = ?", [.text(job)])
        statement.and("state = ?", state.map { .text($0.rawValue) })
        statement.and("id > ?", after.map(SQLValue.integer))
        statement.append(" ORDER BY id LIMIT ?", SQLValue(limit))
        return try await database.query(statement).map { row in
            StoredDelivery(
                id: row.integer("id") ?? 0, token: row.text("token") ?? "", apnsID: row.text("apns_id") ?? "",
                state: DeliveryState(rawValue: row.text("state") ?? "") ?? .queued, attempts: Int(row.integer("attempts") ?? 0),
                status: row.integer("status").map { Int($0) }, reason: row.text("reason"),
                unregisteredAt: row.integer("unregistered_at"), updatedAt: row.integer("updated_at") ?? 0)
        }
    }

    func jobContent(id: String) async throws -> JobContent? {
        guard let row = try await database.query("SELECT app_id, headers, payload, expires_at, metadata FROM jobs WHERE id = ?", [.text(id)]).first else { return nil }
        return JobContent(
            id: id, app: row.text("app_id") ?? "", headers: row.text("headers") ?? "{}", payload: row.blob("payload"),
            expiresAt: row.integer("expires_at") ?? 0, metadata: row.text("metadata"))
    }

    // MARK: Dispatch

    func claim(worker: String, limit: Int, now: Int64, leaseUntil: Int64, takeOver: Bool) async throws -> [ClaimedDelivery] {
        let claimable = takeOver ? "(state = 'queued' OR (state = 'claimed' AND claimed_by <> ?))" : "state = 'queued'"
        var binds: [SQLValue] = [.text(worker), .integer(leaseUntil), .integer(now), .integer(now)]
        if takeOver { binds.append(.text(worker)) }
        binds.append(SQLValue(limit))
        return try await database.query(
            """
            UPDATE deliveries SET
                reclaimed_from = CASE WHEN state = 'claimed' THEN claimed_by ELSE reclaimed_from END,
                state = 'claimed', claimed_by = ?, due_at = ?, attempts = attempts + 1, updated_at = ?
            WHERE id IN (SELECT id FROM deliveries
                         WHERE state IN ('queued', 'claimed') AND due_at <= ? AND \(claimable)
                           AND app_id NOT IN (SELECT id FROM apps WHERE paused_at IS NOT NULL)
                         ORDER BY due_at, id LIMIT ?\(dialect.skipLocked))
            RETURNING id, job_id, app_id, token, apns_id, attempts
            """,
            binds
        ).map { row in
            ClaimedDelivery(
                id: row.integer("id") ?? 0, job: row.text("job_id") ?? "", app: row.text("app_id") ?? "",
                token: row.text("token") ?? "", apnsID: row.text("apns_id") ?? "", attempts: Int(row.integer("attempts") ?? 0))
        }.sorted { $0.id < $1.id }
    }

    /// Locks, in the order of their ids, the rows of `ids` that `worker` still holds (PostgreSQL;
    /// SQLite's transaction holds the whole file). Its rows are read to the end: a result left
    /// unread would hold the connection.
    private func lockHeld(_ ids: ArraySlice<Int64>, worker: String, on executor: any SQLExecutor) async throws {
        guard !dialect.rowLock.isEmpty else { return }
        try await executor.query(
            "SELECT id FROM deliveries WHERE claimed_by = ? AND state = 'claimed' AND id IN (\(placeholders(ids.count))) ORDER BY id\(dialect.rowLock)",
            [.text(worker)] + ids.map(SQLValue.integer))
    }

    func record(_ outcomes: [DeliveryOutcome], worker: String, now: Int64) async throws {
        guard !outcomes.isEmpty else { return }
        try await database.transaction { executor in
            for chunk in outcomes.map(\.delivery.id).sorted().chunked(Self.idsPerStatement) {
                try await lockHeld(chunk, worker: worker, on: executor)
            }
            // Deliveries made final here, per job: the jobs' open counts go down by as many.
            var finals: [String: Int] = [:]
            // Accepted ones (nearly all) in a statement per thousand.
            let accepted = outcomes.filter { if case .accepted = $0.result { return $0.webhooks.isEmpty } else { return false } }.map(\.delivery.id)
            for chunk in accepted.chunked(Self.idsPerStatement) {
                let rows = try await executor.query(
                    "UPDATE deliveries SET state = 'accepted', status = 200, reason = NULL, claimed_by = NULL, updated_at = ? WHERE claimed_by = ? AND state = 'claimed' AND id IN (\(placeholders(chunk.count))) RETURNING job_id",
                    [.integer(now), .text(worker)] + chunk.map(SQLValue.integer))
                for row in rows { if let job = row.text("job_id") { finals[job, default: 0] += 1 } }
            }
            var dead: [(delivery: ClaimedDelivery, reason: String?, at: Int64?)] = []
            for outcome in outcomes {
                if case .accepted = outcome.result, outcome.webhooks.isEmpty { continue }
                let (assignments, values) = Self.assignments(for: outcome.result)
                let held: [SQLValue] = [.integer(now), .integer(outcome.delivery.id), .text(worker)]
                guard !(try await executor.query(
                    "UPDATE deliveries SET \(assignments), claimed_by = NULL, updated_at = ? WHERE id = ? AND claimed_by = ? AND state = 'claimed' RETURNING id",
                    values + held)).isEmpty
                else { continue }
                if outcome.result.isFinal { finals[outcome.delivery.job, default: 0] += 1 }
                if case .rejected(_, let reason, let unregisteredAt, true) = outcome.result {
                    dead.append((outcome.delivery, reason, unregisteredAt))
                }
                for body in outcome.webhooks {
                    try await Self.insertWebhook(app: outcome.delivery.app, body: body, now: now, on: executor)
                }
            }
            // Jobs in one order too; the one whose count reaches 0 is done.
            let doneWebhook = Set(outcomes.filter(\.doneWebhook).map(\.delivery.job))
            for (job, count) in finals.sorted(by: { $0.key < $1.key }) {
                guard let row = try await executor.query(
                    "UPDATE jobs SET open_deliveries = open_deliveries - ? WHERE id = ? RETURNING open_deliveries, app_id, metadata",
                    [SQLValue(count), .text(job)]).first, row.integer("open_deliveries") == 0
                else { continue }
                try await Self.finish(
                    job: job, app: row.text("app_id") ?? "", metadata: row.text("metadata"), webhook: doneWebhook.contains(job), now: now, on: executor)
            }
            // Devices too are locked in one order (app, then token) across processes.
            for (delivery, reason, unregisteredAt) in dead.sorted(by: { ($0.delivery.app, $0.delivery.token) < ($1.delivery.app, $1.delivery.token) }) {
                try await executor.query(
                    """
                    INSERT INTO devices (app_id, token, state, tags, reason, dead_at, updated_at) VALUES (?, ?, 'dead', '', ?, ?, ?)
                    ON CONFLICT (app_id, token) DO UPDATE SET state = 'dead', reason = excluded.reason, dead_at = excluded.dead_at, updated_at = excluded.updated_at
                    """,
                    [.text(delivery.app), .text(delivery.token), SQLValue(reason), .integer(unregisteredAt ?? now), .integer(now)])
            }
        }
    }

    /// The columns an outcome sets, with their values.
    private static func assignments(for result: DeliveryOutcome.Result) -> (String, [SQLValue]) {
        switch result {
        case .accepted(let status):
            return ("state = 'accepted', status = ?, reason = NULL", [SQLValue(status)])
        case .rejected(let status, let reason, let unregisteredAt, _):
            return ("state = 'rejected', status = ?, reason = ?, unregistered_at = ?", [SQLValue(status), SQLValue(reason), SQLValue(unregisteredAt)])
        case .retry(let at, let reason):
            return ("state = 'queued', due_at = ?, reason = ?", [.integer(at), SQLValue(reason)])
        case .expired(let reason):
            return ("state = 'expired', reason = ?", [SQLValue(reason)])
        }
    }

    func extendLeases(worker: String, ids: [Int64], until: Int64, now: Int64) async throws -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        return try await database.transaction { executor in
            var extended = Set<Int64>()
            for chunk in ids.sorted().chunked(Self.idsPerStatement) {
                try await lockHeld(chunk, worker: worker, on: executor)
                let rows = try await executor.query(
                    "UPDATE deliveries SET due_at = ? WHERE state = 'claimed' AND claimed_by = ? AND id IN (\(placeholders(chunk.count))) RETURNING id",
                    [.integer(until), .text(worker)] + chunk.map(SQLValue.integer))
                for row in rows { if let id = row.integer("id") { extended.insert(id) } }
            }
            return extended
        }
    }

    func existingDeliveries(ids: [Int64]) async throws -> Set<Int64> {
        var found = Set<Int64>()
        for chunk in ids.sorted().chunked(Self.idsPerStatement) {
            for row in try await database.query("SELECT id FROM deliveries WHERE id IN (\(placeholders(chunk.count)))", chunk.map(SQLValue.integer)) {
                if let id = row.integer("id") { found.insert(id) }
            }
        }
        return found
    }

    func release(worker: String, ids: [Int64], reason: String?, now: Int64) async throws {
        guard !ids.isEmpty else { return }
        try await database.transaction { executor in
            for chunk in ids.sorted().chunked(Self.idsPerStatement) {
                try await lockHeld(chunk, worker: worker, on: executor)
                // Given back as it was: the attempt it was claimed for was not made.
                try await executor.query(
                    "UPDATE deliveries SET state = 'queued', due_at = ?, attempts = attempts - 1, claimed_by = NULL, reason = coalesce(?, reason), updated_at = ? WHERE claimed_by = ? AND state = 'claimed' AND id IN (\(placeholders(chunk.count)))",
                    [.integer(now), SQLValue(reason), .integer(now), .text(worker)] + chunk.map(SQLValue.integer))
            }
        }
    }

    func queueDepth(now: Int64) async throws -> (waiting: Int, due: Int) {
        let row = try await database.query(
            "SELECT count(*) AS waiting, coalesce(sum(CASE WHEN due_at <= ? THEN 1 ELSE 0 END), 0) AS due FROM deliveries WHERE state IN ('queued', 'claimed')",
            [.integer(now)]).first
        return (Int(row?.integer("waiting") ?? 0), Int(row?.integer("due") ?? 0))
    }

    // MARK: Webhooks

    func claimWebhooks(worker: String, limit: Int, now: Int64, leaseUntil: Int64) async throws -> [WebhookEvent] {
        try await database.query(
            """
            UPDATE webhook_events SET state = 'claimed', claimed_by = ?, due_at = ?, attempts = attempts + 1
            WHERE id IN (SELECT id FROM webhook_events WHERE state IN ('queued', 'claimed') AND due_at <= ?
                         ORDER BY due_at, id LIMIT ?\(dialect.skipLocked))
            RETURNING id, app_id, body, attempts
            """,
            [.text(worker), .integer(leaseUntil), .integer(now), SQLValue(limit)]
        ).map { row in
            WebhookEvent(id: row.integer("id") ?? 0, app: row.text("app_id") ?? "", body: row.text("body") ?? "", attempts: Int(row.integer("attempts") ?? 0))
        }.sorted { $0.id < $1.id }
    }

    func finishWebhook(id: Int64, sent: Bool, retryAt: Int64?, error: String?, now: Int64) async throws {
        let state = sent ? "sent" : retryAt == nil ? "failed" : "queued"
        try await database.query(
            "UPDATE webhook_events SET state = ?, due_at = ?, last_error = ?, claimed_by = NULL, sent_at = ? WHERE id = ?",
            [.text(state), .integer(retryAt ?? now), SQLValue(error), sent ? .integer(now) : .null, .integer(id)])
    }

    // MARK: Retention

    func prune(before: Int64, batch: Int) async throws -> Pruned {
        let skipLocked = dialect.skipLocked
        return try await database.transaction { executor in
            var pruned = Pruned()
            // The oldest finished job first: its deliveries a batch at a time, then the job.
            if let job = try await executor.query(
                "SELECT id FROM jobs WHERE finished_at IS NOT NULL AND finished_at < ? ORDER BY finished_at, id LIMIT 1\(skipLocked)", [.integer(before)]
            ).first?.text("id") {
                let deleted = try await executor.query(
                    "DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries WHERE job_id = ? ORDER BY id LIMIT ?) RETURNING id",
                    [.text(job), SQLValue(batch)]).count
                pruned.deliveries = deleted
                if deleted < batch {
                    try await executor.query("DELETE FROM jobs WHERE id = ?", [.text(job)])
                    pruned.jobs = 1
                }
                pruned.more = true
            }
            let events = try await executor.query(
                """
                DELETE FROM webhook_events WHERE id IN (SELECT id FROM webhook_events
                    WHERE state IN ('sent', 'failed') AND created_at < ? ORDER BY created_at LIMIT ?\(skipLocked)) RETURNING id
                """,
                [.integer(before), SQLValue(batch)]).count
            pruned.webhookEvents = events
            if events == batch { pruned.more = true }
            return pruned
        }
    }

    // MARK: Health

    func ping() async throws { try await database.ping() }
    func probeConnection() async throws { try await database.probeConnection() }

    func probeWrite() async throws { try await database.probeWrite() }
    var canBeUnreachable: Bool { database.canBeUnreachable }
    func reconnect() async { await database.reconnect() }
    func classify(_ error: any Error) -> StoreFailureKind { database.classify(error) }
    func describe(_ error: any Error) -> String { database.describe(error) }
    func close() async { await database.close() }
}
