import Foundation
import HeraldProtocol
import Logging
import NIOSSL
import PostgresNIO
import Synchronization

/// The gateway's store in PostgreSQL (`herald serve --postgres URL`): any number of gateway
/// processes on any number of machines share it. Workers claim deliveries with
/// `SELECT … FOR UPDATE SKIP LOCKED`, so two never hold the same row; a claim is a lease, and a
/// killed process's claims are taken over by the others when it ends.
final class PostgresGatewayStore: GatewayStore {
    /// The pool in use and the task running it; replaced by ``reconnect()``.
    private let pool: Mutex<(client: PostgresClient, runner: Task<Void, Never>)>
    private let settings: Settings
    private let poolConfiguration: PostgresClient.Configuration
    private let logger: Logger
    private let backgroundLogger: Logger
    let description: String

    private var client: PostgresClient { pool.withLock { $0.client } }

    private init(settings: Settings, configuration: PostgresClient.Configuration, logger: Logger, backgroundLogger: Logger, description: String) {
        self.settings = settings
        poolConfiguration = configuration
        self.logger = logger
        self.backgroundLogger = backgroundLogger
        self.description = description
        pool = Mutex(Self.startPool(configuration, logger: backgroundLogger))
    }

    private static func startPool(_ configuration: PostgresClient.Configuration, logger: Logger) -> (client: PostgresClient, runner: Task<Void, Never>) {
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        return (client, Task { await client.run() })
    }

    /// Connects with a `postgres://user:password@host:port/database` URL (`?sslmode=disable`,
    /// `require` or `prefer`, the default) and brings the schema up to date.
    static func open(url: String, logger: Logger, maximumConnections: Int = 8) async throws -> PostgresGatewayStore {
        let settings = try Settings(url: url)
        var configuration = settings.pool
        // The pool retries a refused connection or a wrong password forever, quietly: one
        // connection first, with a deadline, turns those into an error the caller sees.
        try await probe(settings, url: url, logger: logger)
        configuration.options.maximumConnections = maximumConnections
        configuration.options.minimumConnections = 1
        // The pool's own chatter (a lease asked before run() starts, reconnects) stays out of the
        // log; failures reach the caller as errors.
        var background = logger
        background.logLevel = .error
        let store = PostgresGatewayStore(settings: settings, configuration: configuration, logger: logger, backgroundLogger: background, description: redacted(url))
        do {
            try await store.migrate()
        } catch {
            await store.close()
            throw GatewayStoreError(message: "cannot use the database \(redacted(url)): \(store.describe(error))")
        }
        return store
    }

    /// The URL without its password (for messages and logs).
    static func redacted(_ url: String) -> String {
        guard let components = URLComponents(string: url), components.password != nil else { return url }
        var copy = components
        copy.password = "****"
        return copy.string ?? url
    }

    /// Connects once (within `timeout`) and disconnects; throws what went wrong.
    static func probe(_ settings: Settings, url: String, logger: Logger, timeout: Duration = .seconds(10)) async throws {
        var connection = try settings.connection()
        connection.options.connectTimeout = .milliseconds(timeout.milliseconds)
        var quiet = logger
        quiet.logLevel = .critical
        do {
            let opened = try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.next(), configuration: connection, id: 0, logger: quiet).get()
            try? await opened.close()
        } catch let error as PSQLError {
            throw GatewayStoreError(message: "cannot connect to \(redacted(url)): \(Self.describe(error))")
        }
    }

    /// What a connection failure means, in a line (the server's message when it sent one).
    static func describe(_ error: PSQLError) -> String {
        if let state = error.serverInfo?[.sqlState], let message = error.serverInfo?[.message] {
            return "\(message) (SQLSTATE \(state))"
        }
        if let message = error.serverInfo?[.message] {
            return message
        }
        if let failure = error.underlying as? NIOConnectionError, let first = failure.connectionErrors.first {
            return "\(first.error) (\(first.target))"
        }
        if let underlying = error.underlying {
            return "\(underlying)"
        }
        return "\(error.code)"
    }

    /// What a `postgres://` URL says.
    struct Settings {
        enum Mode { case disable, prefer, require }
        var host: String
        var port: Int
        var username: String
        var password: String?
        var database: String?
        var mode: Mode

        init(url: String) throws {
            guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? ""),
                  let host = components.host, !host.isEmpty else {
                throw GatewayStoreError(message: "'\(redacted(url))' is not a postgres://user:password@host:port/database URL")
            }
            switch components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "prefer" {
            case "disable": mode = .disable
            case "require", "verify-full", "verify-ca": mode = .require
            case "prefer", "allow": mode = .prefer
            case let other: throw GatewayStoreError(message: "sslmode=\(other) is not disable, prefer or require")
            }
            let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
            self.host = host
            port = components.port ?? 5432
            username = components.user ?? "postgres"
            password = components.password
            self.database = database.isEmpty ? nil : database
        }

        var pool: PostgresClient.Configuration {
            let tls: PostgresClient.Configuration.TLS
            switch mode {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(.makeClientConfiguration())
            case .require: tls = .require(.makeClientConfiguration())
            }
            return PostgresClient.Configuration(host: host, port: port, username: username, password: password, database: database, tls: tls)
        }

        func connection() throws -> PostgresConnection.Configuration {
            let tls: PostgresConnection.Configuration.TLS
            switch mode {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            return PostgresConnection.Configuration(host: host, port: port, username: username, password: password, database: database, tls: tls)
        }
    }

    // MARK: Statements

    @discardableResult
    private func rows(_ query: PostgresQuery) async throws -> [PostgresRandomAccessRow] {
        try await client.query(query, logger: logger).collect().map { $0.makeRandomAccess() }
    }

    private func transaction<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await client.withTransaction(logger: logger) { connection in try await body(connection) }
    }

    private func rows(_ connection: PostgresConnection, _ query: PostgresQuery) async throws -> [PostgresRandomAccessRow] {
        try await connection.query(query, logger: logger).collect().map { $0.makeRandomAccess() }
    }

    // MARK: Schema

    func migrate() async throws {
        try await rows("CREATE TABLE IF NOT EXISTS herald_gateway_schema (version INTEGER NOT NULL)")
        // Two processes starting at once: one migrates, the other waits for its lock.
        try await transaction { connection in
            _ = try await connection.query("LOCK TABLE herald_gateway_schema IN EXCLUSIVE MODE", logger: logger)
            let version = try await rows(connection, "SELECT coalesce(max(version), 0) AS v FROM herald_gateway_schema").first?["v"].decode(Int.self) ?? 0
            if version > GatewaySchema.version {
                throw GatewayStoreError(message: "the database was written by a newer Herald (schema \(version); this one knows \(GatewaySchema.version))")
            }
            for migration in GatewaySchema.migrations(for: .postgres) where migration.version > version {
                for statement in migration.statements { _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
                _ = try await connection.query("INSERT INTO herald_gateway_schema (version) VALUES (\(migration.version))", logger: logger)
            }
        }
    }

    // MARK: Apps and keys

    func insertApp(_ app: StoredApp) async throws -> Bool {
        !(try await rows(
            "INSERT INTO apps (id, definition, created_at) VALUES (\(app.id), \(app.definition), \(app.createdAt)) ON CONFLICT (id) DO NOTHING RETURNING id")).isEmpty
    }

    func app(id: String) async throws -> StoredApp? {
        try await rows("SELECT id, definition, created_at FROM apps WHERE id = \(id)").first.map(Self.app(from:))
    }

    func apps() async throws -> [StoredApp] {
        try await rows("SELECT id, definition, created_at FROM apps ORDER BY id").map(Self.app(from:))
    }

    private static func app(from row: PostgresRandomAccessRow) throws -> StoredApp {
        StoredApp(id: try row["id"].decode(String.self), definition: try row["definition"].decode(String.self), createdAt: try row["created_at"].decode(Int64.self))
    }

    func deleteApp(id: String) async throws -> Bool {
        try await transaction { connection in
            _ = try await connection.query("DELETE FROM webhook_events WHERE app_id = \(id)", logger: logger)
            _ = try await connection.query("DELETE FROM deliveries WHERE app_id = \(id)", logger: logger)
            _ = try await connection.query("DELETE FROM jobs WHERE app_id = \(id)", logger: logger)
            _ = try await connection.query("DELETE FROM devices WHERE app_id = \(id)", logger: logger)
            return !(try await rows(connection, "DELETE FROM apps WHERE id = \(id) RETURNING id")).isEmpty
        }
    }

    func insertKey(_ key: StoredKey) async throws {
        try await rows(
            "INSERT INTO api_keys (id, hash, name, apps, created_at) VALUES (\(key.id), \(key.hash), \(key.name), \(GatewaySchema.encodeApps(key.apps)), \(key.createdAt))")
    }

    func key(hash: String) async throws -> StoredKey? {
        try await rows("SELECT id, hash, name, apps, created_at FROM api_keys WHERE hash = \(hash)").first.map(Self.key(from:))
    }

    func keys() async throws -> [StoredKey] {
        try await rows("SELECT id, hash, name, apps, created_at FROM api_keys ORDER BY created_at, id").map(Self.key(from:))
    }

    private static func key(from row: PostgresRandomAccessRow) throws -> StoredKey {
        StoredKey(
            id: try row["id"].decode(String.self), hash: try row["hash"].decode(String.self), name: try row["name"].decode(String.self),
            apps: GatewaySchema.decodeApps(try row["apps"].decode(String.self)), createdAt: try row["created_at"].decode(Int64.self))
    }

    func deleteKey(id: String) async throws -> Bool {
        !(try await rows("DELETE FROM api_keys WHERE id = \(id) RETURNING id")).isEmpty
    }

    // MARK: Devices

    func upsertDevices(app: String, tokens: [DeviceToken], tags: [String], now: Int64) async throws {
        // Sorted, so two submissions naming the same devices lock them in one order.
        let hex = Set(tokens.map(\.hex)).sorted()
        try await rows(
            """
            INSERT INTO devices (app_id, token, state, tags, updated_at)
            SELECT \(app), t, 'active', \(GatewaySchema.encodeTags(tags)), \(now) FROM unnest(\(hex)::text[]) AS t
            ON CONFLICT (app_id, token) DO UPDATE SET state = 'active', tags = excluded.tags, reason = NULL, dead_at = NULL, updated_at = excluded.updated_at
            """)
    }

    func devices(app: String, state: DeviceState?, tag: String?, after: String?, limit: Int) async throws -> [StoredDevice] {
        var query = QueryBuilder("SELECT token, state, tags, reason, dead_at, updated_at FROM devices WHERE app_id = ?", app)
        if let state { query.append(" AND state = ?", state.rawValue) }
        if let tag { query.append(" AND position(? in tags) > 0", GatewaySchema.encodeTags([tag])) }
        if let after { query.append(" AND token > ?", after) }
        query.append(" ORDER BY token LIMIT ?", limit)
        return try await rows(query.query).map { row in
            StoredDevice(
                token: try row["token"].decode(String.self), state: DeviceState(rawValue: try row["state"].decode(String.self)) ?? .active,
                tags: GatewaySchema.decodeTags(try row["tags"].decode(String.self)), reason: try row["reason"].decode(String?.self),
                deadAt: try row["dead_at"].decode(Int64?.self), updatedAt: try row["updated_at"].decode(Int64.self))
        }
    }

    func deleteDevice(app: String, token: DeviceToken) async throws -> Bool {
        !(try await rows("DELETE FROM devices WHERE app_id = \(app) AND token = \(token.hex) RETURNING token")).isEmpty
    }

    func audience(app: String, tag: String?) async throws -> [DeviceToken] {
        var query = QueryBuilder("SELECT token FROM devices WHERE app_id = ? AND state = 'active'", app)
        if let tag { query.append(" AND position(? in tags) > 0", GatewaySchema.encodeTags([tag])) }
        query.append(" ORDER BY token")
        return try await rows(query.query).compactMap { try? DeviceToken(hex: try $0["token"].decode(String.self)) }
    }

    // MARK: Notifications

    func submit(_ job: NewJob) async throws -> SubmitResult {
        do {
            return try await submitOnce(job)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" && job.idempotencyKey != nil {
            // The same key submitted at the same moment by another request: its job stands.
            return try await submitOnce(job)
        }
    }

    private func submitOnce(_ job: NewJob) async throws -> SubmitResult {
        try await transaction { connection in
            if let key = job.idempotencyKey, let row = try await rows(
                connection, "SELECT id, request_hash FROM jobs WHERE app_id = \(job.app) AND idempotency_key = \(key)").first {
                let id = try row["id"].decode(String.self)
                guard try row["request_hash"].decode(String.self) == job.requestHash else { return .conflict(jobID: id) }
                return .existing(try await summary(connection, app: job.app, id: id)!)
            }
            let payload = ByteBuffer(bytes: job.payload)
            _ = try await connection.query(
                """
                INSERT INTO jobs (id, app_id, idempotency_key, request_hash, headers, payload, expires_at, token_count, created_at)
                VALUES (\(job.id), \(job.app), \(job.idempotencyKey), \(job.requestHash), \(job.headers), \(payload), \(job.expiresAt), \(job.tokens.count), \(job.now))
                """, logger: logger)
            for chunk in job.tokens.chunked(50_000) {
                let tokens = chunk.map(\.token), ids = chunk.map(\.apnsID)
                _ = try await connection.query(
                    """
                    INSERT INTO deliveries (job_id, app_id, token, apns_id, state, due_at, attempts, updated_at)
                    SELECT \(job.id), \(job.app), t.token, t.apns_id, 'queued', \(job.now), 0, \(job.now)
                    FROM unnest(\(tokens)::text[], \(ids)::text[]) AS t(token, apns_id)
                    """, logger: logger)
            }
            _ = try await connection.query(
                """
                UPDATE deliveries SET state = 'skipped', reason = d.reason, unregistered_at = d.dead_at
                FROM devices d WHERE deliveries.job_id = \(job.id) AND d.app_id = \(job.app) AND d.token = deliveries.token AND d.state = 'dead'
                """, logger: logger)
            return .created(try await summary(connection, app: job.app, id: job.id)!)
        }
    }

    func job(app: String, id: String) async throws -> JobSummary? {
        try await client.withConnection { connection in try await summary(connection, app: app, id: id) }
    }

    private func summary(_ connection: PostgresConnection, app: String, id: String) async throws -> JobSummary? {
        guard let row = try await rows(
            connection, "SELECT headers, expires_at, token_count, created_at FROM jobs WHERE app_id = \(app) AND id = \(id)").first
        else { return nil }
        var counts: [DeliveryState: Int] = [:]
        for count in try await rows(connection, "SELECT state, count(*) AS n FROM deliveries WHERE job_id = \(id) GROUP BY state") {
            if let state = DeliveryState(rawValue: try count["state"].decode(String.self)) { counts[state] = try count["n"].decode(Int.self) }
        }
        return JobSummary(
            id: id, app: app, headers: try row["headers"].decode(String.self), expiresAt: try row["expires_at"].decode(Int64.self),
            tokenCount: try row["token_count"].decode(Int.self), createdAt: try row["created_at"].decode(Int64.self), counts: counts)
    }

    func deliveries(job: String, state: DeliveryState?, after: Int64?, limit: Int) async throws -> [StoredDelivery] {
        var query = QueryBuilder(
            "SELECT id, token, apns_id, state, attempts, status, reason, unregistered_at, updated_at FROM deliveries WHERE job_id = ?", job)
        if let state { query.append(" AND state = ?", state.rawValue) }
        if let after { query.append(" AND id > ?", after) }
        query.append(" ORDER BY id LIMIT ?", limit)
        return try await rows(query.query).map { row in
            StoredDelivery(
                id: try row["id"].decode(Int64.self), token: try row["token"].decode(String.self), apnsID: try row["apns_id"].decode(String.self),
                state: DeliveryState(rawValue: try row["state"].decode(String.self)) ?? .queued, attempts: try row["attempts"].decode(Int.self),
                status: try row["status"].decode(Int?.self), reason: try row["reason"].decode(String?.self),
                unregisteredAt: try row["unregistered_at"].decode(Int64?.self), updatedAt: try row["updated_at"].decode(Int64.self))
        }
    }

    func jobContent(id: String) async throws -> JobContent? {
        guard let row = try await rows("SELECT app_id, headers, payload, expires_at FROM jobs WHERE id = \(id)").first else { return nil }
        let payload = try row["payload"].decode(ByteBuffer.self)
        return JobContent(
            id: id, app: try row["app_id"].decode(String.self), headers: try row["headers"].decode(String.self),
            payload: Array(payload.readableBytesView), expiresAt: try row["expires_at"].decode(Int64.self))
    }

    // MARK: Dispatch

    func claim(worker: String, limit: Int, now: Int64, leaseUntil: Int64, takeOver: Bool) async throws -> [ClaimedDelivery] {
        try await rows(
            """
            UPDATE deliveries d SET
                reclaimed_from = CASE WHEN d.state = 'claimed' THEN d.claimed_by ELSE d.reclaimed_from END,
                state = 'claimed', claimed_by = \(worker), due_at = \(leaseUntil), attempts = d.attempts + 1, updated_at = \(now)
            FROM (SELECT id FROM deliveries
                  WHERE state IN ('queued', 'claimed') AND due_at <= \(now) AND (state = 'queued' OR (\(takeOver) AND state = 'claimed' AND claimed_by <> \(worker)))
                  ORDER BY due_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED) c
            WHERE d.id = c.id
            RETURNING d.id, d.job_id, d.app_id, d.token, d.apns_id, d.attempts
            """
        ).map { row in
            ClaimedDelivery(
                id: try row["id"].decode(Int64.self), job: try row["job_id"].decode(String.self), app: try row["app_id"].decode(String.self),
                token: try row["token"].decode(String.self), apnsID: try row["apns_id"].decode(String.self), attempts: try row["attempts"].decode(Int.self))
        }.sorted { $0.id < $1.id }
    }

    func record(_ outcomes: [DeliveryOutcome], worker: String, now: Int64) async throws {
        guard !outcomes.isEmpty else { return }
        try await transaction { connection in
            // Every statement that writes several claimed rows first locks those `worker` still
            // holds in the order of their ids: two processes whose claims overlap (one took over
            // the other's expired lease) then wait for each other in one order and never
            // deadlock (PostgreSQL would end one of the pair with 40P01).
            let ids = outcomes.map(\.delivery.id)
            // (Its rows are read to the end: a result left unread holds the connection.)
            _ = try await rows(connection, "SELECT id FROM deliveries WHERE id = ANY(\(ids)) AND claimed_by = \(worker) AND state = 'claimed' ORDER BY id FOR UPDATE")
            var dead: [(outcome: DeliveryOutcome, reason: String?, at: Int64?)] = []
            let accepted = outcomes.filter { if case .accepted = $0.result { return $0.webhooks.isEmpty } else { return false } }.map(\.delivery.id)
            if !accepted.isEmpty {
                _ = try await connection.query(
                    """
                    UPDATE deliveries SET state = 'accepted', status = 200, reason = NULL, claimed_by = NULL, updated_at = \(now)
                    WHERE id = ANY(\(accepted)) AND claimed_by = \(worker) AND state = 'claimed'
                    """, logger: logger)
            }
            for outcome in outcomes {
                if case .accepted = outcome.result, outcome.webhooks.isEmpty { continue }
                let id = outcome.delivery.id
                let update: PostgresQuery
                switch outcome.result {
                case .accepted(let status):
                    update = "UPDATE deliveries SET state = 'accepted', status = \(status), reason = NULL, claimed_by = NULL, updated_at = \(now) WHERE id = \(id) AND claimed_by = \(worker) AND state = 'claimed' RETURNING id"
                case .rejected(let status, let reason, let unregisteredAt, _):
                    update = "UPDATE deliveries SET state = 'rejected', status = \(status), reason = \(reason), unregistered_at = \(unregisteredAt), claimed_by = NULL, updated_at = \(now) WHERE id = \(id) AND claimed_by = \(worker) AND state = 'claimed' RETURNING id"
                case .retry(let at, let reason):
                    update = "UPDATE deliveries SET state = 'queued', due_at = \(at), reason = \(reason), claimed_by = NULL, updated_at = \(now) WHERE id = \(id) AND claimed_by = \(worker) AND state = 'claimed' RETURNING id"
                case .expired(let reason):
                    update = "UPDATE deliveries SET state = 'expired', reason = \(reason), claimed_by = NULL, updated_at = \(now) WHERE id = \(id) AND claimed_by = \(worker) AND state = 'claimed' RETURNING id"
                }
                guard !(try await rows(connection, update)).isEmpty else { continue }
                if case .rejected(_, let reason, let unregisteredAt, true) = outcome.result {
                    dead.append((outcome, reason, unregisteredAt))
                }
                for body in outcome.webhooks {
                    _ = try await connection.query(
                        "INSERT INTO webhook_events (app_id, body, state, due_at, attempts, created_at) VALUES (\(outcome.delivery.app), \(body), 'queued', \(now), 0, \(now))",
                        logger: logger)
                }
            }
            // Devices too are locked in one order (app, then token) across processes.
            for (outcome, reason, unregisteredAt) in dead.sorted(by: { ($0.outcome.delivery.app, $0.outcome.delivery.token) < ($1.outcome.delivery.app, $1.outcome.delivery.token) }) {
                _ = try await connection.query(
                    """
                    INSERT INTO devices (app_id, token, state, tags, reason, dead_at, updated_at)
                    VALUES (\(outcome.delivery.app), \(outcome.delivery.token), 'dead', '', \(reason), \(unregisteredAt ?? now), \(now))
                    ON CONFLICT (app_id, token) DO UPDATE SET state = 'dead', reason = excluded.reason, dead_at = excluded.dead_at, updated_at = excluded.updated_at
                    """, logger: logger)
            }
        }
    }

    func extendLeases(worker: String, ids: [Int64], until: Int64, now: Int64) async throws -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        return Set(try await rows(
            """
            UPDATE deliveries d SET due_at = \(until)
            FROM (SELECT id FROM deliveries WHERE id = ANY(\(ids)) AND claimed_by = \(worker) AND state = 'claimed' ORDER BY id FOR UPDATE) c WHERE d.id = c.id RETURNING d.id
            """
        ).map { try $0["id"].decode(Int64.self) })
    }

    func release(worker: String, ids: [Int64], now: Int64) async throws {
        guard !ids.isEmpty else { return }
        try await rows(
            """
            UPDATE deliveries d SET state = 'queued', due_at = \(now), attempts = d.attempts - 1, claimed_by = NULL, updated_at = \(now)
            FROM (SELECT id FROM deliveries WHERE id = ANY(\(ids)) AND claimed_by = \(worker) AND state = 'claimed' ORDER BY id FOR UPDATE) c WHERE d.id = c.id
            """)
    }

    func queueDepth(now: Int64) async throws -> (waiting: Int, due: Int) {
        let row = try await rows(
            "SELECT count(*) AS waiting, count(*) FILTER (WHERE due_at <= \(now)) AS due FROM deliveries WHERE state IN ('queued', 'claimed')").first
        return (try row?["waiting"].decode(Int.self) ?? 0, try row?["due"].decode(Int.self) ?? 0)
    }

    // MARK: Webhooks

    func claimWebhooks(worker: String, limit: Int, now: Int64, leaseUntil: Int64) async throws -> [WebhookEvent] {
        try await rows(
            """
            UPDATE webhook_events w SET state = 'claimed', claimed_by = \(worker), due_at = \(leaseUntil), attempts = w.attempts + 1
            FROM (SELECT id FROM webhook_events WHERE state IN ('queued', 'claimed') AND due_at <= \(now)
                  ORDER BY due_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED) c
            WHERE w.id = c.id
            RETURNING w.id, w.app_id, w.body, w.attempts
            """
        ).map { row in
            WebhookEvent(
                id: try row["id"].decode(Int64.self), app: try row["app_id"].decode(String.self), body: try row["body"].decode(String.self),
                attempts: try row["attempts"].decode(Int.self))
        }.sorted { $0.id < $1.id }
    }

    func finishWebhook(id: Int64, sent: Bool, retryAt: Int64?, error: String?, now: Int64) async throws {
        let state = sent ? "sent" : retryAt == nil ? "failed" : "queued"
        let sentAt: Int64? = sent ? now : nil
        try await rows(
            "UPDATE webhook_events SET state = \(state), due_at = \(retryAt ?? now), last_error = \(error), claimed_by = NULL, sent_at = \(sentAt) WHERE id = \(id)")
    }

    // MARK: Health

    /// A new connection first (refused or not answering: an error within two seconds, whatever
    /// the pool is doing), then a statement through the pool; a pool still backing off from
    /// the outage is replaced.
    func probeConnection() async throws {
        try await Self.probe(settings, url: description, logger: logger, timeout: .seconds(2))
    }

    var canBeUnreachable: Bool { true }

    func ping() async throws {
        try await probeConnection()
        do {
            try await withDeadline(.seconds(1), "a statement through the pool") { [client, logger] in
                _ = try await client.query("SELECT 1", logger: logger).collect()
            }
        } catch {
            await reconnect()
            _ = try await client.query("SELECT 1", logger: logger).collect()
        }
    }

    func reconnect() async {
        let old = pool.withLock { pool in
            defer { pool = Self.startPool(poolConfiguration, logger: backgroundLogger) }
            return pool.runner
        }
        // Its requests fail now; nobody waits for its connections to close.
        old.cancel()
    }

    func classify(_ error: any Error) -> StoreFailureKind {
        guard let error = error as? PSQLError else {
            // The pool's own errors (its circuit breaker, a request it dropped) mean no connection.
            return String(reflecting: type(of: error)).contains("ConnectionPool") ? .connection : .query
        }
        if let state = error.serverInfo?[.sqlState] {
            if state.hasPrefix("28") { return .authentication }
            // Connection exceptions, the server shutting down or starting, too many connections.
            if state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300" { return .connection }
            return .query
        }
        switch error.code {
        case .connectionError:
            return "\(error.underlying.map { "\($0)" } ?? "")".lowercased().contains("refused") ? .refused : .connection
        case .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed, .sslUnsupported, .failedToAddSSLHandler:
            return .connection
        case .unsupportedAuthMechanism, .authMechanismRequiresPassword, .saslError:
            return .authentication
        default:
            return .query
        }
    }

    func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError { return Self.describe(error) }
        if let error = error as? GatewayStoreError { return error.message }
        return String(reflecting: error)
    }

    func close() async {
        let runner = pool.withLock { $0.runner }
        runner.cancel()
        _ = await runner.value
    }
}

/// A query put together piece by piece: each `?` in a piece becomes the next `$n`.
struct QueryBuilder {
    private var sql = ""
    private var binds = PostgresBindings()

    init<V: PostgresDynamicTypeEncodable>(_ text: String, _ value: V) {
        append(text, value)
    }

    mutating func append(_ text: String) { sql += text }

    mutating func append<V: PostgresDynamicTypeEncodable>(_ text: String, _ value: V) {
        binds.append(value)
        sql += text.replacingOccurrences(of: "?", with: "$\(binds.count)")
    }

    var query: PostgresQuery { PostgresQuery(unsafeSQL: sql, binds: binds) }
}
