import Foundation
import HeraldSQL
import Logging
import NIOSSL
import PostgresNIO
import Synchronization

/// The gateway's database in PostgreSQL (`herald serve --postgres URL`): any number of gateway
/// processes on any number of machines share it. Workers claim deliveries with
/// `SELECT … FOR UPDATE SKIP LOCKED`, so two never hold the same row; a claim is a lease, and a
/// killed process's claims are taken over by the others when it ends.
final class PostgresGatewayDatabase: GatewayDatabase {
    var dialect: GatewaySchema.Dialect { .postgres }
    /// The pool in use and the task running it; replaced by ``reconnect()``.
    private let pool: Mutex<(client: PostgresClient, runner: Task<Void, Never>)>
    /// The tasks running the pools ``reconnect()`` replaced, and when, until they are closed.
    private let retired = Mutex<[(runner: Task<Void, Never>, since: ContinuousClock.Instant)]>([])
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
    static func open(url: String, logger: Logger, maximumConnections: Int = 8, lease: Duration = .seconds(60)) async throws -> SQLGatewayStore {
        let settings = try Settings(url: url)
        var configuration = settings.pool
        configuration.options.additionalStartupParameters = sessionParameters(lease: lease)
        // The pool retries a refused connection or a wrong password forever, quietly: one
        // connection first, with a deadline, turns those into an error the caller sees.
        try await probe(settings, url: url, logger: logger)
        configuration.options.maximumConnections = maximumConnections
        configuration.options.minimumConnections = 1
        // The pool's own chatter (a lease asked before run() starts, reconnects) stays out of the
        // log; failures reach the caller as errors.
        var background = logger
        background.logLevel = .error
        let database = PostgresGatewayDatabase(settings: settings, configuration: configuration, logger: logger, backgroundLogger: background, description: redacted(url))
        do {
            try await database.migrate()
        } catch {
            await database.close()
            throw GatewayStoreError(message: "cannot use the database \(redacted(url)): \(database.describe(error))")
        }
        return SQLGatewayStore(database)
    }

    /// What each session of the gateway's tells the server, so that no transaction holds row
    /// locks past a claim's lease when its process is cut off mid-transaction (a dropped route
    /// leaves the socket open and silent; the server's default keepalives notice after two
    /// hours): the server ends a session idle inside a transaction after a quarter of the lease
    /// (at most 10 s: the gateway's transactions last milliseconds), a statement after half the
    /// lease (at most 30 s), and probes a silent client every 5 s, dropping it after 3 unanswered
    /// probes. Its locks go with it, and the rows are taken over when their lease runs out.
    static func sessionParameters(lease: Duration) -> [(String, String)] {
        let idle = max(Duration.seconds(1), min(lease / 4, .seconds(10)))
        let statement = max(Duration.seconds(1), min(lease / 2, .seconds(30)))
        return [
            ("idle_in_transaction_session_timeout", String(idle.milliseconds)), ("statement_timeout", String(statement.milliseconds)),
            ("tcp_keepalives_idle", "5"), ("tcp_keepalives_interval", "5"), ("tcp_keepalives_count", "3"),
            ("application_name", "herald-gateway"),
        ]
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
            throw GatewayStoreError(message: "cannot connect to \(redacted(url)): \(Self.describe(error))", kind: classify(error))
        }
    }

    /// What a connection failure means, in a line (the server's message when it sent one).
    static func describe(_ error: PSQLError) -> String {
        // PostgresNIO wraps its own errors (a connection error caused by the server closing it);
        // the innermost one says what happened, where the outer one's text is a placeholder.
        if let inner = error.underlying as? PSQLError { return describe(inner) }
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

    func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
        try Self.rows(try await client.query(try Self.postgres(sql, binds), logger: logger).collect())
    }

    func transaction<T: Sendable>(_ body: @Sendable (any SQLExecutor) async throws -> T) async throws -> T {
        let logger = self.logger
        return try await client.withTransaction(logger: logger) { connection in try await body(Session(connection: connection, logger: logger)) }
    }

    /// The connection inside a transaction.
    private struct Session: SQLExecutor {
        let connection: PostgresConnection
        let logger: Logger
        func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
            try PostgresGatewayDatabase.rows(try await connection.query(try PostgresGatewayDatabase.postgres(sql, binds), logger: logger).collect())
        }
    }

    /// The statement with each `?` numbered (`$1`, `$2`, …) and its values bound.
    static func postgres(_ sql: String, _ values: [SQLValue]) throws -> PostgresQuery {
        var text = ""
        text.reserveCapacity(sql.utf8.count + values.count * 3)
        var number = 0
        for character in sql.unicodeScalars {
            if character == "?" {
                number += 1
                text += "$\(number)"
            } else {
                text.unicodeScalars.append(character)
            }
        }
        precondition(number == values.count, "a statement's placeholders and values differ in number")
        var binds = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .null: binds.appendNull()
            case .integer(let value): binds.append(value)
            case .real(let value): binds.append(value)
            case .text(let value): binds.append(value)
            case .blob(let bytes): binds.append(ByteBuffer(bytes: bytes))
            case .texts(let texts): binds.append(texts)
            case .integers(let integers): binds.append(integers)
            }
        }
        return PostgresQuery(unsafeSQL: text, binds: binds)
    }

    /// The rows, their column names read once for the result.
    static func rows(_ rows: [PostgresRow]) throws -> [SQLRow] {
        guard let first = rows.first else { return [] }
        let columns = SQLRow.Columns(first.lazy.map(\.columnName))
        return try rows.map { try row($0, columns) }
    }

    /// A row's cells as values; the gateway's columns are integers, texts and bytes.
    static func row(_ row: PostgresRow, _ columns: SQLRow.Columns) throws -> SQLRow {
        var values: [SQLValue] = []
        values.reserveCapacity(row.count)
        for cell in row {
            guard let bytes = cell.bytes else {
                values.append(.null)
                continue
            }
            // The common cells of a claim's rows read straight from their bytes (PostgresNIO
            // asks for results in binary): its generic decoding was nearly a third of the conversion.
            if cell.format == .binary, let value = binaryValue(bytes, cell.dataType) {
                values.append(value)
                continue
            }
            switch cell.dataType {
            case .int2, .int4, .int8: values.append(.integer(try cell.decode(Int64.self)))
            case .float4, .float8: values.append(.real(try cell.decode(Double.self)))
            case .bool: values.append(.integer(try cell.decode(Bool.self) ? 1 : 0))
            case .bytea: values.append(.blob(Array(try cell.decode(ByteBuffer.self).readableBytesView)))
            default: values.append(.text(try cell.decode(String.self)))
            }
        }
        return SQLRow(columns, values)
    }

    /// A binary cell of text or a big-endian integer as a value, as PostgresNIO decodes them;
    /// `nil` for other types (decoded through PostgresNIO) and for a cell of the wrong length.
    static func binaryValue(_ bytes: ByteBuffer, _ type: PostgresDataType) -> SQLValue? {
        switch type {
        case .text, .varchar, .name, .bpchar: .text(String(buffer: bytes))
        case .int8: bytes.readableBytes == 8 ? bytes.getInteger(at: bytes.readerIndex, as: Int64.self).map(SQLValue.integer) : nil
        case .int4: bytes.readableBytes == 4 ? bytes.getInteger(at: bytes.readerIndex, as: Int32.self).map { .integer(Int64($0)) } : nil
        case .int2: bytes.readableBytes == 2 ? bytes.getInteger(at: bytes.readerIndex, as: Int16.self).map { .integer(Int64($0)) } : nil
        default: nil
        }
    }

    // MARK: Schema

    func migrate() async throws {
        // Two processes starting at once: one migrates, the other waits for its lock.
        try await GatewaySchema.migrate(self, dialect: .postgres, named: description, describe: describe)
    }

    // MARK: Notifications

    func insertDeliveries(_ job: NewJob, on executor: any SQLExecutor) async throws {
        // Two arrays unnested: one statement per 50,000 tokens, its text the same for any count.
        guard case .tokens(let tokens) = job.audience else { return }
        for chunk in tokens.chunked(50_000) {
            try await executor.query(
                """
                INSERT INTO deliveries (job_id, app_id, token, apns_id, state, in_queue, due_at, attempts, updated_at)
                SELECT ?, ?, t.token, t.apns_id, 'queued', 1, ?, 0, ? FROM unnest(?::text[], ?::text[]) AS t(token, apns_id)
                """,
                [.text(job.id), .text(job.app), .integer(job.dueAt(nil)), .integer(job.now), .texts(chunk.map(\.token)), .texts(chunk.map(\.apnsID))])
        }
    }

    /// A committed write of the health table's row (PostgreSQL refuses it while its disk is full).
    func probeWrite() async throws {
        _ = try await query(
            "INSERT INTO herald_gateway_health (id, stamp) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET stamp = excluded.stamp",
            [.integer(Int64.random(in: 0...Int64.max))])
    }

    /// Dead rows are autovacuum's: nothing to do at once.
    func forgetDeleted() async throws {}

    func isUniqueViolation(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "23505"
    }

    // MARK: Health

    func probeConnection(within timeout: Duration) async throws {
        try await Self.probe(settings, url: description, logger: logger, timeout: timeout)
    }

    var canBeUnreachable: Bool { true }

    /// A new connection first (refused or not answering: an error within two seconds, whatever
    /// the pool is doing), then a statement through the pool; a pool still backing off from
    /// the outage is replaced.
    func ping() async throws {
        try await probeConnection(within: .seconds(2))
        do {
            try await withDeadline(.seconds(1), "a statement through the pool") { [client, logger] in
                _ = try await client.query("SELECT 1", logger: logger).collect()
            }
        } catch {
            await reconnect()
            _ = try await client.query("SELECT 1", logger: logger).collect()
        }
    }

    /// New calls go to a new pool (at most once per ``replacementInterval``). The old one is
    /// closed once the calls it is running have had ``retiredPoolGrace``, not at once: a probe
    /// that found it slow may have met a busy pool, not a broken one, and closing it would cut
    /// the transactions it runs (a large submission committing, rolled back and answered 503).
    func reconnect() async {
        let now = ContinuousClock.now
        let replaced: Bool = retired.withLock { retired in
            retired.removeAll { now - $0.since >= Self.retiredPoolGrace } // Their closing tasks cancelled them.
            if let last = retired.last?.since, now - last < Self.replacementInterval { return false }
            let old = pool.withLock { pool in
                defer { pool = Self.startPool(poolConfiguration, logger: backgroundLogger) }
                return pool.runner
            }
            retired.append((old, now))
            Task {
                try? await Task.sleep(for: Self.retiredPoolGrace)
                old.cancel()
            }
            return true
        }
        if replaced { logger.debug("the database's connection pool was replaced") }
    }

    /// How long a replaced pool may go on with the calls it was running.
    static let retiredPoolGrace: Duration = .seconds(30)
    /// How often the pool may be replaced: a probe every second cannot pile up pools.
    static let replacementInterval: Duration = .seconds(5)

    func classify(_ error: any Error) -> StoreFailureKind {
        // A connection of the store's own (the probe) says what it met.
        if let error = error as? GatewayStoreError, let kind = error.kind { return kind }
        return Self.classify(error)
    }

    /// What made a transaction fail: its body, else its commit, its begin, its rollback.
    static func cause(of transaction: PostgresTransactionError) -> (any Error)? {
        transaction.closureError ?? transaction.commitError ?? transaction.beginError ?? transaction.rollbackError
    }

    static func classify(_ error: any Error) -> StoreFailureKind {
        if let transaction = error as? PostgresTransactionError, let cause = cause(of: transaction) { return classify(cause) }
        guard let error = error as? PSQLError else {
            // The pool's own errors (its circuit breaker, a request it dropped) mean no connection.
            return String(reflecting: type(of: error)).contains("ConnectionPool") ? .connection : .query
        }
        if let state = error.serverInfo?[.sqlState] {
            if state.hasPrefix("28") { return .authentication }
            // Connection exceptions, the server shutting down or starting, too many connections.
            if state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300" { return .connection }
            // disk_full: the server answers but takes no writes.
            if state == "53100" { return .full }
            return .query
        }
        if let inner = error.underlying as? PSQLError, error.code == .connectionError || error.code == .serverClosedConnection {
            let kind = classify(inner)
            return kind == .query ? .connection : kind
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
        if let transaction = error as? PostgresTransactionError, let cause = Self.cause(of: transaction) { return describe(cause) }
        if let error = error as? PSQLError { return Self.describe(error) }
        if let error = error as? GatewayStoreError { return error.message }
        return String(reflecting: error)
    }

    func close() async {
        let runner = pool.withLock { $0.runner }
        for old in retired.withLock({ $0 }) { old.runner.cancel() }
        runner.cancel()
        _ = await runner.value
    }
}
