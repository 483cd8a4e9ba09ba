import HeraldAsync
import HeraldProtocol
import HeraldSQL

/// The gateway's store over either database: every statement and its control flow written once,
/// with `?` for bound values; ``GatewayDatabase`` runs them on SQLite or PostgreSQL.
///
/// Locking: on PostgreSQL several processes share the rows, so claims skip rows another holds
/// (`FOR UPDATE SKIP LOCKED`). The rows a process holds are written by its outcomes, lease
/// renewals and give-backs only (each statement names the holder), one transaction at a time
/// (``heldRows``): two of them writing the same rows in different orders would deadlock
/// (PostgreSQL would end one with 40P01). Another process's statements never wait for those rows
/// while holding rows they wait for: a takeover skips locked rows, and a holder's statement finds
/// a row taken over by a committed claim no longer its own. Jobs' rows are written last
/// (``StateChanges``). SQLite has one process and one connection; its transactions take the
/// file's write lock at once.
final class SQLGatewayStore: GatewayStore {
    let database: any GatewayDatabase
    let dialect: GatewaySchema.Dialect
    /// Held by each transaction that writes this process's claimed rows (outcomes, lease
    /// renewals, give-backs): they never wait for each other's row locks. Given up when the
    /// call holding it is abandoned (``heldTransaction(_:)``).
    private let heldRows = AsyncLock()

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

    /// A condition on `deliveries` (one bound value: the app's id): the app's deliveries, found
    /// through its jobs. The table has no index on `app_id` (schema migration 7): each
    /// delivery's two rewrites would add to it, for statements as rare as these.
    static let ofApp = "job_id IN (SELECT id FROM jobs WHERE app_id = ?)"

    func deleteApp(id: String) async throws -> AppDeletion? {
        try await database.transaction { executor in
            var counts: [String: Int] = [:]
            for table in ["webhook_events", "deliveries", "jobs", "devices", "activities", "start_tokens"] {
                // Deliveries are reached through their jobs (indexed by job, not by app).
                let rows = table == "deliveries" ? "\(table) WHERE \(Self.ofApp)" : "\(table) WHERE app_id = ?"
                let row = try await executor.query("SELECT count(*) AS n FROM \(rows)", [.text(id)]).first
                counts[table] = Int(row?.integer("n") ?? 0)
                try await executor.query("DELETE FROM \(rows)", [.text(id)])
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

    func upsertDevices(app: String, tokens: [DeviceToken], registration: DeviceRegistration, now: Int64) async throws {
        // Distinct (one statement may not update a row twice) and sorted, so two submissions
        // naming the same devices lock them in one order.
        let hex = Set(tokens.map(\.hex)).sorted()
        let tags = registration.tags
        let tagText = GatewaySchema.encodeTags(tags.replace ?? [])
        // What the registration leaves out stays; what it gives replaces.
        func kept(_ column: String, given: Bool) -> String { given ? "excluded.\(column)" : "devices.\(column)" }
        let update = [
            "state = 'active'", "tags = \(kept("tags", given: tags.replace != nil))", "reason = NULL", "dead_at = NULL", "updated_at = excluded.updated_at",
            "user_id = \(kept("user_id", given: registration.user != nil))", "language = \(kept("language", given: registration.language != nil))",
            "time_zone = \(kept("time_zone", given: registration.timeZone != nil))",
        ].joined(separator: ", ")
        let dialect = self.dialect
        try await database.transaction { executor in
            for chunk in hex.chunked(Self.rowsPerInsert) {
                var binds: [SQLValue] = []
                binds.reserveCapacity(chunk.count * 7)
                for token in chunk {
                    binds += [
                        .text(app), .text(token), .text(tagText), .integer(now), SQLValue(registration.user), SQLValue(registration.language),
                        SQLValue(registration.timeZone),
                    ]
                }
                try await executor.query(
                    "INSERT INTO devices (app_id, token, state, tags, updated_at, user_id, language, time_zone) VALUES "
                        + Array(repeating: "(?, ?, 'active', ?, ?, ?, ?, ?)", count: chunk.count).joined(separator: ", ")
                        + " ON CONFLICT (app_id, token) DO UPDATE SET \(update)",
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
                // The tag index follows the tags: what a tag audience reads.
                if tags.replace != nil {
                    try await executor.query("DELETE FROM device_tags WHERE \(scope)", rows)
                }
                for tag in (tags.replace ?? []) + tags.add {
                    try await executor.query(
                        "INSERT INTO device_tags (app_id, tag, token) VALUES " + Array(repeating: "(?, ?, ?)", count: chunk.count).joined(separator: ", ")
                            + " ON CONFLICT (app_id, tag, token) DO NOTHING",
                        chunk.flatMap { [SQLValue.text(app), .text(tag), .text($0)] })
                }
                for tag in tags.remove {
                    try await executor.query("DELETE FROM device_tags WHERE tag = ? AND \(scope)", [.text(tag)] + rows)
                }
            }
        }
    }

    private static let deviceColumns = "token, state, tags, reason, dead_at, updated_at, user_id, language, time_zone"

    func devices(app: String, filter: DeviceFilter, after: String?, limit: Int) async throws -> [StoredDevice] {
        var statement = SQLStatement("SELECT \(Self.deviceColumns) FROM devices WHERE app_id = ?", [.text(app)])
        statement.and("state = ?", filter.state.map { .text($0.rawValue) })
        statement.and("token IN (SELECT token FROM device_tags WHERE app_id = devices.app_id AND tag = ?)", filter.tag.map(SQLValue.text))
        statement.and("user_id = ?", filter.user.map(SQLValue.text))
        // Tokens are lower-case hex: those starting with `prefix` sort from it to it + "g".
        statement.and("token >= ?", filter.prefix.map(SQLValue.text))
        statement.and("token < ?", filter.prefix.map { .text($0 + "g") })
        statement.and("dead_at >= ?", filter.deadSince.map(SQLValue.integer))
        statement.and("token > ?", after.map(SQLValue.text))
        statement.append(" ORDER BY token LIMIT ?", SQLValue(limit))
        return try await database.query(statement).map { row in
            StoredDevice(
                token: row.text("token") ?? "", state: DeviceState(rawValue: row.text("state") ?? "") ?? .active,
                tags: GatewaySchema.decodeTags(row.text("tags") ?? ""), reason: row.text("reason"),
                deadAt: row.integer("dead_at"), updatedAt: row.integer("updated_at") ?? 0, user: row.text("user_id"),
                language: row.text("language"), timeZone: row.text("time_zone"))
        }
    }

    func deleteDevice(app: String, token: DeviceToken) async throws -> Bool {
        try await database.transaction { executor in
            try await executor.query("DELETE FROM device_tags WHERE app_id = ? AND token = ?", [.text(app), .text(token.hex)])
            return !(try await executor.query("DELETE FROM devices WHERE app_id = ? AND token = ? RETURNING token", [.text(app), .text(token.hex)])).isEmpty
        }
    }

    func eraseUser(app: String, user: String, now: Int64) async throws -> UserErasure? {
        let erasure = try await erase(app: app, user: user, now: now)
        if erasure != nil { try await database.forgetDeleted() }
        return erasure
    }

    private func erase(app: String, user: String, now: Int64) async throws -> UserErasure? {
        let dialect = self.dialect
        return try await database.transaction { executor in
            let tokens = try await executor.query(
                "DELETE FROM devices WHERE app_id = ? AND user_id = ? RETURNING token", [.text(app), .text(user)]).compactMap { $0.text("token") }.sorted()
            let startTokens = try await executor.query(
                "DELETE FROM start_tokens WHERE app_id = ? AND user_id = ? RETURNING token", [.text(app), .text(user)]).count
            let activities = try await executor.query(
                "UPDATE activities SET user_id = NULL WHERE app_id = ? AND user_id = ? RETURNING id", [.text(app), .text(user)]).count
            guard !tokens.isEmpty || startTokens > 0 || activities > 0 else { return nil }
            var erasure = UserErasure(devices: tokens.count, deliveries: 0, cancelled: 0, webhookEvents: 0, startTokens: startTokens, activities: activities)
            var changes = StateChanges()
            for chunk in tokens.chunked(Self.idsPerStatement) {
                let list = chunk.map(SQLValue.text)
                try await executor.query("DELETE FROM device_tags WHERE app_id = ? AND token IN (\(placeholders(chunk.count)))", [.text(app)] + list)
                // Nothing more is sent to them; what was sent keeps its outcome, not the token.
                let cancelled = try await executor.query(
                    "UPDATE deliveries SET state = 'cancelled', in_queue = 0, reason = 'the user was erased', claimed_by = NULL, updated_at = ? WHERE \(Self.ofApp) AND state = 'queued' AND token IN (\(placeholders(chunk.count))) RETURNING job_id",
                    [.integer(now), .text(app)] + list)
                erasure.cancelled += cancelled.count
                for row in cancelled { changes.move(row.text("job_id"), from: .queued, to: .cancelled) }
                erasure.deliveries += try await executor.query(
                    "UPDATE deliveries SET token = '' WHERE \(Self.ofApp) AND token IN (\(placeholders(chunk.count))) RETURNING id", [.text(app)] + list).count
                for token in chunk {
                    erasure.webhookEvents += try await executor.query(
                        "DELETE FROM webhook_events WHERE app_id = ? AND \(dialect.contains("body")) RETURNING id", [.text(app), .text(token)]).count
                }
            }
            // The jobs last, once every delivery row this needs is held (``StateChanges``).
            try await Self.apply(changes, now: now, on: executor)
            return erasure
        }
    }

    func audienceSize(app: String, audience: JobAudience) async throws -> Int {
        var statement = SQLStatement("SELECT count(*) AS n FROM devices d WHERE d.app_id = ? AND d.state = 'active'", [.text(app)])
        switch audience {
        case .tokens(let tokens): return tokens.count
        case .all: break
        case .tag(let tag): statement.and("d.token IN (SELECT token FROM device_tags WHERE app_id = d.app_id AND tag = ?)", .text(tag))
        case .users(let users):
            var total = 0
            for chunk in users.chunked(Self.idsPerStatement) {
                total += Int(try await database.query(
                    "SELECT count(*) AS n FROM devices WHERE app_id = ? AND state = 'active' AND user_id IN (\(placeholders(chunk.count)))",
                    [.text(app)] + chunk.map(SQLValue.text)).first?.integer("n") ?? 0)
            }
            return total
        }
        return Int(try await database.query(statement).first?.integer("n") ?? 0)
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
                """
                INSERT INTO jobs (id, app_id, idempotency_key, request_hash, headers, payload, expires_at, token_count, created_at, metadata, local_time, audience, trace_parent)
                VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?)
                """,
                [
                    .text(job.id), .text(job.app), SQLValue(job.idempotencyKey), .text(job.requestHash), .text(job.headers),
                    .blob(job.payload), .integer(job.expiresAt), .integer(job.now), SQLValue(job.metadata), SQLValue(job.localTime),
                    SQLValue(job.audienceDescription), SQLValue(job.traceParent),
                ])
            for variant in job.variants {
                try await executor.query(
                    "INSERT INTO job_variants (job_id, variant, language, payload) VALUES (?, ?, ?, ?)",
                    [.text(job.id), SQLValue(variant.index), .text(variant.language), .blob(variant.payload)])
            }
            // Each device's variant (its language) and due time (its zone), as CASE expressions
            // over the languages and zones the app's devices have: one statement for any
            // audience, its work linear in the audience.
            let cases = try await Self.deviceCases(job, on: executor)
            var usersWithoutDevices = 0
            switch job.audience {
            case .tokens:
                try await database.insertDeliveries(job, on: executor)
                if cases.dependsOnDevices {
                    try await executor.query(
                        """
                        UPDATE deliveries SET variant = \(cases.variant), due_at = \(cases.due)
                        FROM devices d WHERE deliveries.job_id = ? AND d.app_id = ? AND d.token = deliveries.token
                        """,
                        cases.variantBinds + cases.dueBinds + [.text(job.id), .text(job.app)])
                }
                // Tokens APNs called dead are not sent again: recorded as skipped, with the reason.
                try await executor.query(
                    """
                    UPDATE deliveries SET state = 'skipped', in_queue = 0, reason = d.reason, unregistered_at = d.dead_at
                    FROM devices d WHERE deliveries.job_id = ? AND d.app_id = ? AND d.token = deliveries.token AND d.state = 'dead'
                    """,
                    [.text(job.id), .text(job.app)])
            case .all, .tag, .users:
                var filters: [(String, [SQLValue])] = []
                switch job.audience {
                case .tag(let tag): filters = [("d.token IN (SELECT token FROM device_tags WHERE app_id = d.app_id AND tag = ?)", [.text(tag)])]
                case .users(let users):
                    filters = users.chunked(Self.idsPerStatement).map { ("d.user_id IN (\(placeholders($0.count)))", $0.map(SQLValue.text)) }
                    var found = 0
                    for chunk in users.chunked(Self.idsPerStatement) {
                        found += Int(try await executor.query(
                            "SELECT count(DISTINCT user_id) AS n FROM devices WHERE app_id = ? AND state = 'active' AND user_id IN (\(placeholders(chunk.count)))",
                            [.text(job.app)] + chunk.map(SQLValue.text)).first?.integer("n") ?? 0)
                    }
                    usersWithoutDevices = Set(users).count - found
                default: filters = [("1 = 1", [])]
                }
                // In the database: the audience never passes through this process's memory.
                // Their apns-id is made from the job's and the delivery's ids (``DeliveryIdentity``).
                for (filter, binds) in filters {
                    try await executor.query(
                        """
                        INSERT INTO deliveries (job_id, app_id, token, apns_id, state, in_queue, due_at, attempts, updated_at, variant)
                        SELECT ?, ?, d.token, '', 'queued', 1, \(cases.due), 0, ?, \(cases.variant) FROM devices d
                        WHERE d.app_id = ? AND d.state = 'active' AND \(filter) ORDER BY d.token
                        """,
                        [.text(job.id), .text(job.app)] + cases.dueBinds + [.integer(job.now)] + cases.variantBinds + [.text(job.app)] + binds)
                }
            }
            // What is left to send, when it is first due, what was skipped (one pass over the
            // job's deliveries); a job of dead tokens only is done at once.
            let summary = try await executor.query(
                """
                UPDATE jobs SET (token_count, open_deliveries, n_skipped, send_at) = (
                        SELECT count(*), coalesce(sum(CASE WHEN state = 'queued' THEN 1 ELSE 0 END), 0),
                            coalesce(sum(CASE WHEN state = 'skipped' THEN 1 ELSE 0 END), 0), min(CASE WHEN state = 'queued' THEN due_at END)
                        FROM deliveries WHERE job_id = ?),
                    users_without_devices = ?
                WHERE id = ? RETURNING open_deliveries, send_at
                """,
                [.text(job.id), SQLValue(usersWithoutDevices), .text(job.id)]).first
            let open = summary?.integer("open_deliveries") ?? 0
            if let first = summary?.integer("send_at"), first <= job.now {
                // Due at once: not a schedule.
                try await executor.query("UPDATE jobs SET send_at = NULL WHERE id = ?", [.text(job.id)])
            }
            if open == 0 { try await Self.finish(job: job.id, app: job.app, metadata: job.metadata, webhook: job.doneWebhook, now: job.now, on: executor) }
            return .created(try await Self.found(executor, app: job.app, id: job.id))
        }
    }

    /// The SQL that gives a device (`d`) its variant by language and its due time by zone, as
    /// CASE expressions over the languages and zones the app's devices have, with their bound
    /// values; without variants or a local-time schedule, the same for every device.
    private struct DeviceCases {
        var variant = "0"
        var variantBinds: [SQLValue] = []
        var due = "?"
        var dueBinds: [SQLValue]
        var dependsOnDevices: Bool { !variantBinds.isEmpty || dueBinds.count > 1 }
    }

    private static func deviceCases(_ job: NewJob, on executor: any SQLExecutor) async throws -> DeviceCases {
        var cases = DeviceCases(dueBinds: [.integer(job.dueAt(nil))])
        if job.isLocalSchedule {
            let zones = try await executor.query(
                "SELECT DISTINCT time_zone FROM devices WHERE app_id = ? AND time_zone IS NOT NULL", [.text(job.app)]).compactMap { $0.text("time_zone") }
            if !zones.isEmpty {
                cases.due = "CASE d.time_zone " + String(repeating: "WHEN ? THEN ? ", count: zones.count) + "ELSE ? END"
                cases.dueBinds = zones.sorted().flatMap { [SQLValue.text($0), .integer(job.dueAt($0))] } + [.integer(job.dueAt(nil))]
            }
        }
        if !job.variants.isEmpty {
            let languages = try await executor.query(
                "SELECT DISTINCT language FROM devices WHERE app_id = ? AND language IS NOT NULL", [.text(job.app)]).compactMap { $0.text("language") }
            let chosen = languages.sorted().map { ($0, job.variant($0)) }.filter { $0.1 != 0 }
            if !chosen.isEmpty {
                cases.variant = "CASE d.language " + String(repeating: "WHEN ? THEN ? ", count: chosen.count) + "ELSE 0 END"
                cases.variantBinds = chosen.flatMap { [SQLValue.text($0.0), SQLValue($0.1)] }
            }
        }
        return cases
    }

    /// Deliveries moved between states by one transaction, per job, for the jobs' counts
    /// (schema 9): ``apply(_:startedAt:doneWebhook:now:on:)`` writes them in the same transaction.
    ///
    /// Locking: a transaction writes the jobs' rows after every delivery row it changes, and in
    /// one order of jobs. Claims, outcomes, give-backs, cancels and erasures then wait for a job's
    /// row only while holding delivery rows nobody holding a job's row waits for, and never
    /// deadlock (PostgreSQL would end one of a pair with 40P01).
    struct StateChanges {
        private var counted: [String: [DeliveryState: Int]] = [:]
        /// The moves of one job from one state to another in a row, counted before they are
        /// added to `counted`: a batch's rows come mostly in runs of one job, and each addition
        /// hashes the job's id twice.
        private var run: (job: String, from: DeliveryState, to: DeliveryState, count: Int)?

        /// Each job's moves: the change of its count in each state.
        var jobs: [String: [DeliveryState: Int]] {
            var jobs = counted
            if let run { Self.add(run, to: &jobs) }
            return jobs
        }

        /// `count` deliveries of `job` (`nil`: a row read without its job, ignored) went from `old` to `new`.
        mutating func move(_ job: String?, from old: DeliveryState, to new: DeliveryState?, count: Int = 1) {
            guard let job, let new, old != new, count > 0 else { return }
            if let current = run, current.from == old, current.to == new, current.job == job {
                run?.count += count
                return
            }
            if let run { Self.add(run, to: &counted) }
            run = (job, old, new, count)
        }

        private static func add(_ run: (job: String, from: DeliveryState, to: DeliveryState, count: Int), to jobs: inout [String: [DeliveryState: Int]]) {
            jobs[run.job, default: [:]][run.from, default: 0] -= run.count
            jobs[run.job, default: [:]][run.to, default: 0] += run.count
        }
    }

    /// Adds `changes` to the jobs' counts, in one order of jobs; a job left with no open
    /// delivery by them is finished (with `job.done` when `doneWebhook` holds it). `startedAt`
    /// is the start of a job not started yet (a claim's).
    private static func apply(
        _ changes: StateChanges, startedAt: Int64? = nil, doneWebhook: Set<String> = [], now: Int64, on executor: any SQLExecutor
    ) async throws {
        for (job, delta) in changes.jobs.sorted(by: { $0.key < $1.key }) {
            let opened = delta.reduce(0) { $0 + ($1.key.isOpen ? $1.value : 0) }
            guard let row = try await executor.query(
                "UPDATE jobs SET open_deliveries = open_deliveries + ?, \(countsUpdate), started_at = coalesce(started_at, ?) WHERE id = ? RETURNING open_deliveries, app_id, metadata",
                [SQLValue(opened)] + DeliveryState.counted.map { SQLValue(delta[$0, default: 0]) } + [SQLValue(startedAt), .text(job)]).first,
                opened < 0, row.integer("open_deliveries") == 0
            else { continue }
            try await finish(job: job, app: row.text("app_id") ?? "", metadata: row.text("metadata"), webhook: doneWebhook.contains(job), now: now, on: executor)
        }
    }

    /// `n_claimed = n_claimed + ?, …` for every counted state, in ``DeliveryState/counted``'s order.
    private static let countsUpdate = DeliveryState.countedColumns.map { "\($0) = \($0) + ?" }.joined(separator: ", ")

    /// Marks a job finished and stores its `job.done` event when the app's webhook wants it.
    private static func finish(job: String, app: String, metadata: String?, webhook: Bool, now: Int64, on executor: any SQLExecutor) async throws {
        try await executor.query("UPDATE jobs SET finished_at = ? WHERE id = ? AND finished_at IS NULL", [.integer(now), .text(job)])
        guard webhook else { return }
        let counts = try await summary(executor, app: app, id: job)?.counts ?? [:]
        try await insertWebhook(app: app, body: WebhookEvents.jobDone(app: app, job: job, metadata: metadata, counts: counts, now: now), now: now, on: executor)
    }

    func job(app: String, id: String) async throws -> JobSummary? {
        // One transaction: the job and its counts as of one moment.
        try await database.transaction { executor in try await Self.summary(executor, app: app, id: id) }
    }

    func cancel(app: String, job: String, webhook: (@Sendable (StoredDelivery) -> String)?, now: Int64) async throws -> JobSummary? {
        try await database.transaction { executor in
            guard try await executor.query("SELECT id FROM jobs WHERE app_id = ? AND id = ?", [.text(app), .text(job)]).first != nil else {
                return nil
            }
            // Queued rows only: a row a worker claimed is being sent (it finishes, and is counted
            // as finishing), and a claim (SKIP LOCKED) never takes a row this statement holds.
            // Nothing cancelled is queued again (``queuedUnlessCancelled``). The job's row is
            // written after its deliveries' (``StateChanges``).
            let cancelled = try await executor.query(
                "UPDATE deliveries SET state = 'cancelled', in_queue = 0, reason = 'cancelled', updated_at = ? WHERE job_id = ? AND state = 'queued' RETURNING id, token, apns_id",
                [.integer(now), .text(job)])
            if let webhook {
                for row in cancelled {
                    let id = row.integer("id") ?? 0
                    let delivery = StoredDelivery(
                        id: id, token: row.text("token") ?? "", apnsID: DeliveryIdentity.apnsID(stored: row.text("apns_id"), job: job, delivery: id),
                        state: .cancelled, attempts: 0, status: nil, reason: "cancelled", unregisteredAt: nil, updatedAt: now)
                    try await Self.insertWebhook(app: app, body: webhook(delivery), now: now, on: executor)
                }
            }
            try await executor.query("UPDATE jobs SET cancelled_at = coalesce(cancelled_at, ?) WHERE id = ?", [.integer(now), .text(job)])
            var changes = StateChanges()
            for _ in cancelled { changes.move(job, from: .queued, to: .cancelled) }
            try await Self.apply(changes, now: now, on: executor)
            return try await Self.summary(executor, app: app, id: job)
        }
    }

    /// ``summary(_:app:id:)`` of a job the caller found or inserted in the same transaction.
    private static func found(_ executor: any SQLExecutor, app: String, id: String) async throws -> JobSummary {
        guard let summary = try await summary(executor, app: app, id: id) else {
            throw GatewayStoreError(message: "the job \(id) vanished inside its transaction")
        }
        return summary
    }

    /// The job `id` of `app` with its deliveries counted by state: one row, whatever the job's size.
    private static func summary(_ executor: any SQLExecutor, app: String, id: String) async throws -> JobSummary? {
        guard let row = try await executor.query(
            "SELECT \(jobColumns), \(DeliveryState.countedColumns.joined(separator: ", ")) FROM jobs WHERE app_id = ? AND id = ?", [.text(app), .text(id)]).first
        else { return nil }
        var summary = job(from: row)
        var counts: [DeliveryState: Int] = [:]
        for state in DeliveryState.counted { counts[state] = Int(row.integer(state.countColumn ?? "") ?? 0) }
        counts[.queued] = summary.open - (counts[.claimed] ?? 0)
        summary.counts = counts.filter { $0.value != 0 }
        return summary
    }

    private static let jobColumns = """
        id, app_id, headers, expires_at, token_count, created_at, open_deliveries, finished_at, metadata, send_at, local_time, started_at,
        cancelled_at, audience, users_without_devices
        """

    private static func job(from row: SQLRow) -> JobSummary {
        JobSummary(
            id: row.text("id") ?? "", app: row.text("app_id") ?? "", headers: row.text("headers") ?? "{}", expiresAt: row.integer("expires_at") ?? 0,
            tokenCount: Int(row.integer("token_count") ?? 0), createdAt: row.integer("created_at") ?? 0, counts: [:],
            open: Int(row.integer("open_deliveries") ?? 0), finishedAt: row.integer("finished_at"), metadata: row.text("metadata"),
            sendAt: row.integer("send_at"), localTime: row.text("local_time"), startedAt: row.integer("started_at"),
            cancelledAt: row.integer("cancelled_at"), audience: row.text("audience"), usersWithoutDevices: Int(row.integer("users_without_devices") ?? 0))
    }

    func jobs(app: String, status: JobStatus?, now: Int64, from: Int64?, until: Int64?, before: JobCursor?, limit: Int) async throws -> [JobSummary] {
        var statement = SQLStatement("SELECT \(Self.jobColumns) FROM jobs WHERE app_id = ?", [.text(app)])
        // As ``JobSummary/status(at:)`` says.
        let scheduled = "(started_at IS NULL AND coalesce(send_at, 0) > ?)"
        switch status {
        case .scheduled?: statement.append(" AND cancelled_at IS NULL AND open_deliveries > 0 AND \(scheduled)", .integer(now))
        case .sending?: statement.append(" AND cancelled_at IS NULL AND open_deliveries > 0 AND NOT \(scheduled)", .integer(now))
        case .done?: statement.append(" AND cancelled_at IS NULL AND open_deliveries = 0")
        case .cancelled?: statement.append(" AND cancelled_at IS NOT NULL")
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
            "SELECT id, token, apns_id, state, attempts, status, reason, unregistered_at, updated_at, due_at, variant FROM deliveries WHERE job_id = ?", [.text(job)])
        statement.and("state = ?", state.map { .text($0.rawValue) })
        statement.and("id > ?", after.map(SQLValue.integer))
        statement.append(" ORDER BY id LIMIT ?", SQLValue(limit))
        return try await database.query(statement).map { row in
            StoredDelivery(
                id: row.integer("id") ?? 0, token: row.text("token") ?? "",
                apnsID: DeliveryIdentity.apnsID(stored: row.text("apns_id"), job: job, delivery: row.integer("id") ?? 0),
                state: DeliveryState(rawValue: row.text("state") ?? "") ?? .queued, attempts: Int(row.integer("attempts") ?? 0),
                status: row.integer("status").map { Int($0) }, reason: row.text("reason"),
                unregisteredAt: row.integer("unregistered_at"), updatedAt: row.integer("updated_at") ?? 0, dueAt: row.integer("due_at"),
                variant: Int(row.integer("variant") ?? 0))
        }
    }

    func jobContent(id: String) async throws -> JobContent? {
        guard let row = try await database.query("SELECT app_id, headers, payload, expires_at, metadata, trace_parent FROM jobs WHERE id = ?", [.text(id)]).first
        else { return nil }
        var variants: [Int: [UInt8]] = [:]
        for variant in try await database.query("SELECT variant, payload FROM job_variants WHERE job_id = ?", [.text(id)]) {
            variants[Int(variant.integer("variant") ?? 0)] = variant.blob("payload")
        }
        return JobContent(
            id: id, app: row.text("app_id") ?? "", headers: row.text("headers") ?? "{}", payload: row.blob("payload"),
            expiresAt: row.integer("expires_at") ?? 0, metadata: row.text("metadata"), variants: variants, traceParent: row.text("trace_parent"))
    }

    // MARK: Dispatch

    /// The claim's statement and its values (see ``claim(worker:limit:now:leaseUntil:takeOver:)``).
    func claimStatement(worker: String, limit: Int, now: Int64, leaseUntil: Int64, takeOver: Bool) -> (String, [SQLValue]) {
        // The claim writes no column of the queue's index (its key, `due_at` and `id`, and its
        // predicate, `in_queue`), so on PostgreSQL it is a HOT update: no index entry written.
        // Rows claimed by others stay in the index at their due time, read and passed over.
        let claimable = takeOver ? "(state = 'queued' OR (state = 'claimed' AND claimed_by <> ? AND lease_until <= ?))" : "state = 'queued'"
        var binds: [SQLValue] = [.text(worker), .integer(leaseUntil), .integer(now), .integer(now)]
        if takeOver { binds += [.text(worker), .integer(now)] }
        binds.append(SQLValue(limit))
        let candidates = """
            FROM deliveries WHERE in_queue = 1 AND due_at <= ? AND \(claimable)
              AND app_id NOT IN (SELECT id FROM apps WHERE paused_at IS NOT NULL)
            ORDER BY due_at, id LIMIT ?
            """
        let sql: String
        if dialect == .postgres {
            // The rows the subquery locked are updated at their address (`ctid`, which a row
            // locked for this statement keeps): no second look-up through the primary key and
            // no set of ids built to join against (0.78x the claim's time a row, in a
            // claim-and-record loop of 100,000 rows).
            sql = """
                UPDATE deliveries d SET
                    reclaimed_from = CASE WHEN d.state = 'claimed' THEN d.claimed_by ELSE d.reclaimed_from END,
                    taken_over = CASE WHEN d.state = 'claimed' THEN 1 ELSE NULL END,
                    state = 'claimed', claimed_by = ?, lease_until = ?, attempts = d.attempts + 1, updated_at = ?
                FROM (SELECT ctid \(candidates)\(dialect.skipLocked)) claimable
                WHERE d.ctid = claimable.ctid
                RETURNING d.id, d.job_id, d.app_id, d.token, d.apns_id, d.attempts, d.variant, d.reason, d.taken_over
                """
        } else {
            sql = """
                UPDATE deliveries SET
                    reclaimed_from = CASE WHEN state = 'claimed' THEN claimed_by ELSE reclaimed_from END,
                    taken_over = CASE WHEN state = 'claimed' THEN 1 ELSE NULL END,
                    state = 'claimed', claimed_by = ?, lease_until = ?, attempts = attempts + 1, updated_at = ?
                WHERE id IN (SELECT id \(candidates))
                RETURNING id, job_id, app_id, token, apns_id, attempts, variant, reason, taken_over
                """
        }
        return (sql, binds)
    }

    /// How the database would run a claim now (PostgreSQL's `EXPLAIN`, as the claim is planned).
    func explainClaim(now: Int64) async throws -> String {
        let (sql, binds) = claimStatement(worker: "explain", limit: 500, now: now, leaseUntil: now, takeOver: false)
        return try await claimTransaction { try await $0.query("EXPLAIN " + sql, binds) }.compactMap { $0.text("QUERY PLAN") }.joined(separator: "\n")
    }

    func claim(worker: String, limit: Int, now: Int64, leaseUntil: Int64, takeOver: Bool) async throws -> [ClaimedDelivery] {
        let (sql, binds) = claimStatement(worker: worker, limit: limit, now: now, leaseUntil: leaseUntil, takeOver: takeOver)
        return try await claimTransaction { executor in
            let rows = try await executor.query(sql, binds)
            // Taken from the queue, not over from another process (already counted as claimed).
            // A job's first claim also says when it started (a schedule that waited through an
            // outage says how late).
            var changes = StateChanges()
            for row in rows where row.integer("taken_over") != 1 { changes.move(row.text("job_id"), from: .queued, to: .claimed) }
            try await Self.apply(changes, startedAt: now, now: now, on: executor)
            return rows.map { row in
                let id = row.integer("id") ?? 0, job = row.text("job_id") ?? ""
                return ClaimedDelivery(
                    id: id, job: job, app: row.text("app_id") ?? "", token: row.text("token") ?? "",
                    apnsID: DeliveryIdentity.apnsID(stored: row.text("apns_id"), job: job, delivery: id), attempts: Int(row.integer("attempts") ?? 0),
                    variant: Int(row.integer("variant") ?? 0), lastReason: row.text("reason"))
            }.sorted { $0.id < $1.id }
        }
    }

    /// A claim's transaction. A claim (`UPDATE … WHERE id IN (SELECT … ORDER BY due_at, id
    /// LIMIT n)`) is planned as the queue's index in order, stopped after `n` rows, whatever the
    /// statistics say. On PostgreSQL, statistics taken before a large submission (autovacuum
    /// analyzes about a minute later) made the planner expect a few due rows, read every due row
    /// and sort them all for each claim: 50 ms a claim of 500 with 100,000 queued, growing with
    /// the queue. Sorts and bitmap scans are off for the claim's transaction alone.
    private func claimTransaction<T: Sendable>(_ body: @Sendable (any SQLExecutor) async throws -> T) async throws -> T {
        let postgres = dialect == .postgres
        return try await database.transaction { executor in
            if postgres {
                _ = try await executor.query("SELECT set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true)", [])
            }
            return try await body(executor)
        }
    }

    /// A transaction that writes rows `worker` holds, after those of this process before it
    /// (``heldRows``).
    private func heldTransaction<T: Sendable>(_ body: @Sendable (any SQLExecutor) async throws -> T) async throws -> T {
        // A transaction whose call is abandoned (its deadline passed, the database went away
        // under it) gives up its turn at once: one hung connection must not hold back this
        // process's lease renewals and outcomes until the server ends its session. If it still
        // runs, the worst is a deadlock PostgreSQL ends (40P01) and the caller tries again.
        try await heldRows.withCancellableLock { try await database.transaction(body) }
    }

    /// `id` among `ids`, for a statement's `WHERE`: `= ANY(?)` bound to one array on PostgreSQL
    /// (the statement's text and parameters the same whatever the count: a list of a thousand
    /// placeholders was parsed, bound and planned again for every batch of outcomes and
    /// leases), `IN (?, …)` on SQLite.
    private func among(_ ids: ArraySlice<Int64>) -> (condition: String, binds: [SQLValue]) {
        dialect == .postgres
            ? ("= ANY(?::bigint[])", [.integers(Array(ids))])
            : ("IN (\(placeholders(ids.count)))", ids.map(SQLValue.integer))
    }

    /// `update` (an `UPDATE … RETURNING job_id`) answering a row per job with how many of its
    /// deliveries moved (``moved(_:)``) on PostgreSQL, where a statement can be read in a `WITH`:
    /// a row per delivery was sent, decoded and converted only to be counted. SQLite answers a
    /// row per delivery.
    private func countedPerJob(_ update: String) -> String {
        dialect == .postgres ? "WITH moved AS (\(update)) SELECT job_id, count(*) AS moved FROM moved GROUP BY job_id" : update
    }

    /// How many deliveries a row of ``countedPerJob(_:)`` stands for.
    private static func moved(_ row: SQLRow) -> Int { row.integer("moved").map(Int.init) ?? 1 }

    func record(_ outcomes: [DeliveryOutcome], worker: String, now: Int64) async throws {
        guard !outcomes.isEmpty else { return }
        try await heldTransaction { executor in
            // Where each delivery went, per job, for the jobs' counts.
            var changes = StateChanges()
            // Accepted ones (nearly all) in a statement per thousand.
            let accepted = outcomes.filter { if case .accepted = $0.result { return $0.webhooks.isEmpty } else { return false } }.map(\.delivery.id)
            for chunk in accepted.chunked(Self.idsPerStatement) {
                let list = among(chunk)
                let rows = try await executor.query(
                    countedPerJob(
                        "UPDATE deliveries SET state = 'accepted', in_queue = 0, status = 200, reason = NULL, claimed_by = NULL, updated_at = ? WHERE claimed_by = ? AND state = 'claimed' AND id \(list.condition) RETURNING job_id"),
                    [.integer(now), .text(worker)] + list.binds)
                for row in rows { changes.move(row.text("job_id"), from: .claimed, to: .accepted, count: Self.moved(row)) }
            }
            var dead: [(delivery: ClaimedDelivery, reason: String?, at: Int64?)] = []
            for outcome in outcomes {
                if case .accepted = outcome.result, outcome.webhooks.isEmpty { continue }
                let (assignments, values) = Self.assignments(for: outcome.result)
                let held: [SQLValue] = [.integer(now), .integer(outcome.delivery.id), .text(worker)]
                guard let updated = try await executor.query(
                    "UPDATE deliveries SET \(assignments), claimed_by = NULL, updated_at = ? WHERE id = ? AND claimed_by = ? AND state = 'claimed' RETURNING state",
                    values + held).first
                else { continue }
                // A retry of a cancelled job's delivery is not queued again: it is cancelled.
                changes.move(outcome.delivery.job, from: .claimed, to: updated.text("state").flatMap(DeliveryState.init(rawValue:)))
                if case .rejected(_, let reason, let unregisteredAt, true) = outcome.result {
                    dead.append((outcome.delivery, reason, unregisteredAt))
                }
                for body in outcome.webhooks {
                    try await Self.insertWebhook(app: outcome.delivery.app, body: body, now: now, on: executor)
                }
            }
            try await Self.apply(changes, doneWebhook: Set(outcomes.filter(\.doneWebhook).map(\.delivery.job)), now: now, on: executor)
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

    /// What a delivery going back to the queue becomes: `queued`, or `cancelled` when its job
    /// was cancelled meanwhile (nothing of a cancelled job is queued again).
    static let queuedUnlessCancelled =
        "CASE WHEN (SELECT cancelled_at FROM jobs WHERE jobs.id = deliveries.job_id) IS NULL THEN 'queued' ELSE 'cancelled' END"
    /// `in_queue` beside ``queuedUnlessCancelled``: 1 while queued, 0 once final.
    static let inQueueUnlessCancelled =
        "CASE WHEN (SELECT cancelled_at FROM jobs WHERE jobs.id = deliveries.job_id) IS NULL THEN 1 ELSE 0 END"

    /// The columns an outcome sets, with their values.
    private static func assignments(for result: DeliveryOutcome.Result) -> (String, [SQLValue]) {
        switch result {
        case .accepted(let status):
            return ("state = 'accepted', in_queue = 0, status = ?, reason = NULL", [SQLValue(status)])
        case .rejected(let status, let reason, let unregisteredAt, _):
            return ("state = 'rejected', in_queue = 0, status = ?, reason = ?, unregistered_at = ?", [SQLValue(status), SQLValue(reason), SQLValue(unregisteredAt)])
        case .retry(let at, let reason):
            return ("state = \(queuedUnlessCancelled), in_queue = \(inQueueUnlessCancelled), due_at = ?, reason = ?", [.integer(at), SQLValue(reason)])
        case .expired(let reason):
            return ("state = 'expired', in_queue = 0, reason = ?", [SQLValue(reason)])
        }
    }

    func extendLeases(worker: String, ids: [Int64], until: Int64, now: Int64) async throws -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        return try await heldTransaction { executor in
            var extended = Set<Int64>()
            for chunk in ids.sorted().chunked(Self.idsPerStatement) {
                let list = among(chunk)
                let rows = try await executor.query(
                    "UPDATE deliveries SET lease_until = ? WHERE state = 'claimed' AND claimed_by = ? AND id \(list.condition) RETURNING id",
                    [.integer(until), .text(worker)] + list.binds)
                for row in rows { if let id = row.integer("id") { extended.insert(id) } }
            }
            return extended
        }
    }

    func existingDeliveries(ids: [Int64]) async throws -> Set<Int64> {
        var found = Set<Int64>()
        for chunk in ids.sorted().chunked(Self.idsPerStatement) {
            let list = among(chunk)
            for row in try await database.query("SELECT id FROM deliveries WHERE id \(list.condition)", list.binds) {
                if let id = row.integer("id") { found.insert(id) }
            }
        }
        return found
    }

    func release(worker: String, ids: [Int64], reason: String?, now: Int64) async throws {
        guard !ids.isEmpty else { return }
        try await heldTransaction { executor in
            var changes = StateChanges()
            for chunk in ids.sorted().chunked(Self.idsPerStatement) {
                let list = among(chunk)
                // Given back as it was: the attempt it was claimed for was not made. (A cancelled
                // job's is cancelled: final.)
                let rows = try await executor.query(
                    "UPDATE deliveries SET state = \(Self.queuedUnlessCancelled), in_queue = \(Self.inQueueUnlessCancelled), due_at = ?, attempts = attempts - 1, claimed_by = NULL, reason = coalesce(?, reason), updated_at = ? WHERE claimed_by = ? AND state = 'claimed' AND id \(list.condition) RETURNING job_id, state",
                    [.integer(now), SQLValue(reason), .integer(now), .text(worker)] + list.binds)
                for row in rows { changes.move(row.text("job_id"), from: .claimed, to: row.text("state").flatMap(DeliveryState.init(rawValue:))) }
            }
            try await Self.apply(changes, now: now, on: executor)
        }
    }

    func queueDepth(now: Int64) async throws -> (waiting: Int, due: Int) {
        let row = try await database.query(
            "SELECT count(*) AS waiting, coalesce(sum(CASE WHEN state = 'queued' AND due_at <= ? THEN 1 ELSE 0 END), 0) AS due FROM deliveries WHERE in_queue = 1",
            [.integer(now)]).first
        return (Int(row?.integer("waiting") ?? 0), Int(row?.integer("due") ?? 0))
    }

    // MARK: Webhooks

    func claimWebhooks(worker: String, limit: Int, now: Int64, leaseUntil: Int64) async throws -> [WebhookEvent] {
        let sql = """
            UPDATE webhook_events SET state = 'claimed', claimed_by = ?, due_at = ?, attempts = attempts + 1
            WHERE id IN (SELECT id FROM webhook_events WHERE state IN ('queued', 'claimed') AND due_at <= ?
                         ORDER BY due_at, id LIMIT ?\(dialect.skipLocked))
            RETURNING id, app_id, body, attempts
            """
        let binds: [SQLValue] = [.text(worker), .integer(leaseUntil), .integer(now), SQLValue(limit)]
        return try await claimTransaction { try await $0.query(sql, binds) }.map { row in
            WebhookEvent(id: row.integer("id") ?? 0, app: row.text("app_id") ?? "", body: row.text("body") ?? "", attempts: Int(row.integer("attempts") ?? 0))
        }.sorted { $0.id < $1.id }
    }

    func finishWebhook(id: Int64, sent: Bool, retryAt: Int64?, error: String?, attempt: WebhookAttempt?, now: Int64) async throws {
        let state = sent ? "sent" : retryAt == nil ? "failed" : "queued"
        try await database.query(
            """
            UPDATE webhook_events SET state = ?, due_at = ?, last_error = ?, claimed_by = NULL, sent_at = ?, last_status = ?, last_latency_ms = ?,
                last_answer = ?
            WHERE id = ?
            """,
            [
                .text(state), .integer(retryAt ?? now), SQLValue(error), sent ? .integer(now) : .null, SQLValue(attempt?.status),
                SQLValue(attempt?.milliseconds), SQLValue(attempt?.answer), .integer(id),
            ])
    }

    func webhookEvents(app: String, before: Int64?, limit: Int) async throws -> [StoredWebhookEvent] {
        var statement = SQLStatement(
            "SELECT id, body, state, attempts, last_error, last_status, last_latency_ms, last_answer, created_at, sent_at, due_at FROM webhook_events WHERE app_id = ?",
            [.text(app)])
        statement.and("id < ?", before.map(SQLValue.integer))
        statement.append(" ORDER BY id DESC LIMIT ?", SQLValue(limit))
        return try await database.query(statement).map { row in
            StoredWebhookEvent(
                id: row.integer("id") ?? 0, body: row.text("body") ?? "", state: row.text("state") ?? "", attempts: Int(row.integer("attempts") ?? 0),
                lastError: row.text("last_error"),
                lastAttempt: row.integer("last_latency_ms").map { WebhookAttempt(status: row.integer("last_status").map(Int.init), milliseconds: $0, answer: row.text("last_answer")) },
                createdAt: row.integer("created_at") ?? 0, sentAt: row.integer("sent_at"), dueAt: row.integer("due_at") ?? 0)
        }
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
            // Live Activities over and done with (their end or expiry sent, their channel gone).
            pruned.activities = try await executor.query(
                """
                DELETE FROM activities WHERE (app_id, id) IN (SELECT app_id, id FROM activities
                    WHERE state IN ('ended', 'expired') AND ended_at < ? AND due_at IS NULL AND claimed_by IS NULL ORDER BY ended_at LIMIT ?\(skipLocked))
                RETURNING id
                """,
                [.integer(before), SQLValue(batch)]).count
            if pruned.activities == batch { pruned.more = true }
            return pruned
        }
    }

    // MARK: Health

    func ping() async throws { try await database.ping() }
    func probeConnection(within timeout: Duration) async throws { try await database.probeConnection(within: timeout) }

    func probeWrite() async throws { try await database.probeWrite() }
    var canBeUnreachable: Bool { database.canBeUnreachable }
    func reconnect() async { await database.reconnect() }
    func classify(_ error: any Error) -> StoreFailureKind { database.classify(error) }
    func describe(_ error: any Error) -> String { database.describe(error) }
    func close() async { await database.close() }
}
