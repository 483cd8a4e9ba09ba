import Foundation
import HeraldSQL
import Logging
import struct SQLiteNIO.SQLiteError

/// The gateway's database in one SQLite file (`herald serve --db FILE`): for one gateway
/// process. Every statement and transaction runs on one connection, one at a time; commits are
/// durable (WAL, `synchronous = FULL`) before a submission is acknowledged.
final class SQLiteGatewayDatabase: GatewayDatabase {
    private let database: SQLiteDatabase
    var path: String { database.path }
    var dialect: GatewaySchema.Dialect { .sqlite }

    private init(_ database: SQLiteDatabase) { self.database = database }

    /// Opens (or creates) the file and brings its schema up to date.
    static func open(path: String, logger: Logger) async throws -> SQLGatewayStore {
        let database: SQLiteDatabase
        do {
            database = try await SQLiteDatabase.open(path: path, logger: logger)
        } catch {
            throw GatewayStoreError(message: "cannot open the database '\(path)': \(error)")
        }
        let store = SQLGatewayStore(SQLiteGatewayDatabase(database))
        do {
            try await store.migrate()
        } catch {
            await database.close()
            throw error
        }
        return store
    }

    func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
        try await database.query(sql, binds)
    }

    func transaction<T: Sendable>(_ body: @Sendable (any SQLExecutor) async throws -> T) async throws -> T {
        try await database.transaction(body)
    }

    func migrate() async throws {
        try await query("PRAGMA journal_mode = WAL")
        // FULL: a committed submission survives a power cut, not only a killed process.
        try await query("PRAGMA synchronous = FULL")
        try await query("PRAGMA foreign_keys = ON")
        // Erased users leave nothing in the file: freed pages are zeroed, not kept.
        try await query("PRAGMA secure_delete = ON")
        try await GatewaySchema.migrate(database, dialect: .sqlite, named: "'\(path)'", describe: describe)
    }

    func insertDeliveries(_ job: NewJob, on executor: any SQLExecutor) async throws {
        guard case .tokens(let tokens) = job.audience else { return }
        let due = job.dueAt(nil)
        for chunk in tokens.chunked(SQLGatewayStore.rowsPerInsert) {
            var binds: [SQLValue] = []
            binds.reserveCapacity(chunk.count * 6)
            for (token, apnsID) in chunk {
                binds += [.text(job.id), .text(job.app), .text(token), .text(apnsID), .integer(due), .integer(job.now)]
            }
            try await executor.query(
                "INSERT INTO deliveries (job_id, app_id, token, apns_id, state, in_queue, due_at, attempts, updated_at) VALUES "
                    + Array(repeating: "(?, ?, ?, ?, 'queued', 1, ?, 0, ?)", count: chunk.count).joined(separator: ", "),
                binds)
        }
    }

    /// One process, one connection, submissions one at a time: never two at once.
    func isUniqueViolation(_ error: any Error) -> Bool { false }

    /// The room the file's folder must have to count as not full: the write-ahead log grows by
    /// whole transactions.
    static let minimumFreeBytes: UInt64 = 4 << 20

    /// New pages for 64 KB, in a transaction rolled back (SQLite refuses them at once when it may
    /// not grow, as `max_page_count` says), and room on the file system for the log to grow.
    /// Rewriting a row would succeed on a full disk (freed pages are reused), so it proves nothing.
    func probeWrite() async throws {
        do {
            try await database.transaction { executor in
                try await executor.query("INSERT INTO herald_gateway_health (id, stamp, filler) VALUES (2, 0, zeroblob(65536)) ON CONFLICT (id) DO NOTHING")
                throw ProbeRollback()
            }
        } catch is ProbeRollback {}
        var info = statvfs()
        let folder = (path as NSString).deletingLastPathComponent
        guard statvfs(folder.isEmpty ? "." : folder, &info) == 0 else { return }
        let free = UInt64(info.f_bavail) * UInt64(info.f_frsize)
        guard free >= Self.minimumFreeBytes else {
            throw GatewayStoreError(message: "\(free) bytes free where the database lives; the gateway waits for \(Self.minimumFreeBytes)", kind: .full)
        }
    }

    func forgetDeleted() async throws {
        try await query("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// Ends the probe's transaction without keeping anything.
    private struct ProbeRollback: Error {}

    func ping() async throws {
        try await query("SELECT 1")
    }

    /// One file, one connection: nothing to start afresh, no server to look for.
    func reconnect() async {}
    func probeConnection(within timeout: Duration) async throws {}
    var canBeUnreachable: Bool { false }

    /// SQLite is a file in this process: a failed statement is never an outage (a call that
    /// takes too long is, and the deadline says so); a write refused for lack of space is a
    /// full disk.
    func classify(_ error: any Error) -> StoreFailureKind {
        if let error = error as? GatewayStoreError, let kind = error.kind { return kind }
        return (error as? SQLiteError)?.reason == .full ? .full : .query
    }

    func describe(_ error: any Error) -> String { "\(error)" }

    func close() async {
        await database.close()
    }
}
