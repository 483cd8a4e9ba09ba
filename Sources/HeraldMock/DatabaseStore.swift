import Foundation
import HeraldJSON
import Logging
import NIOCore
import NIOPosix
import SQLiteNIO

/// The persistent store of `herald mock --db FILE`: every request in an SQLite database, so what
/// was captured survives a restart. A request's answer is written only once its row is
/// committed, so a crash or kill loses nothing the sender was told about. Filters and search run
/// in the database. Retention (by count and by age) is applied continuously.
final class DatabaseStore: Sendable {
    /// How much the database keeps.
    struct Retention: Sendable, Hashable {
        /// The newest this many requests (older ones are deleted).
        var count: Int
        /// Requests older than this are deleted (`nil`: kept whatever their age).
        var age: Duration?
        /// Tests only: each write waits this long first (a slow disk).
        var writeDelay: Duration? = nil
    }

    private let connection: SQLiteConnection
    let path: String
    let retention: Retention
    private let logger: Logger

    /// The schema version this build writes (`PRAGMA user_version`).
    static let schemaVersion = 1

    private init(connection: SQLiteConnection, path: String, retention: Retention, logger: Logger) {
        self.connection = connection
        self.path = path
        self.retention = retention
        self.logger = logger
    }

    /// Opens (or creates) the database at `path` and brings its schema up to date.
    static func open(path: String, retention: Retention, logger: Logger) async throws -> DatabaseStore {
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        } catch {
            throw MockDatabaseError(path: path, problem: "cannot open it: \(error)")
        }
        let store = DatabaseStore(connection: connection, path: path, retention: retention, logger: logger)
        do {
            try await store.migrate()
        } catch let error as MockDatabaseError {
            try? await connection.close()
            throw error
        } catch {
            try? await connection.close()
            throw MockDatabaseError(path: path, problem: "cannot set it up: \(error)")
        }
        return store
    }

    /// Versioned migrations, applied in order at start-up.
    private func migrate() async throws {
        _ = try await connection.query("PRAGMA journal_mode = WAL")
        // WAL with NORMAL: a committed row survives the process being killed (not a power cut).
        _ = try await connection.query("PRAGMA synchronous = NORMAL")
        let version = try await connection.query("PRAGMA user_version").first?.column("user_version")?.integer ?? 0
        if version > Self.schemaVersion {
            throw MockDatabaseError(path: path, problem: "it was written by a newer Herald (schema \(version); this one knows \(Self.schemaVersion))")
        }
        if version < 1 {
            _ = try await connection.query("""
                CREATE TABLE notifications (
                    id INTEGER PRIMARY KEY, apns_id TEXT, received_at REAL NOT NULL, kind TEXT NOT NULL,
                    device_token TEXT, topic TEXT, push_type TEXT, status INTEGER, accepted INTEGER NOT NULL,
                    reason TEXT, search TEXT NOT NULL, json TEXT NOT NULL)
                """)
            _ = try await connection.query("CREATE INDEX notifications_token ON notifications (device_token)")
            _ = try await connection.query("CREATE INDEX notifications_apns_id ON notifications (apns_id)")
            _ = try await connection.query("CREATE INDEX notifications_received_at ON notifications (received_at)")
            _ = try await connection.query("PRAGMA user_version = 1")
        }
    }

    /// The highest request id stored (new ids continue after it).
    func highestID() async throws -> Int {
        Int(try await connection.query("SELECT max(id) AS id FROM notifications").first?.column("id")?.integer ?? 0)
    }

    /// Stores a record; the future completes once the row is committed.
    func insert(_ record: NotificationRecord) -> EventLoopFuture<Void> {
        var writer = JSONWriter(output: JSONBytes())
        writer.value(record.jsonValue)
        let search = [record.payloadText, record.deviceToken ?? "", record.topic ?? "", record.reason?.rawValue ?? "", record.apnsID ?? ""]
            .joined(separator: "\n")
        let binds: [SQLiteData] = [
            .integer(record.id), record.apnsID.map { .text($0) } ?? .null, .float(record.receivedAt.timeIntervalSince1970),
            .text(record.kind.rawValue), record.deviceToken.map { .text($0) } ?? .null, record.topic.map { .text($0) } ?? .null,
            record.request?.pushType.map { .text($0.rawValue) } ?? .null, record.status.map { .integer($0) } ?? .null,
            .integer(record.isAccepted ? 1 : 0), record.reason.map { .text($0.rawValue) } ?? .null, .text(search),
            .text(String(decoding: writer.output.bytes, as: UTF8.self)),
        ]
        let connection = self.connection
        let write = { @Sendable in connection.query(
            "INSERT OR REPLACE INTO notifications (id, apns_id, received_at, kind, device_token, topic, push_type, status, accepted, reason, search, json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            binds
        ).map { _ in } }
        guard let delay = retention.writeDelay else { return write() }
        let nanoseconds = Int64(delay.components.seconds) * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
        return connection.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) {}.futureResult.flatMap { write() }
    }

    /// The records matching `query`, newest first, as the API's JSON text, and how many match.
    func query(_ query: NotificationQuery) async throws -> (json: [String], total: Int) {
        var conditions: [String] = []
        var binds: [SQLiteData] = []
        func add(_ condition: String, _ value: SQLiteData) {
            conditions.append(condition)
            binds.append(value)
        }
        if let before = query.before { add("id < ?", .integer(before)) }
        if let token = query.token { add("device_token = ?", .text(token.lowercased())) }
        if let topic = query.topic { add("topic = ?", .text(topic)) }
        if let status = query.status { add("status = ?", .integer(status)) }
        if let accepted = query.accepted { add("accepted = ?", .integer(accepted ? 1 : 0)) }
        if let reason = query.reason { add("reason = ?", .text(reason)) }
        if let pushType = query.pushType { add("push_type = ?", .text(pushType)) }
        if let kind = query.kind { add("kind = ?", .text(kind)) }
        if let search = query.search, !search.isEmpty {
            // LIKE with its wildcards escaped: the text is matched as given (ASCII case-insensitive).
            let escaped = search.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
            add("search LIKE ? ESCAPE '\\'", .text("%" + escaped + "%"))
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let total = try await connection.query("SELECT count(*) AS n FROM notifications" + filter, binds).first?.column("n")?.integer ?? 0
        let rows = try await connection.query(
            "SELECT json FROM notifications" + filter + " ORDER BY id DESC LIMIT ?", binds + [.integer(max(0, query.limit))])
        return (rows.compactMap { $0.column("json")?.string }, Int(total))
    }

    /// One record's JSON text, by apns-id or id.
    func record(id: String) async throws -> String? {
        let rows = try await connection.query(
            "SELECT json FROM notifications WHERE apns_id = ? OR id = ? ORDER BY id DESC LIMIT 1",
            [.text(id), Int(id).map { .integer($0) } ?? .null])
        return rows.first?.column("json")?.string
    }

    /// How many records are stored.
    func count() async throws -> Int {
        Int(try await connection.query("SELECT count(*) AS n FROM notifications").first?.column("n")?.integer ?? 0)
    }

    /// Deletes every record.
    func clear() async throws {
        _ = try await connection.query("DELETE FROM notifications")
    }

    /// Applies the retention: the newest `count` records, none older than `age`.
    func prune(now: Date) async throws {
        _ = try await connection.query(
            "DELETE FROM notifications WHERE id <= (SELECT max(id) FROM notifications) - ?", [.integer(retention.count)])
        if let age = retention.age {
            let seconds = Double(age.components.seconds) + Double(age.components.attoseconds) / 1e18
            _ = try await connection.query("DELETE FROM notifications WHERE received_at < ?", [.float(now.timeIntervalSince1970 - seconds)])
        }
    }

    func close() async {
        do {
            try await connection.close()
        } catch {
            logger.warning("closing the database failed", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }
}

/// A database that cannot be used: which file, and why.
public struct MockDatabaseError: Error, CustomStringConvertible, Sendable {
    /// The database file.
    public var path: String
    /// What is wrong.
    public var problem: String
    /// `the database 'mock.db': …`.
    public var description: String { "the database '\(path)': \(problem)" }
}
