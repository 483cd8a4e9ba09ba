import HeraldSQL

/// The gateway's tables, one schema in two dialects, and the versioned migrations that build
/// them. A migration is applied once, in a transaction, in order; `herald_gateway_schema` holds
/// the versions applied.
enum GatewaySchema {
    /// The few words of SQL that differ between the two databases.
    enum Dialect: Sendable {
        case sqlite, postgres

        /// A condition: the device's tags hold the bound `,tag,`.
        var tagged: String {
            self == .postgres ? "strpos(tags, ?) > 0" : "instr(tags, ?) > 0"
        }

        /// A condition: `column` holds the bound text.
        func contains(_ column: String) -> String {
            self == .postgres ? "strpos(\(column), ?) > 0" : "instr(\(column), ?) > 0"
        }

        /// After a claim's `SELECT … LIMIT n`: rows another process holds are passed over.
        var skipLocked: String { self == .postgres ? " FOR UPDATE SKIP LOCKED" : "" }

        /// After a `SELECT … ORDER BY id`: the rows are locked in that order. Empty: the
        /// transaction holds the whole database (SQLite).
        var rowLock: String { self == .postgres ? " FOR UPDATE" : "" }
    }

    /// The table recording the migrations applied.
    static let versionTable = "herald_gateway_schema"

    /// The advisory lock migrators of one PostgreSQL database take in turn ("HRLD").
    static let advisoryLock: Int64 = 0x4852_4C44

    /// Brings a database to this build's schema; on PostgreSQL, processes starting at once
    /// migrate one after the other.
    static func migrator(for dialect: Dialect) -> SchemaMigrator {
        // PostgreSQL: a transaction-scoped advisory lock, taken before the version table exists
        // (a table lock needs the table; two processes creating it at once could collide).
        let serialize = dialect == .postgres ? "SELECT count(*) AS locked FROM (SELECT pg_advisory_xact_lock(\(advisoryLock))) AS l" : nil
        return SchemaMigrator(migrations(for: dialect), record: .table(name: versionTable, serialize: serialize))
    }

    /// Brings `database` (named so in messages) to this build's schema; what goes wrong as a
    /// ``GatewayStoreError`` that says so.
    static func migrate(_ database: some SQLDatabase, dialect: Dialect, named name: String, describe: (any Error) -> String) async throws {
        do {
            try await migrator(for: dialect).migrate(database)
        } catch let error as SchemaMigrator.NewerSchema {
            throw GatewayStoreError(message: "the database \(name) was written by a newer Herald (schema \(error.found); this one knows \(error.known))")
        } catch let error as SchemaMigrator.Failure {
            throw GatewayStoreError(message: "cannot bring the database \(name) to schema \(error.version): \(describe(error.underlying))")
        }
    }

    static func migrations(for dialect: Dialect) -> [SchemaMigrator.Migration] {
        let postgres = dialect == .postgres
        // A migration may rewrite every row; the sessions' statement timeout is for the
        // gateway's own short statements.
        let unbounded = postgres ? ["SET LOCAL statement_timeout = 0"] : []
        let serial = postgres ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY"
        let bytes = postgres ? "BYTEA" : "BLOB"
        return [
            SchemaMigrator.Migration(version: 1, statements: [
                "CREATE TABLE apps (id TEXT PRIMARY KEY, definition TEXT NOT NULL, created_at BIGINT NOT NULL)",
                "CREATE TABLE api_keys (id TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, name TEXT NOT NULL, apps TEXT NOT NULL, created_at BIGINT NOT NULL)",
                // tags: ",beta,staff," so that a tag is found with its commas around it.
                """
                CREATE TABLE devices (
                    app_id TEXT NOT NULL, token TEXT NOT NULL, state TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '',
                    reason TEXT, dead_at BIGINT, updated_at BIGINT NOT NULL, PRIMARY KEY (app_id, token))
                """,
                """
                CREATE TABLE jobs (
                    id TEXT PRIMARY KEY, app_id TEXT NOT NULL, idempotency_key TEXT, request_hash TEXT NOT NULL,
                    headers TEXT NOT NULL, payload \(bytes) NOT NULL, expires_at BIGINT NOT NULL, token_count INTEGER NOT NULL,
                    created_at BIGINT NOT NULL)
                """,
                "CREATE UNIQUE INDEX jobs_idempotency ON jobs (app_id, idempotency_key) WHERE idempotency_key IS NOT NULL",
                // due_at: when a queued delivery may be sent, or when a claim's lease ends (then
                // another worker may take it over). Final states leave the partial index.
                """
                CREATE TABLE deliveries (
                    id \(serial), job_id TEXT NOT NULL, app_id TEXT NOT NULL, token TEXT NOT NULL, apns_id TEXT NOT NULL,
                    state TEXT NOT NULL, due_at BIGINT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, claimed_by TEXT,
                    reclaimed_from TEXT, status INTEGER, reason TEXT, unregistered_at BIGINT, updated_at BIGINT NOT NULL)
                """,
                "CREATE INDEX deliveries_job ON deliveries (job_id, id)",
                "CREATE INDEX deliveries_app ON deliveries (app_id)",
                "CREATE INDEX deliveries_due ON deliveries (due_at, id) WHERE state IN ('queued', 'claimed')",
                """
                CREATE TABLE webhook_events (
                    id \(serial), app_id TEXT NOT NULL, body TEXT NOT NULL, state TEXT NOT NULL, due_at BIGINT NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0, claimed_by TEXT, last_error TEXT, created_at BIGINT NOT NULL, sent_at BIGINT)
                """,
                "CREATE INDEX webhook_events_due ON webhook_events (due_at, id) WHERE state IN ('queued', 'claimed')",
                "CREATE INDEX webhook_events_app ON webhook_events (app_id)",
            ]),
            // Operators: apps that pause and change in place, jobs that say when they finished
            // (job.done, retention, the listing), the sender's metadata.
            SchemaMigrator.Migration(version: 2, statements: unbounded + [
                "ALTER TABLE apps ADD COLUMN updated_at BIGINT",
                "UPDATE apps SET updated_at = created_at",
                // Set while the app's deliveries wait: its credentials or server were refused.
                "ALTER TABLE apps ADD COLUMN paused_at BIGINT",
                "ALTER TABLE apps ADD COLUMN paused_reason TEXT",
                "ALTER TABLE apps ADD COLUMN paused_advice TEXT",
                "ALTER TABLE jobs ADD COLUMN metadata TEXT",
                // Deliveries not final yet (queued or claimed), kept by every statement that
                // makes one final: a job is done when it reaches 0, without counting its rows.
                "ALTER TABLE jobs ADD COLUMN open_deliveries INTEGER NOT NULL DEFAULT 0",
                "ALTER TABLE jobs ADD COLUMN finished_at BIGINT",
                "UPDATE jobs SET open_deliveries = (SELECT count(*) FROM deliveries d WHERE d.job_id = jobs.id AND d.state IN ('queued', 'claimed'))",
                """
                UPDATE jobs SET finished_at = (SELECT coalesce(max(d.updated_at), jobs.created_at) FROM deliveries d WHERE d.job_id = jobs.id)
                WHERE open_deliveries = 0
                """,
                "CREATE INDEX jobs_app_created ON jobs (app_id, created_at, id)",
                "CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL",
                "CREATE INDEX webhook_events_done ON webhook_events (created_at) WHERE state IN ('sent', 'failed')",
                // One row the write probe rewrites: whether the database takes writes again.
                "CREATE TABLE herald_gateway_health (id INTEGER PRIMARY KEY, stamp BIGINT NOT NULL, filler \(bytes))",
            ]),
            // Audiences: users and their devices' languages and zones, tags in a table of their
            // own (an index, not a scan of every device's tags), notifications in several
            // languages, scheduled (at an instant, or at a wall-clock time in each device's zone),
            // cancelled.
            SchemaMigrator.Migration(version: 3, statements: unbounded + [
                "ALTER TABLE devices ADD COLUMN user_id TEXT",
                "ALTER TABLE devices ADD COLUMN language TEXT",
                "ALTER TABLE devices ADD COLUMN time_zone TEXT",
                "CREATE INDEX devices_user ON devices (app_id, user_id) WHERE user_id IS NOT NULL",
                "CREATE TABLE device_tags (app_id TEXT NOT NULL, tag TEXT NOT NULL, token TEXT NOT NULL, PRIMARY KEY (app_id, tag, token))",
                postgres
                    ? """
                    INSERT INTO device_tags (app_id, tag, token)
                    SELECT app_id, t, token FROM devices, unnest(string_to_array(trim(both ',' from tags), ',')) AS t
                    WHERE tags <> '' AND t <> '' ON CONFLICT DO NOTHING
                    """
                    : """
                    WITH RECURSIVE split(app_id, token, rest, tag) AS (
                        SELECT app_id, token, substr(tags, 2), NULL FROM devices WHERE tags <> ''
                        UNION ALL SELECT app_id, token, substr(rest, instr(rest, ',') + 1), substr(rest, 1, instr(rest, ',') - 1) FROM split WHERE rest <> '')
                    INSERT OR IGNORE INTO device_tags (app_id, tag, token) SELECT app_id, tag, token FROM split WHERE tag IS NOT NULL AND tag <> ''
                    """,
                // The earliest moment a scheduled job's deliveries are due, and its local time.
                "ALTER TABLE jobs ADD COLUMN send_at BIGINT",
                "ALTER TABLE jobs ADD COLUMN local_time TEXT",
                // When the first of its deliveries was claimed (a late start says how late).
                "ALTER TABLE jobs ADD COLUMN started_at BIGINT",
                "ALTER TABLE jobs ADD COLUMN cancelled_at BIGINT",
                "ALTER TABLE jobs ADD COLUMN audience TEXT",
                "ALTER TABLE jobs ADD COLUMN users_without_devices INTEGER NOT NULL DEFAULT 0",
                // A job's payload in each language it was given in (variant 0 is jobs.payload).
                "CREATE TABLE job_variants (job_id TEXT NOT NULL, variant INTEGER NOT NULL, language TEXT NOT NULL, payload \(bytes) NOT NULL, PRIMARY KEY (job_id, variant))",
                "ALTER TABLE deliveries ADD COLUMN variant INTEGER NOT NULL DEFAULT 0",
            ]),
            // Live Activities (Activities/): push-to-start tokens, and each activity as a row
            // that is its own queue: the start still to send, the newest update or end not yet
            // sent (one slot: an older one is superseded), its lease, what was last sent.
            SchemaMigrator.Migration(version: 4, statements: [
                """
                CREATE TABLE start_tokens (
                    app_id TEXT NOT NULL, token TEXT NOT NULL, attributes_type TEXT NOT NULL, user_id TEXT, updated_at BIGINT NOT NULL,
                    PRIMARY KEY (app_id, token))
                """,
                "CREATE INDEX start_tokens_user ON start_tokens (app_id, user_id, attributes_type)",
                """
                CREATE TABLE activities (
                    app_id TEXT NOT NULL, id TEXT NOT NULL, attributes_type TEXT NOT NULL, attributes TEXT NOT NULL, state TEXT NOT NULL,
                    user_id TEXT, start_tokens TEXT NOT NULL, update_token TEXT, wants_channel INTEGER NOT NULL DEFAULT 0, channel_id TEXT,
                    channel_deleted INTEGER NOT NULL DEFAULT 0, start_pending TEXT, pending TEXT, pending_seq BIGINT NOT NULL DEFAULT 0,
                    pending_apns_id TEXT, pending_since BIGINT, sent_seq BIGINT NOT NULL DEFAULT 0, due_at BIGINT,
                    attempts INTEGER NOT NULL DEFAULT 0, claimed_by TEXT, lease_until BIGINT, last_content TEXT, last_timestamp BIGINT,
                    last_sent_at BIGINT, last_status INTEGER, last_reason TEXT, sends INTEGER NOT NULL DEFAULT 0,
                    superseded INTEGER NOT NULL DEFAULT 0, failures INTEGER NOT NULL DEFAULT 0, priority10_hour BIGINT,
                    priority10_count INTEGER NOT NULL DEFAULT 0, created_at BIGINT NOT NULL, started_at BIGINT, ended_at BIGINT,
                    updated_at BIGINT NOT NULL, PRIMARY KEY (app_id, id))
                """,
                "CREATE INDEX activities_due ON activities (due_at) WHERE due_at IS NOT NULL",
                "CREATE INDEX activities_state ON activities (app_id, state, created_at, id)",
                "CREATE INDEX activities_open ON activities (created_at) WHERE state IN ('starting', 'active')",
            ]),
            // The console (Console/): what each webhook attempt got, for its list of attempts.
            SchemaMigrator.Migration(version: 5, statements: [
                "ALTER TABLE webhook_events ADD COLUMN last_status INTEGER",
                "ALTER TABLE webhook_events ADD COLUMN last_latency_ms BIGINT",
                "ALTER TABLE webhook_events ADD COLUMN last_answer TEXT",
            ]),
            // Traces (Telemetry/OpenTelemetry/): the submission's span context (a W3C traceparent), so
            // that each delivery attempt, in any process, is a span of the submission's trace.
            SchemaMigrator.Migration(version: 6, statements: [
                "ALTER TABLE jobs ADD COLUMN trace_parent TEXT",
            ]),
            // Each delivery's row is rewritten twice (its claim and its outcome change the
            // queue's indexed columns), and each rewrite adds an entry to every index of the
            // table: the index on app_id cost both, for two rare admin statements (deleting an
            // app, erasing a user) that reach an app's deliveries through its jobs instead.
            SchemaMigrator.Migration(version: 7, statements: [
                "DROP INDEX deliveries_app",
            ]),
            // A claim that rewrites no index entry (a HOT update on PostgreSQL): the queue's
            // index no longer reads `state` (which a claim changes) but `in_queue` (1 from the
            // insert until the delivery is final), and a claim's lease is `lease_until`, outside
            // the index's key, instead of `due_at`. Lease renewals then rewrite no index either.
            // A claim's new row versions need room in their page: half of each new page is kept
            // free (PostgreSQL's fillfactor).
            SchemaMigrator.Migration(version: 8, statements: unbounded + [
                "ALTER TABLE deliveries ADD COLUMN in_queue INTEGER NOT NULL DEFAULT 0",
                "ALTER TABLE deliveries ADD COLUMN lease_until BIGINT",
                "UPDATE deliveries SET in_queue = 1 WHERE state IN ('queued', 'claimed')",
                "UPDATE deliveries SET lease_until = due_at WHERE state = 'claimed'",
                "DROP INDEX deliveries_due",
                "CREATE INDEX deliveries_due ON deliveries (due_at, id) WHERE in_queue = 1",
            ] + (postgres ? ["ALTER TABLE deliveries SET (fillfactor = 50)"] : [])),
            // A job's deliveries counted by state in its own row, kept by every statement that
            // moves a delivery between states (``SQLGatewayStore/StateChanges``), so a job's
            // summary reads one row instead of counting a million: `queued` is the open
            // deliveries not claimed. `taken_over` says that a delivery's current claim took it
            // from a process whose lease ran out (it was counted as claimed already).
            SchemaMigrator.Migration(version: 9, statements: unbounded + DeliveryState.countedColumns.map {
                "ALTER TABLE jobs ADD COLUMN \($0) INTEGER NOT NULL DEFAULT 0"
            } + [
                // NULL (no byte in the row) unless 1: the claim stays a HOT update with room to spare.
                "ALTER TABLE deliveries ADD COLUMN taken_over INTEGER",
                """
                UPDATE jobs SET \(DeliveryState.countedColumns.map { "\($0) = c.\($0)" }.joined(separator: ", "))
                FROM (SELECT job_id, \(DeliveryState.counted.map { "sum(CASE WHEN state = '\($0.rawValue)' THEN 1 ELSE 0 END) AS \($0.countColumn!)" }.joined(separator: ", "))
                      FROM deliveries GROUP BY job_id) c
                WHERE c.job_id = jobs.id
                """,
            ]),
        ]
    }

    /// `,beta,staff,`: each tag between commas (tags hold no commas).
    static func encodeTags(_ tags: [String]) -> String {
        tags.isEmpty ? "" : "," + tags.joined(separator: ",") + ","
    }

    static func decodeTags(_ text: String) -> [String] {
        text.split(separator: ",").map(String.init)
    }

    /// `*` (every app) or the app ids joined by newlines.
    static func encodeApps(_ apps: [String]?) -> String {
        apps.map { $0.joined(separator: "\n") } ?? "*"
    }

    static func decodeApps(_ text: String) -> [String]? {
        text == "*" ? nil : text.split(separator: "\n").map(String.init)
    }
}

/// The store cannot be used: why.
struct GatewayStoreError: Error, CustomStringConvertible {
    var message: String
    /// What kind of failure it is, when the database was the cause (a connection of the
    /// store's own refused or timed out): how ``GuardedStore`` tells an outage.
    var kind: StoreFailureKind? = nil
    var description: String { message }
}
