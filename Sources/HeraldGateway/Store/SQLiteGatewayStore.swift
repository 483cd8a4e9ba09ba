import Foundation
import HeraldAsync
import HeraldProtocol
import Logging
import NIOCore
import SQLiteNIO

/// The gateway's store in one SQLite file (`herald serve --db FILE`): for one gateway process.
/// Every statement and transaction runs on one connection, one at a time; commits are durable
/// (WAL, `synchronous = FULL`) before a submission is acknowledged.
final class SQLiteGatewayStore: GatewayStore {
    private let connection: SQLiteConnection
    private let lock = AsyncLock()
    let path: String

    /// SQLite's limit on the parameters of one statement is 32,766; inserts stay well below.
    static let rowsPerInsert = 2_000

    private init(connection: SQLiteConnection, path: String) {
        self.connection = connection
        self.path = path
    }

    static func open(path: String, logger: Logger) async throws -> SQLiteGatewayStore {
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        } catch {
            throw GatewayStoreError(message: "cannot open the database '\(path)': \(error)")
        }
        let store = SQLiteGatewayStore(connection: connection, path: path)
        do {
            try await store.migrate()
        } catch {
            try? await connection.close()
            throw error
        }
        return store
    }

    // MARK: Statements

    @discardableResult
    private func query(_ sql: String, _ binds: [SQLiteData] = []) async throws -> [SQLiteRow] {
        let connection = self.connection
        return try await lock.withLock { try await connection.query(sql, binds) }
    }

    /// Runs `body` in one transaction (`BEGIN IMMEDIATE`: it takes the write lock at once).
    private func transaction<T: Sendable>(_ body: (SQLiteConnection) async throws -> T) async throws -> T {
        let connection = self.connection
        return try await lock.withLock {
            _ = try await connection.query("BEGIN IMMEDIATE")
            do {
                let result = try await body(connection)
                _ = try await connection.query("COMMIT")
                return result
            } catch {
                _ = try? await connection.query("ROLLBACK")
                throw error
            }
        }
    }

    // MARK: Schema

    func migrate() async throws {
        try await query("PRAGMA journal_mode = WAL")
        // FULL: a committed submission survives a power cut, not only a killed process.
        try await query("PRAGMA synchronous = FULL")
        try await query("PRAGMA foreign_keys = ON")
        try await query("CREATE TABLE IF NOT EXISTS herald_gateway_schema (version INTEGER NOT NULL)")
        let version = Int(try await query("SELECT max(version) AS v FROM herald_gateway_schema").first?.column("v")?.integer ?? 0)
        if version > GatewaySchema.version {
            throw GatewayStoreError(message: "the database '\(path)' was written by a newer Herald (schema \(version); this one knows \(GatewaySchema.version))")
        }
        for migration in GatewaySchema.migrations(for: .sqlite) where migration.version > version {
            try await transaction { connection in
                for statement in migration.statements { _ = try await connection.query(statement) }
                _ = try await connection.query("INSERT INTO herald_gateway_schema (version) VALUES (?)", [.integer(migration.version)])
            }
        }
    }

    // MARK: Apps and keys

    func insertApp(_ app: StoredApp) async throws -> Bool {
        let rows = try await query(
            "INSERT INTO apps (id, definition, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING id",
            [.text(app.id), .text(app.definition), .integer(Int(app.createdAt))])
        return !rows.isEmpty
    }

    func app(id: String) async throws -> StoredApp? {
        try await query("SELECT * FROM apps WHERE id = ?", [.text(id)]).first.map(Self.app(from:))
    }

    func apps() async throws -> [StoredApp] {
        try await query("SELECT * FROM apps ORDER BY id").map(Self.app(from:))
    }

    private static func app(from row: SQLiteRow) -> StoredApp {
        StoredApp(id: row.column("id")?.string ?? "", definition: row.column("definition")?.string ?? "{}", createdAt: Int64(row.column("created_at")?.integer ?? 0))
    }

    func deleteApp(id: String) async throws -> Bool {
        try await transaction { connection in
            for table in ["webhook_events", "deliveries", "jobs", "devices"] {
                _ = try await connection.query("DELETE FROM \(table) WHERE app_id = ?", [.text(id)])
            }
            return !(try await connection.query("DELETE FROM apps WHERE id = ? RETURNING id", [.text(id)])).isEmpty
        }
    }

    func insertKey(_ key: StoredKey) async throws {
        try await query(
            "INSERT INTO api_keys (id, hash, name, apps, created_at) VALUES (?, ?, ?, ?, ?)",
            [.text(key.id), .text(key.hash), .text(key.name), .text(GatewaySchema.encodeApps(key.apps)), .integer(Int(key.createdAt))])
    }

    func key(hash: String) async throws -> StoredKey? {
        try await query("SELECT * FROM api_keys WHERE hash = ?", [.text(hash)]).first.map(Self.key(from:))
    }

    func keys() async throws -> [StoredKey] {
        try await query("SELECT * FROM api_keys ORDER BY created_at, id").map(Self.key(from:))
    }

    private static func key(from row: SQLiteRow) -> StoredKey {
        StoredKey(
            id: row.column("id")?.string ?? "", hash: row.column("hash")?.string ?? "", name: row.column("name")?.string ?? "",
            apps: GatewaySchema.decodeApps(row.column("apps")?.string ?? "*"), createdAt: Int64(row.column("created_at")?.integer ?? 0))
    }

    func deleteKey(id: String) async throws -> Bool {
        !(try await query("DELETE FROM api_keys WHERE id = ? RETURNING id", [.text(id)])).isEmpty
    }

    // MARK: Devices

    func upsertDevices(app: String, tokens: [DeviceToken], tags: [String], now: Int64) async throws {
        let tagText = GatewaySchema.encodeTags(tags)
        try await transaction { connection in
            for chunk in tokens.chunked(Self.rowsPerInsert) {
                var binds: [SQLiteData] = []
                for token in chunk {
                    binds += [.text(app), .text(token.hex), .text(tagText), .integer(Int(now))]
                }
                _ = try await connection.query(
                    "INSERT INTO devices (app_id, token, state, tags, updated_at) VALUES "
                        + Array(repeating: "(?, ?, 'active', ?, ?)", count: chunk.count).joined(separator: ", ")
                        + " ON CONFLICT (app_id, token) DO UPDATE SET state = 'active', tags = excluded.tags, reason = NULL, dead_at = NULL, updated_at = excluded.updated_at",
                    binds)
            }
        }
    }

    func devices(app: String, state: DeviceState?, tag: String?, after: String?, limit: Int) async throws -> [StoredDevice] {
        var sql = "SELECT * FROM devices WHERE app_id = ?"
        var binds: [SQLiteData] = [.text(app)]
        if let state {
            sql += " AND state = ?"
            binds.append(.text(state.rawValue))
        }
        if let tag {
            sql += " AND instr(tags, ?) > 0"
            binds.append(.text(GatewaySchema.encodeTags([tag])))
        }
        if let after {
            sql += " AND token > ?"
            binds.append(.text(after))
        }
        sql += " ORDER BY token LIMIT ?"
        binds.append(.integer(limit))
        return try await query(sql, binds).map { row in
            StoredDevice(
                token: row.column("token")?.string ?? "", state: DeviceState(rawValue: row.column("state")?.string ?? "") ?? .active,
                tags: GatewaySchema.decodeTags(row.column("tags")?.string ?? ""), reason: row.column("reason")?.string,
                deadAt: row.column("dead_at")?.integer.map { Int64($0) }, updatedAt: Int64(row.column("updated_at")?.integer ?? 0))
        }
    }

    func deleteDevice(app: String, token: DeviceToken) async throws -> Bool {
        !(try await query("DELETE FROM devices WHERE app_id = ? AND token = ? RETURNING token", [.text(app), .text(token.hex)])).isEmpty
    }

    func audience(app: String, tag: String?) async throws -> [DeviceToken] {
        var sql = "SELECT token FROM devices WHERE app_id = ? AND state = 'active'"
        var binds: [SQLiteData] = [.text(app)]
        if let tag {
            sql += " AND instr(tags, ?) > 0"
            binds.append(.text(GatewaySchema.encodeTags([tag])))
        }
        return try await query(sql + " ORDER BY token", binds).compactMap { row in
            row.column("token")?.string.flatMap { try? DeviceToken(hex: $0) }
        }
    }

    // MARK: Notifications

    func submit(_ job: NewJob) async throws -> SubmitResult {
        try await transaction { connection in
            if let key = job.idempotencyKey {
                let rows = try await connection.query(
                    "SELECT id, request_hash FROM jobs WHERE app_id = ? AND idempotency_key = ?", [.text(job.app), .text(key)])
                if let row = rows.first, let id = row.column("id")?.string {
                    guard row.column("request_hash")?.string == job.requestHash else { return .conflict(jobID: id) }
                    return .existing(try await Self.summary(connection, app: job.app, id: id)!)
                }
            }
            _ = try await connection.query(
                "INSERT INTO jobs (id, app_id, idempotency_key, request_hash, headers, payload, expires_at, token_count, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    .text(job.id), .text(job.app), job.idempotencyKey.map { .text($0) } ?? .null, .text(job.requestHash), .text(job.headers),
                    .blob(ByteBuffer(bytes: job.payload)), .integer(Int(job.expiresAt)), .integer(job.tokens.count), .integer(Int(job.now)),
                ])
            for chunk in job.tokens.chunked(Self.rowsPerInsert) {
                var binds: [SQLiteData] = []
                for (token, apnsID) in chunk {
                    binds += [.text(job.id), .text(job.app), .text(token), .text(apnsID), .integer(Int(job.now))]
                }
                _ = try await connection.query(
                    "INSERT INTO deliveries (job_id, app_id, token, apns_id, state, due_at, attempts, updated_at) VALUES " + Self.deliveryRows(chunk.count),
                    Self.deliveryBinds(binds))
            }
            // Tokens APNs called dead are not sent again: recorded as skipped, with the reason.
            _ = try await connection.query(
                """
                UPDATE deliveries SET state = 'skipped',
                    reason = (SELECT d.reason FROM devices d WHERE d.app_id = deliveries.app_id AND d.token = deliveries.token),
                    unregistered_at = (SELECT d.dead_at FROM devices d WHERE d.app_id = deliveries.app_id AND d.token = deliveries.token)
                WHERE job_id = ? AND token IN (SELECT token FROM devices WHERE app_id = ? AND state = 'dead')
                """,
                [.text(job.id), .text(job.app)])
            return .created(try await Self.summary(connection, app: job.app, id: job.id)!)
        }
    }

    /// `(job, app, token, apns-id, 'queued', now, 0, now)` for each row.
    private static func deliveryRows(_ count: Int) -> String {
        Array(repeating: "(?, ?, ?, ?, 'queued', ?, 0, ?)", count: count).joined(separator: ", ")
    }

    /// The binds of ``deliveryRows(_:)``: each row's five values, its `now` given twice.
    private static func deliveryBinds(_ fives: [SQLiteData]) -> [SQLiteData] {
        var binds: [SQLiteData] = []
        binds.reserveCapacity(fives.count / 5 * 6)
        var index = 0
        while index < fives.count {
            binds += fives[index..<index + 5]
            binds.append(fives[index + 4])
            index += 5
        }
        return binds
    }

    func job(app: String, id: String) async throws -> JobSummary? {
        let connection = self.connection
        return try await lock.withLock { try await Self.summary(connection, app: app, id: id) }
    }

    private static func summary(_ connection: SQLiteConnection, app: String, id: String) async throws -> JobSummary? {
        guard let row = try await connection.query(
            "SELECT id, app_id, headers, expires_at, token_count, created_at FROM jobs WHERE app_id = ? AND id = ?", [.text(app), .text(id)]).first
        else { return nil }
        var counts: [DeliveryState: Int] = [:]
        for count in try await connection.query("SELECT state, count(*) AS n FROM deliveries WHERE job_id = ? GROUP BY state", [.text(id)]) {
            if let state = count.column("state")?.string.flatMap(DeliveryState.init(rawValue:)) { counts[state] = Int(count.column("n")?.integer ?? 0) }
        }
        return JobSummary(
            id: id, app: app, headers: row.column("headers")?.string ?? "{}", expiresAt: Int64(row.column("expires_at")?.integer ?? 0),
            tokenCount: Int(row.column("token_count")?.integer ?? 0), createdAt: Int64(row.column("created_at")?.integer ?? 0), counts: counts)
    }

    func deliveries(job: String, state: DeliveryState?, after: Int64?, limit: Int) async throws -> [StoredDelivery] {
        var sql = "SELECT * FROM deliveries WHERE job_id = ?"
        var binds: [SQLiteData] = [.text(job)]
        if let state {
            sql += " AND state = ?"
            binds.append(.text(state.rawValue))
        }
        if let after {
            sql += " AND id > ?"
            binds.append(.integer(Int(after)))
        }
        sql += " ORDER BY id LIMIT ?"
        binds.append(.integer(limit))
        return try await query(sql, binds).map { row in
            StoredDelivery(
                id: Int64(row.column("id")?.integer ?? 0), token: row.column("token")?.string ?? "", apnsID: row.column("apns_id")?.string ?? "",
                state: DeliveryState(rawValue: row.column("state")?.string ?? "") ?? .queued, attempts: Int(row.column("attempts")?.integer ?? 0),
                status: row.column("status")?.integer.map { Int($0) }, reason: row.column("reason")?.string,
                unregisteredAt: row.column("unregistered_at")?.integer.map { Int64($0) }, updatedAt: Int64(row.column("updated_at")?.integer ?? 0))
        }
    }

    func jobContent(id: String) async throws -> JobContent? {
        guard let row = try await query("SELECT id, app_id, headers, payload, expires_at FROM jobs WHERE id = ?", [.text(id)]).first else { return nil }
        var payload: [UInt8] = []
        if case .blob(let buffer)? = row.column("payload") { payload = Array(buffer.readableBytesView) }
        return JobContent(
            id: id, app: row.column("app_id")?.string ?? "", headers: row.column("headers")?.string ?? "{}", payload: payload,
            expiresAt: Int64(row.column("expires_at")?.integer ?? 0))
    }

    // MARK: Dispatch

    func claim(worker: String, limit: Int, now: Int64, leaseUntil: Int64, takeOver: Bool) async throws -> [ClaimedDelivery] {
        try await query(
            """
            UPDATE deliveries SET
                reclaimed_from = CASE WHEN state = 'claimed' THEN claimed_by ELSE reclaimed_from END,
                state = 'claimed', claimed_by = ?, due_at = ?, attempts = attempts + 1, updated_at = ?
            WHERE id IN (SELECT id FROM deliveries
                         WHERE state IN ('queued', 'claimed') AND due_at <= ? AND (state = 'queued' OR (? AND state = 'claimed' AND claimed_by <> ?))
                         ORDER BY due_at, id LIMIT ?)
            RETURNING id, job_id, app_id, token, apns_id, attempts
            """,
            [.text(worker), .integer(Int(leaseUntil)), .integer(Int(now)), .integer(Int(now)), .integer(takeOver ? 1 : 0), .text(worker), .integer(limit)]
        ).map(Self.claimed(from:)).sorted { $0.id < $1.id }
    }

    private static func claimed(from row: SQLiteRow) -> ClaimedDelivery {
        ClaimedDelivery(
            id: Int64(row.column("id")?.integer ?? 0), job: row.column("job_id")?.string ?? "", app: row.column("app_id")?.string ?? "",
            token: row.column("token")?.string ?? "", apnsID: row.column("apns_id")?.string ?? "", attempts: Int(row.column("attempts")?.integer ?? 0))
    }

    func record(_ outcomes: [DeliveryOutcome], worker: String, now: Int64) async throws {
        guard !outcomes.isEmpty else { return }
        try await transaction { connection in
            // Accepted ones (nearly all) in a statement per thousand.
            let accepted = outcomes.filter { if case .accepted = $0.result { return $0.webhooks.isEmpty } else { return false } }
            for chunk in accepted.chunked(1_000) {
                _ = try await connection.query(
                    "UPDATE deliveries SET state = 'accepted', status = 200, reason = NULL, claimed_by = NULL, updated_at = ? WHERE claimed_by = ? AND state = 'claimed' AND id IN ("
                        + Array(repeating: "?", count: chunk.count).joined(separator: ", ") + ")",
                    [.integer(Int(now)), .text(worker)] + chunk.map { .integer(Int($0.delivery.id)) })
            }
            for outcome in outcomes {
                if case .accepted = outcome.result, outcome.webhooks.isEmpty { continue }
                let id = SQLiteData.integer(Int(outcome.delivery.id))
                let held: [SQLiteData] = [.text(worker)]
                var applied = false
                switch outcome.result {
                case .accepted(let status):
                    applied = !(try await connection.query(
                        "UPDATE deliveries SET state = 'accepted', status = ?, reason = NULL, claimed_by = NULL, updated_at = ? WHERE id = ? AND claimed_by = ? AND state = 'claimed' RETURNING id",
                        [.integer(status), .integer(Int(now)), id] + held)).isEmpty
                case .rejected(let status, let reason, let unregisteredAt, let deadToken):
                    applied = !(try await connection.query(
                        "UPDATE deliveries SET state = 'rejected', status = ?, reason = ?, unregistered_at = ?, claimed_by = NULL, updated_at = ? WHERE id = ? AND claimed_by = ? AND state = 'claimed' RETURNING id",
                        [status.map { .integer($0) } ?? .null, reason.map { .text($0) } ?? .null, unregisteredAt.map { .integer(Int($0)) } ?? .null, .integer(Int(now)), id] + held)).isEmpty
                    if applied, deadToken {
                        _ = try await connection.query(
                            """
                            INSERT INTO devices (app_id, token, state, tags, reason, dead_at, updated_at) VALUES (?, ?, 'dead', '', ?, ?, ?)
                            ON CONFLICT (app_id, token) DO UPDATE SET state = 'dead', reason = excluded.reason, dead_at = excluded.dead_at, updated_at = excluded.updated_at
                            """,
                            [.text(outcome.delivery.app), .text(outcome.delivery.token), reason.map { .text($0) } ?? .null,
                             .integer(Int(unregisteredAt ?? now)), .integer(Int(now))])
                    }
                case .retry(let at, let reason):
                    applied = !(try await connection.query(
                        "UPDATE deliveries SET state = 'queued', due_at = ?, reason = ?, claimed_by = NULL, updated_at = ? WHERE id = ? AND claimed_by = ? AND state = 'claimed' RETURNING id",
                        [.integer(Int(at)), reason.map { .text($0) } ?? .null, .integer(Int(now)), id] + held)).isEmpty
                case .expired(let reason):
                    applied = !(try await connection.query(
                        "UPDATE deliveries SET state = 'expired', reason = ?, claimed_by = NULL, updated_at = ? WHERE id = ? AND claimed_by = ? AND state = 'claimed' RETURNING id",
                        [reason.map { .text($0) } ?? .null, .integer(Int(now)), id] + held)).isEmpty
                }
                if applied {
                    for body in outcome.webhooks {
                        _ = try await connection.query(
                            "INSERT INTO webhook_events (app_id, body, state, due_at, attempts, created_at) VALUES (?, ?, 'queued', ?, 0, ?)",
                            [.text(outcome.delivery.app), .text(body), .integer(Int(now)), .integer(Int(now))])
                    }
                }
            }
        }
    }

    func extendLeases(worker: String, ids: [Int64], until: Int64, now: Int64) async throws -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        return try await transaction { connection in
            var extended = Set<Int64>()
            for chunk in ids.chunked(1_000) {
                let rows = try await connection.query(
                    "UPDATE deliveries SET due_at = ? WHERE state = 'claimed' AND claimed_by = ? AND id IN ("
                        + Array(repeating: "?", count: chunk.count).joined(separator: ", ") + ") RETURNING id",
                    [.integer(Int(until)), .text(worker)] + chunk.map { .integer(Int($0)) })
                for row in rows { if let id = row.column("id")?.integer { extended.insert(Int64(id)) } }
            }
            return extended
        }
    }

    func release(worker: String, ids: [Int64], now: Int64) async throws {
        guard !ids.isEmpty else { return }
        try await transaction { connection in
            for chunk in ids.chunked(1_000) {
                // Given back as it was: the attempt it was claimed for was not made.
                _ = try await connection.query(
                    "UPDATE deliveries SET state = 'queued', due_at = ?, attempts = attempts - 1, claimed_by = NULL, updated_at = ? WHERE claimed_by = ? AND state = 'claimed' AND id IN ("
                        + Array(repeating: "?", count: chunk.count).joined(separator: ", ") + ")",
                    [.integer(Int(now)), .integer(Int(now)), .text(worker)] + chunk.map { .integer(Int($0)) })
            }
        }
    }

    func queueDepth(now: Int64) async throws -> (waiting: Int, due: Int) {
        let row = try await query(
            "SELECT count(*) AS waiting, coalesce(sum(CASE WHEN due_at <= ? THEN 1 ELSE 0 END), 0) AS due FROM deliveries WHERE state IN ('queued', 'claimed')",
            [.integer(Int(now))]).first
        return (Int(row?.column("waiting")?.integer ?? 0), Int(row?.column("due")?.integer ?? 0))
    }

    // MARK: Webhooks

    func claimWebhooks(worker: String, limit: Int, now: Int64, leaseUntil: Int64) async throws -> [WebhookEvent] {
        try await query(
            """
            UPDATE webhook_events SET state = 'claimed', claimed_by = ?, due_at = ?, attempts = attempts + 1
            WHERE id IN (SELECT id FROM webhook_events WHERE state IN ('queued', 'claimed') AND due_at <= ? ORDER BY due_at, id LIMIT ?)
            RETURNING id, app_id, body, attempts
            """,
            [.text(worker), .integer(Int(leaseUntil)), .integer(Int(now)), .integer(limit)]
        ).map { row in
            WebhookEvent(
                id: Int64(row.column("id")?.integer ?? 0), app: row.column("app_id")?.string ?? "", body: row.column("body")?.string ?? "",
                attempts: Int(row.column("attempts")?.integer ?? 0))
        }.sorted { $0.id < $1.id }
    }

    func finishWebhook(id: Int64, sent: Bool, retryAt: Int64?, error: String?, now: Int64) async throws {
        let state = sent ? "sent" : retryAt == nil ? "failed" : "queued"
        try await query(
            "UPDATE webhook_events SET state = ?, due_at = ?, last_error = ?, claimed_by = NULL, sent_at = ? WHERE id = ?",
            [.text(state), .integer(Int(retryAt ?? now)), error.map { .text($0) } ?? .null, sent ? .integer(Int(now)) : .null, .integer(Int(id))])
    }

    func ping() async throws {
        try await query("SELECT 1")
    }

    /// One file, one connection: nothing to start afresh, no server to look for.
    func reconnect() async {}
    func probeConnection() async throws {}
    var canBeUnreachable: Bool { false }

    /// SQLite is a file in this process: a failed statement is never an outage (a call that
    /// takes too long is, and the deadline says so).
    func classify(_ error: any Error) -> StoreFailureKind { .query }

    func describe(_ error: any Error) -> String { "\(error)" }

    func close() async {
        try? await connection.close()
    }
}

extension Array {
    /// Consecutive pieces of at most `size` elements.
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
