import Foundation
import HeraldDevice
import HeraldJSON
import HeraldProtocol
import HeraldSQL
import Logging
import NIOCore
import NIOPosix
import SQLiteNIO

/// The persistent store of `herald mock --db FILE`: every request, the devices, the fault rules
/// and the broadcast channels in an SQLite database, so what was captured survives a restart. A
/// request's answer is written only once its row is committed, so a crash or kill loses nothing
/// the sender was told about. Filters and search run in the database. Retention (by count and
/// by age) is applied continuously.
///
/// One connection runs every statement in order: a device row written before a request's row is
/// committed before it.
final class DatabaseStore: RecordStore {
    private let connection: SQLiteConnection
    let path: String
    let retention: RecordRetention
    /// Tests only: each record write waits this long first (a slow disk).
    let writeDelay: Duration?
    private let logger: Logger

    /// The schema version this build writes (`PRAGMA user_version`).
    static var schemaVersion: Int { migrator.latest }

    private init(connection: SQLiteConnection, path: String, retention: RecordRetention, writeDelay: Duration?, logger: Logger) {
        self.connection = connection
        self.path = path
        self.retention = retention
        self.writeDelay = writeDelay
        self.logger = logger
    }

    /// Opens (or creates) the database at `path` and brings its schema up to date.
    static func open(path: String, retention: RecordRetention, writeDelay: Duration? = nil, logger: Logger) async throws -> DatabaseStore {
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        } catch {
            throw MockDatabaseError(path: path, problem: "cannot open it: \(error)")
        }
        let store = DatabaseStore(connection: connection, path: path, retention: retention, writeDelay: writeDelay, logger: logger)
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

    /// Brings the schema to ``schemaVersion`` through the migrations below.
    private func migrate() async throws {
        _ = try await connection.query("PRAGMA journal_mode = WAL")
        // WAL with NORMAL: a committed row survives the process being killed (not a power cut).
        _ = try await connection.query("PRAGMA synchronous = NORMAL")
        do {
            try await Self.migrator.migrate(SQLiteDatabase(connection: connection, path: path))
        } catch let error as SchemaMigrator.NewerSchema {
            throw MockDatabaseError(path: path, problem: "it was written by a newer Herald (schema \(error.found); this one knows \(error.known))")
        } catch let error as SchemaMigrator.Failure {
            throw MockDatabaseError(path: path, problem: "cannot bring the schema to version \(error.version): \(error.underlying)")
        }
    }

    /// The schema's versions, recorded in `PRAGMA user_version`.
    static let migrator = SchemaMigrator([
        .init(version: 1, statements: [
            """
            CREATE TABLE notifications (
                id INTEGER PRIMARY KEY, apns_id TEXT, received_at REAL NOT NULL, kind TEXT NOT NULL,
                device_token TEXT, topic TEXT, push_type TEXT, status INTEGER, accepted INTEGER NOT NULL,
                reason TEXT, search TEXT NOT NULL, json TEXT NOT NULL)
            """,
            "CREATE INDEX notifications_token ON notifications (device_token)",
            "CREATE INDEX notifications_apns_id ON notifications (apns_id)",
            "CREATE INDEX notifications_received_at ON notifications (received_at)",
        ]),
        // Version 2: devices, fault rules and channels are kept too; requests keep their body
        // as sent (resent byte for byte) and the broadcast channel they name (a device's Live
        // Activities are rebuilt from them).
        .init(version: 2, statements: [
            "ALTER TABLE notifications ADD COLUMN channel_id TEXT",
            "ALTER TABLE notifications ADD COLUMN body BLOB",
            "CREATE INDEX notifications_channel ON notifications (channel_id)",
            """
            CREATE TABLE devices (
                token TEXT PRIMARY KEY, topic TEXT, environment TEXT NOT NULL, unregistered_at REAL,
                channels TEXT NOT NULL, registered INTEGER NOT NULL, last_seen REAL)
            """,
            "CREATE TABLE faults (id INTEGER PRIMARY KEY, rule TEXT NOT NULL, seen INTEGER NOT NULL, applied INTEGER NOT NULL)",
            """
            CREATE TABLE channels (
                id TEXT PRIMARY KEY, bundle_id TEXT NOT NULL, storage_policy INTEGER NOT NULL, created_at REAL NOT NULL)
            """,
        ]),
    ], record: .userVersion)

    // MARK: Records

    /// The highest request id stored (new ids continue after it).
    func highestID() async throws -> Int {
        Int(try await connection.query("SELECT max(id) AS id FROM notifications").first?.column("id")?.integer ?? 0)
    }

    func append(_ record: NotificationRecord) -> EventLoopFuture<Void>? {
        let binds: [SQLiteData] = [
            .integer(record.id), record.apnsID.map { .text($0) } ?? .null, .float(record.receivedAt.timeIntervalSince1970),
            .text(record.kind.rawValue), record.deviceToken.map { .text($0) } ?? .null, record.topic.map { .text($0) } ?? .null,
            record.request?.pushType.map { .text($0.rawValue) } ?? .null, record.status.map { .integer($0) } ?? .null,
            .integer(record.isAccepted ? 1 : 0), record.reason.map { .text($0.rawValue) } ?? .null, .text(record.searchText),
            .text(record.jsonText), record.request?.channelID.map { .text($0) } ?? .null,
            .blob(ByteBuffer(bytes: record.body)),
        ]
        let connection = self.connection
        let write = { @Sendable in connection.query(
            "INSERT OR REPLACE INTO notifications (id, apns_id, received_at, kind, device_token, topic, push_type, status, accepted, reason, search, json, channel_id, body) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            binds
        ).map { _ in } }
        guard let delay = writeDelay else { return write() }
        return connection.eventLoop.scheduleTask(in: TimeAmount(delay)) {}.futureResult.flatMap { write() }
    }

    func page(_ query: NotificationQuery) async throws -> RecordPage {
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
        if let channelID = query.channelID { add("channel_id = ?", .text(channelID)) }
        if let search = query.search, !search.isEmpty {
            // LIKE with its wildcards escaped: the text is matched as given (ASCII case-insensitive).
            let escaped = search.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
            add("search LIKE ? ESCAPE '\\'", .text("%" + escaped + "%"))
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let total = try await connection.query("SELECT count(*) AS n FROM notifications" + filter, binds).first?.column("n")?.integer ?? 0
        let rows = try await connection.query(
            "SELECT json, body, received_at FROM notifications" + filter + " ORDER BY id DESC LIMIT ?", binds + [.integer(max(0, query.limit))])
        return RecordPage(records: rows.compactMap(Self.record(from:)), total: Int(total))
    }

    func find(id: String) async throws -> NotificationRecord? {
        let rows = try await connection.query(
            "SELECT json, body, received_at FROM notifications WHERE apns_id = ? OR id = ? ORDER BY id DESC LIMIT 1",
            [.text(id), Int(id).map { .integer($0) } ?? .null])
        return rows.first.flatMap(Self.record(from:))
    }

    /// A row's record: its JSON, its body (absent in rows of schema 1), its time.
    private static func record(from row: SQLiteRow) -> NotificationRecord? {
        guard let text = row.column("json")?.string, let document = try? JSONDocument(parsing: Array(text.utf8)) else { return nil }
        var body: [UInt8]?
        if case .blob(let buffer)? = row.column("body") { body = Array(buffer.readableBytesView) }
        let receivedAt = Date(timeIntervalSince1970: row.column("received_at")?.double ?? 0)
        return NotificationRecord(json: document, body: body, receivedAt: receivedAt)
    }

    func count() async throws -> Int {
        Int(try await connection.query("SELECT count(*) AS n FROM notifications").first?.column("n")?.integer ?? 0)
    }

    func removeAll() async throws {
        _ = try await connection.query("DELETE FROM notifications")
    }

    func applyRetention(now: Date) async throws {
        _ = try await connection.query(
            "DELETE FROM notifications WHERE id <= (SELECT max(id) FROM notifications) - ?", [.integer(retention.count)])
        if let age = retention.ageInSeconds {
            _ = try await connection.query("DELETE FROM notifications WHERE received_at < ?", [.float(now.timeIntervalSince1970 - age)])
        }
    }

    // MARK: Devices, fault rules and channels

    /// A device's binding as stored (its Notification Center is rebuilt from its requests).
    struct DeviceRow: Sendable, Equatable {
        var token: DeviceToken
        var topic: String?
        var environment: APNsEnvironment
        var unregisteredAt: Date?
        var channels: [String]
        /// Registered through the API (never evicted), not by a first push.
        var registered: Bool
        var lastSeen: Date?
    }

    /// Writes a device's row (the write is ordered before every later statement).
    @discardableResult
    func save(_ device: DeviceRow) -> EventLoopFuture<Void> {
        var channels = JSONWriter(output: JSONBytes())
        channels.value(.array(device.channels.map { .string($0) }))
        return connection.query(
            "INSERT OR REPLACE INTO devices (token, topic, environment, unregistered_at, channels, registered, last_seen) VALUES (?,?,?,?,?,?,?)",
            [
                .text(device.token.hex), device.topic.map { .text($0) } ?? .null, .text(device.environment.rawValue),
                device.unregisteredAt.map { .float($0.timeIntervalSince1970) } ?? .null,
                .text(String(decoding: channels.output.bytes, as: UTF8.self)), .integer(device.registered ? 1 : 0),
                device.lastSeen.map { .float($0.timeIntervalSince1970) } ?? .null,
            ]
        ).map { _ in }
    }

    @discardableResult
    func deleteDevice(_ token: DeviceToken) -> EventLoopFuture<Void> {
        connection.query("DELETE FROM devices WHERE token = ?", [.text(token.hex)]).map { _ in }
    }

    func devices() async throws -> [DeviceRow] {
        try await connection.query("SELECT * FROM devices ORDER BY token").compactMap { row -> DeviceRow? in
            guard let hex = row.column("token")?.string, let token = try? DeviceToken(hex: hex),
                  let environment = row.column("environment")?.string.flatMap(APNsEnvironment.init(rawValue:)) else { return nil }
            let channels = row.column("channels")?.string.flatMap { try? JSONDocument(parsing: Array($0.utf8)) }?
                .root.elements.compactMap(\.stringValue) ?? []
            return DeviceRow(
                token: token, topic: row.column("topic")?.string, environment: environment,
                unregisteredAt: row.column("unregistered_at")?.double.map(Date.init(timeIntervalSince1970:)),
                channels: channels, registered: row.column("registered")?.integer == 1,
                lastSeen: row.column("last_seen")?.double.map(Date.init(timeIntervalSince1970:)))
        }
    }

    /// Replaces the stored fault rules with `entries`. (No transaction: requests' rows written
    /// meanwhile on the same connection would share its fate.)
    @discardableResult
    func saveFaults(_ entries: [FaultTable.Entry]) -> EventLoopFuture<Void> {
        let kept = entries.map { String($0.id) }.joined(separator: ",")
        var future = connection.query("DELETE FROM faults WHERE id NOT IN (\(kept))").map { _ in }
        for entry in entries {
            future = future.flatMap { _ in
                self.connection.query(
                    "INSERT OR REPLACE INTO faults (id, rule, seen, applied) VALUES (?,?,?,?)",
                    [.integer(entry.id), .text(entry.rule.description), .integer(entry.seen), .integer(entry.applied)]
                ).map { _ in }
            }
        }
        return future
    }

    /// The stored fault rules (a rule that no longer parses is left out, with a warning).
    func faults() async throws -> [FaultTable.Entry] {
        try await connection.query("SELECT * FROM faults ORDER BY id").compactMap { row -> FaultTable.Entry? in
            guard let id = row.column("id")?.integer, let text = row.column("rule")?.string else { return nil }
            guard let rule = try? FaultRule(parsing: text) else {
                logger.warning("a stored fault rule no longer parses and is left out", metadata: ["rule": "\(text)"])
                return nil
            }
            return FaultTable.Entry(id: Int(id), rule: rule, seen: Int(row.column("seen")?.integer ?? 0), applied: Int(row.column("applied")?.integer ?? 0))
        }
    }

    @discardableResult
    func save(_ channel: MockChannel) -> EventLoopFuture<Void> {
        connection.query(
            "INSERT OR REPLACE INTO channels (id, bundle_id, storage_policy, created_at) VALUES (?,?,?,?)",
            [.text(channel.id), .text(channel.bundleID), .integer(channel.storagePolicy), .float(channel.createdAt.timeIntervalSince1970)]
        ).map { _ in }
    }

    @discardableResult
    func deleteChannel(id: String) -> EventLoopFuture<Void> {
        connection.query("DELETE FROM channels WHERE id = ?", [.text(id)]).map { _ in }
    }

    func channels() async throws -> [MockChannel] {
        try await connection.query("SELECT * FROM channels ORDER BY created_at").compactMap { row -> MockChannel? in
            guard let id = row.column("id")?.string, let bundleID = row.column("bundle_id")?.string else { return nil }
            return MockChannel(
                id: id, bundleID: bundleID, storagePolicy: Int(row.column("storage_policy")?.integer ?? 0),
                createdAt: Date(timeIntervalSince1970: row.column("created_at")?.double ?? 0))
        }
    }

    /// Forgets devices, fault rules and channels (the API's reset).
    func removeState() async throws {
        for table in ["devices", "faults", "channels"] { _ = try await connection.query("DELETE FROM \(table)") }
    }

    func close() async {
        do {
            try await connection.close()
        } catch {
            logger.warning("closing the database failed", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }
}

extension DatabaseStore.DeviceRow {
    init(_ device: MockDevice) {
        self.init(
            token: device.token, topic: device.topic, environment: device.environment, unregisteredAt: device.unregisteredAt,
            channels: device.channels.sorted(), registered: device.registered, lastSeen: device.lastSeen)
    }

    /// The device it describes, with an empty Notification Center (rebuilt from its requests).
    func device(renderer: NotificationRenderer) -> MockDevice {
        var device = MockDevice(
            token: token, topic: topic, environment: environment, unregisteredAt: unregisteredAt, channels: Set(channels),
            deliveries: 0, device: SimulatedDevice(renderer: renderer))
        device.registered = registered
        device.lastSeen = lastSeen
        return device
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
