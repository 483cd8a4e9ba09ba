import HeraldJSON
import HeraldSQL

/// Live Activities in SQL: a row per activity, read and written whole under its row lock.
extension SQLGatewayStore {
    func upsertStartToken(app: String, token: String, attributesType: String, user: String?, now: Int64) async throws {
        try await database.transaction { executor in
            if let user {
                // One token per user and type: the app reports a new one when it changes.
                try await executor.query(
                    "DELETE FROM start_tokens WHERE app_id = ? AND user_id = ? AND attributes_type = ? AND token <> ?",
                    [.text(app), .text(user), .text(attributesType), .text(token)])
            }
            try await executor.query(
                """
                INSERT INTO start_tokens (app_id, token, attributes_type, user_id, updated_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (app_id, token) DO UPDATE SET attributes_type = excluded.attributes_type, user_id = excluded.user_id, updated_at = excluded.updated_at
                """,
                [.text(app), .text(token), .text(attributesType), SQLValue(user), .integer(now)])
        }
    }

    func startTokens(app: String, user: String, attributesType: String) async throws -> [String] {
        try await database.query(
            "SELECT token FROM start_tokens WHERE app_id = ? AND user_id = ? AND attributes_type = ? ORDER BY token",
            [.text(app), .text(user), .text(attributesType)]
        ).compactMap { $0.text("token") }
    }

    func deleteStartToken(app: String, token: String) async throws {
        try await database.query("DELETE FROM start_tokens WHERE app_id = ? AND token = ?", [.text(app), .text(token)])
    }

    private static let activityColumns = [
        "app_id", "id", "attributes_type", "attributes", "state", "user_id", "start_tokens", "update_token", "wants_channel", "channel_id",
        "channel_deleted", "start_pending", "pending", "pending_seq", "pending_apns_id", "pending_since", "sent_seq", "due_at", "attempts",
        "claimed_by", "lease_until", "last_content", "last_timestamp", "last_sent_at", "last_status", "last_reason", "sends", "superseded",
        "failures", "priority10_hour", "priority10_count", "created_at", "started_at", "ended_at", "updated_at",
    ]
    private static let selectActivity = "SELECT \(activityColumns.joined(separator: ", ")) FROM activities"

    private static func node(_ text: String?) -> JSONDocument.Node? {
        guard let text, let document = try? JSONDocument(parsing: Array(text.utf8)) else { return nil }
        return document.root
    }

    /// The row's values, in ``activityColumns``' order.
    private static func values(_ a: StoredActivity) -> [SQLValue] {
        [
            .text(a.app), .text(a.id), .text(a.attributesType), .text(a.attributes), .text(a.state.rawValue), SQLValue(a.user),
            .text(a.startTokens.joined(separator: ",")), SQLValue(a.updateToken), .integer(a.wantsChannel ? 1 : 0), SQLValue(a.channelID),
            .integer(a.channelDeleted ? 1 : 0), SQLValue(a.startPending.map(\.json.compactText)), SQLValue(a.pending.map(\.json.compactText)),
            .integer(a.pendingSeq), SQLValue(a.pendingAPNsID), SQLValue(a.pendingSince), .integer(a.sentSeq), SQLValue(a.dueAt),
            .integer(Int64(a.attempts)), SQLValue(a.claimedBy), SQLValue(a.leaseUntil), SQLValue(a.lastContent), SQLValue(a.lastTimestamp),
            SQLValue(a.lastSentAt), SQLValue(a.lastStatus), SQLValue(a.lastReason), .integer(Int64(a.sends)), .integer(Int64(a.superseded)),
            .integer(Int64(a.failures)), SQLValue(a.priority10Hour), .integer(Int64(a.priority10Count)), .integer(a.createdAt),
            SQLValue(a.startedAt), SQLValue(a.endedAt), .integer(a.updatedAt),
        ]
    }

    private static func activity(from row: SQLRow) -> StoredActivity {
        func int(_ name: String) -> Int { Int(row.integer(name) ?? 0) }
        let tokens = row.text("start_tokens") ?? ""
        return StoredActivity(
            app: row.text("app_id") ?? "", id: row.text("id") ?? "", attributesType: row.text("attributes_type") ?? "",
            attributes: row.text("attributes") ?? "{}", state: ActivityState(rawValue: row.text("state") ?? "") ?? .expired,
            user: row.text("user_id"), startTokens: tokens.isEmpty ? [] : tokens.split(separator: ",").map(String.init),
            updateToken: row.text("update_token"), wantsChannel: int("wants_channel") != 0, channelID: row.text("channel_id"),
            channelDeleted: int("channel_deleted") != 0, startPending: node(row.text("start_pending")).flatMap(ActivityStart.init),
            pending: node(row.text("pending")).flatMap(ActivityContent.init), pendingSeq: row.integer("pending_seq") ?? 0,
            pendingAPNsID: row.text("pending_apns_id"), pendingSince: row.integer("pending_since"), sentSeq: row.integer("sent_seq") ?? 0,
            dueAt: row.integer("due_at"), attempts: int("attempts"), claimedBy: row.text("claimed_by"), leaseUntil: row.integer("lease_until"),
            lastContent: row.text("last_content"), lastTimestamp: row.integer("last_timestamp"), lastSentAt: row.integer("last_sent_at"),
            lastStatus: row.integer("last_status").map { Int($0) }, lastReason: row.text("last_reason"), sends: int("sends"),
            superseded: int("superseded"), failures: int("failures"), priority10Hour: row.integer("priority10_hour"),
            priority10Count: int("priority10_count"), createdAt: row.integer("created_at") ?? 0, startedAt: row.integer("started_at"),
            endedAt: row.integer("ended_at"), updatedAt: row.integer("updated_at") ?? 0)
    }

    func insertActivity(_ activity: StoredActivity) async throws -> Bool {
        let columns = Self.activityColumns
        return !(try await database.query(
            "INSERT INTO activities (\(columns.joined(separator: ", "))) VALUES (\(placeholders(columns.count))) ON CONFLICT (app_id, id) DO NOTHING RETURNING id",
            Self.values(activity))).isEmpty
    }

    func activity(app: String, id: String) async throws -> StoredActivity? {
        try await database.query("\(Self.selectActivity) WHERE app_id = ? AND id = ?", [.text(app), .text(id)]).first.map(Self.activity(from:))
    }

    func activities(app: String, state: ActivityState?, after: String?, limit: Int) async throws -> [StoredActivity] {
        var statement = SQLStatement("\(Self.selectActivity) WHERE app_id = ?", [.text(app)])
        statement.and("state = ?", state.map { .text($0.rawValue) })
        statement.and("id > ?", after.map(SQLValue.text))
        statement.append(" ORDER BY id LIMIT ?", .integer(Int64(limit)))
        return try await database.query(statement).map(Self.activity(from:))
    }

    func openActivities(app: String, attributesType: String) async throws -> [StoredActivity] {
        try await database.query(
            "\(Self.selectActivity) WHERE app_id = ? AND attributes_type = ? AND state IN ('starting', 'active') ORDER BY created_at DESC, id LIMIT 100",
            [.text(app), .text(attributesType)]
        ).map(Self.activity(from:))
    }

    func changeActivity<T: Sendable>(app: String, id: String, _ change: @escaping @Sendable (inout StoredActivity) throws -> T) async throws -> T? {
        let lock = dialect.rowLock
        return try await database.transaction { executor -> T? in
            guard let row = try await executor.query("\(Self.selectActivity) WHERE app_id = ? AND id = ?\(lock)", [.text(app), .text(id)]).first else {
                return nil
            }
            var activity = Self.activity(from: row)
            let before = activity
            let result = try change(&activity)
            if activity != before {
                let columns = Self.activityColumns.dropFirst(2)
                try await executor.query(
                    "UPDATE activities SET \(columns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE app_id = ? AND id = ?",
                    Array(Self.values(activity).dropFirst(2)) + [.text(app), .text(id)])
            }
            return result
        }
    }

    func claimActivities(worker: String, limit: Int, now: Int64, leaseUntil: Int64) async throws -> [StoredActivity] {
        // Most polls find nothing: a read first, so they take no write lock (SQLite's is the
        // whole file's, which the notification queue's claims need).
        guard !(try await database.query(
            "SELECT id FROM activities WHERE due_at IS NOT NULL AND due_at <= ? LIMIT 1", [.integer(now)])).isEmpty
        else { return [] }
        let skip = dialect.skipLocked
        return try await database.transaction { executor in
            let due = try await executor.query(
                """
                SELECT app_id, id FROM activities WHERE due_at IS NOT NULL AND due_at <= ? AND (lease_until IS NULL OR lease_until < ?)
                AND app_id NOT IN (SELECT id FROM apps WHERE paused_at IS NOT NULL) ORDER BY due_at, app_id, id LIMIT ?\(skip)
                """,
                [.integer(now), .integer(now), .integer(Int64(limit))])
            var claimed: [StoredActivity] = []
            for row in due {
                let rows = try await executor.query(
                    "UPDATE activities SET claimed_by = ?, lease_until = ? WHERE app_id = ? AND id = ? RETURNING \(Self.activityColumns.joined(separator: ", "))",
                    [.text(worker), .integer(leaseUntil), .text(row.text("app_id") ?? ""), .text(row.text("id") ?? "")])
                claimed += rows.map(Self.activity(from:))
            }
            return claimed
        }
    }

    func expireActivities(startedBefore: Int64, now: Int64) async throws -> Int {
        guard !(try await database.query(
            "SELECT id FROM activities WHERE state IN ('starting', 'active') AND created_at < ? LIMIT 1", [.integer(startedBefore)])).isEmpty
        else { return 0 }
        return try await database.query(
            """
            UPDATE activities SET state = 'expired', ended_at = ?, updated_at = ?, pending = NULL, start_pending = NULL,
            due_at = CASE WHEN channel_id IS NOT NULL AND channel_deleted = 0 THEN ? ELSE NULL END
            WHERE state IN ('starting', 'active') AND created_at < ? RETURNING id
            """,
            [.integer(now), .integer(now), .integer(now), .integer(startedBefore)]
        ).count
    }
}
