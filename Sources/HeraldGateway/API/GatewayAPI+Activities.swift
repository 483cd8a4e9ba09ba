import Foundation
import HeraldHTTPAPI
import HeraldJSON
import HeraldLint
import HeraldProtocol
import Hummingbird

/// Live Activities: push-to-start tokens, activities started, updated and ended by the sender's
/// id, the update tokens the app reports (Activities/ holds the rest).
extension GatewayAPI {
    static func addActivities(to router: Router<BasicRequestContext>, server: GatewayServer) {
        router.post("/v1/apps/{app}/start-tokens") { request, context in
            var request = request
            let app = try await server.app(request, context)
            let root = try await Self.document(&request).root
            try Self.activityRefusal { () throws(ActivityRequest.Refusal) in
                try ActivityRequest.refuseUnknown(root, allowed: ["token", "attributesType", "user"])
            }
            guard let hex = root["token"]?.stringValue, let token = try? DeviceToken(hex: hex) else {
                return Self.error(.badRequest, "required: \"token\", the push-to-start token (hex) from pushToStartTokenUpdates", pointer: "/token")
            }
            let type = try Self.activityRefusal { () throws(ActivityRequest.Refusal) in try ActivityRequest.identifier(root, "attributesType", what: "the ActivityAttributes type's name") }
            var user: String?
            if root["user"] != nil { user = try Self.activityRefusal { () throws(ActivityRequest.Refusal) in try ActivityRequest.identifier(root, "user", what: "your own id for the user") } }
            try await server.store.upsertStartToken(app: app.id, token: token.hex, attributesType: type, user: user, now: server.nowMilliseconds)
            return Self.json(["token": .string(token.hex), "attributesType": .string(type), "user": user.map { .string($0) } ?? .null], status: .created)
        }
        router.post("/v1/apps/{app}/activities") { request, context in
            var request = request
            let app = try await server.app(request, context)
            let root = try await Self.document(&request).root
            return try await Self.activityAnswer(server) { () async throws -> Response in
                try ActivityRequest.refuseUnknown(root, allowed: ActivityRequest.startFields)
                let id = try ActivityRequest.identifier(root, "id", what: "your own id for the activity")
                let type = try ActivityRequest.identifier(root, "attributesType", what: "the ActivityAttributes type's name")
                guard let attributes = root["attributes"], attributes.kind == .object else {
                    throw ActivityRequest.Refusal(status: 422, message: "required: \"attributes\", the static ActivityAttributes as a JSON object (a start without them is ignored)", pointer: "/attributes")
                }
                let wantsChannel = root["channel"]?.boolValue ?? false
                if let node = root["channel"], node.boolValue == nil {
                    throw ActivityRequest.Refusal(status: 400, message: "true to send updates through a broadcast channel, false (the default) to the activity's own token", pointer: "/channel")
                }
                let content = try ActivityRequest.content(root, event: .start)
                // Whom to start it on: a user's push-to-start tokens, or one token.
                guard let to = root["to"], to.kind == .object, to.count == 1 else {
                    throw ActivityRequest.Refusal(status: 400, message: "required: \"to\": {\"user\": \"…\"} or {\"startToken\": \"…\"}", pointer: "/to")
                }
                var user: String?
                var tokens: [String] = []
                if let hex = to["startToken"]?.stringValue {
                    guard let token = try? DeviceToken(hex: hex) else { throw ActivityRequest.Refusal(status: 400, message: "not a push-to-start token (hex)", pointer: "/to/startToken") }
                    tokens = [token.hex]
                } else if to["user"] != nil {
                    let name = try ActivityRequest.identifier(to, "user", what: "a user")
                    user = name
                    tokens = try await server.store.startTokens(app: app.id, user: name, attributesType: type)
                    guard !tokens.isEmpty else {
                        throw ActivityRequest.Refusal(status: 422, message: "user \(name) has no push-to-start token for \(type): the app registers one with POST /v1/apps/\(app.id)/start-tokens", pointer: "/to/user")
                    }
                } else {
                    throw ActivityRequest.Refusal(status: 400, message: "\"to\" is {\"user\": \"…\"} or {\"startToken\": \"…\"}", pointer: "/to")
                }
                let now = server.nowMilliseconds
                var writer = JSONWriter(output: JSONBytes())
                writer.value(attributes.value)
                var activity = StoredActivity(
                    app: app.id, id: id, attributesType: type, attributes: String(decoding: writer.output.bytes, as: UTF8.self), state: .starting,
                    user: user, startTokens: tokens, updateToken: nil, wantsChannel: wantsChannel, createdAt: now, updatedAt: now)
                let findings = try ActivityRequest.lint(content, activity: activity, app: app, now: now)
                activity.startPending = ActivityStart(tokens: tokens, apnsID: APNsID.random().description, content: content)
                activity.dueAt = now
                guard try await server.store.insertActivity(activity) else {
                    throw ActivityRequest.Refusal(status: 409, message: "the app already has an activity \(id): each activity's id is new (GET it to see its state)", pointer: "/id")
                }
                server.activityChanged()
                return Self.json(
                    [
                        "id": .string(id), "state": .string(activity.state.rawValue), "startTokens": .number(JSONNumber(tokens.count)),
                        "channel": .bool(wantsChannel), "findings": .array(findings.map { Self.findingValue($0) }),
                    ], status: .accepted, headers: [.location: "/v1/apps/\(app.id)/activities/\(id)"])
            }
        }
        router.get("/v1/apps/{app}/activities") { request, context in
            let app = try await server.app(request, context)
            let query = request.uri.queryParameters
            let state: ActivityState? = try Self.choice(query["state"], named: "state")
            let limit = try Self.limit(query["limit"], default: 100)
            let list = try await server.store.activities(app: app.id, state: state, after: query["after"].map(String.init), limit: limit)
            let limits = server.configuration.activityLimits
            let now = server.nowMilliseconds
            return Self.json([
                "activities": .array(list.map { Self.activityValue($0, limits: limits, now: now) }),
                "next": list.count == limit ? list.last.map { .string($0.id) } ?? .null : .null,
            ])
        }
        router.get("/v1/apps/{app}/activities/{id}") { request, context in
            let app = try await server.app(request, context)
            let id = try context.parameters.require("id")
            guard let activity = try await server.store.activity(app: app.id, id: id) else { return Self.error(.notFound, "no activity \(id)") }
            return Self.json(Self.activityValue(activity, limits: server.configuration.activityLimits, now: server.nowMilliseconds))
        }
        router.patch("/v1/apps/{app}/activities/{id}") { request, context in
            try await Self.onActivity(request, context, server, allowed: ActivityRequest.updateFields) { app, id, root in
                try await Self.enqueue(try ActivityRequest.content(root, event: .update), activity: id, app: app, server: server)
            }
        }
        router.post("/v1/apps/{app}/activities/{id}/end") { request, context in
            try await Self.onActivity(request, context, server, allowed: ActivityRequest.endFields) { app, id, root in
                try await Self.enqueue(try ActivityRequest.content(root, event: .end), activity: id, app: app, server: server)
            }
        }
        // The app reports its activity's update token (again whenever it changes).
        router.post("/v1/apps/{app}/activities/{id}/tokens") { request, context in
            try await Self.onActivity(request, context, server, allowed: ["token"]) { app, id, root in
                try await Self.setUpdateToken(root, activity: id, app: app, server: server)
            }
        }
        // The same without the activity's id, as a device reports it: matched by the start
        // token, the attributes type and the attributes it was started with.
        router.post("/v1/apps/{app}/activity-tokens") { request, context in
            var request = request
            let app = try await server.app(request, context)
            let root = try await Self.document(&request).root
            return try await Self.activityAnswer(server) {
                try ActivityRequest.refuseUnknown(root, allowed: ["token", "activityId", "startToken", "attributesType", "attributes", "topic"])
                if let topic = root["topic"], topic.stringValue == nil {
                    throw ActivityRequest.Refusal(status: 400, message: "the topic the start was sent to, a string", pointer: "/topic")
                }
                if let node = root["startToken"], node.stringValue.flatMap({ try? DeviceToken(hex: $0) }) == nil {
                    throw ActivityRequest.Refusal(status: 400, message: "the push-to-start token the activity was started on (hex)", pointer: "/startToken")
                }
                if let node = root["attributes"], node.kind != .object {
                    throw ActivityRequest.Refusal(status: 400, message: "the activity's attributes, a JSON object", pointer: "/attributes")
                }
                if root["attributesType"] != nil { _ = try ActivityRequest.identifier(root, "attributesType", what: "the ActivityAttributes type's name") }
                if root["activityId"] != nil {
                    let id = try ActivityRequest.identifier(root, "activityId", what: "the activity's id")
                    return try await Self.setUpdateToken(root, activity: id, app: app, server: server)
                }
                let type = try ActivityRequest.identifier(root, "attributesType", what: "the ActivityAttributes type's name")
                guard let attributes = root["attributes"], attributes.kind == .object else {
                    throw ActivityRequest.Refusal(status: 400, message: "required: \"attributes\" (or \"activityId\"): the activity's attributes, which name it", pointer: "/attributes")
                }
                let startToken = root["startToken"]?.stringValue.flatMap { try? DeviceToken(hex: $0) }?.hex
                let wanted = attributes.value
                let candidates = try await server.store.openActivities(app: app.id, attributesType: type).filter { activity in
                    (startToken.map { activity.startTokens.contains($0) } ?? true)
                        && (try? JSONDocument(parsing: Array(activity.attributes.utf8)))?.root.value == wanted
                }
                guard let match = candidates.first(where: { $0.updateToken == nil }) ?? candidates.first else {
                    throw ActivityRequest.Refusal(status: 404, message: "no open \(type) activity of app \(app.id) has these attributes\(startToken == nil ? "" : " and start token")")
                }
                return try await Self.setUpdateToken(root, activity: match.id, app: app, server: server)
            }
        }
    }

    /// A route on one activity: the app (authorized), the activity's id, the body with only
    /// `allowed` fields; a refusal answered in the API's error shape.
    static func onActivity(
        _ request: Request, _ context: BasicRequestContext, _ server: GatewayServer, allowed: [String],
        _ body: (GatewayApp, String, JSONDocument.Node) async throws -> Response
    ) async throws -> Response {
        var request = request
        let app = try await server.app(request, context)
        let id = try context.parameters.require("id")
        let root = try await Self.document(&request).root
        return try await Self.activityAnswer(server) {
            try ActivityRequest.refuseUnknown(root, allowed: allowed)
            return try await body(app, id, root)
        }
    }

    /// Runs `body`, answering its refusal as the API's error shape.
    static func activityAnswer(_ server: GatewayServer, _ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch let refusal as ActivityRequest.Refusal {
            var extra: [(String, JSONValue)] = []
            if !refusal.findings.isEmpty { extra.append(("findings", .array(refusal.findings.map { Self.findingValue($0) }))) }
            return Self.error(HTTPResponse.Status(code: refusal.status), refusal.message, pointer: refusal.pointer, extra: extra)
        }
    }

    /// Runs `body`, turning a refusal into the API's refusal.
    @discardableResult
    static func activityRefusal<T>(_ body: () throws(ActivityRequest.Refusal) -> T) throws -> T {
        do throws(ActivityRequest.Refusal) {
            return try body()
        } catch {
            throw APIRefusal(status: HTTPResponse.Status(code: error.status), message: error.message, pointer: error.pointer)
        }
    }

    /// Puts an update or end in the activity's one slot (an older one not yet sent is superseded).
    static func enqueue(_ content: ActivityContent, activity id: String, app: GatewayApp, server: GatewayServer) async throws -> Response {
        guard let current = try await server.store.activity(app: app.id, id: id) else {
            throw ActivityRequest.Refusal(status: 404, message: "no activity \(id)")
        }
        let now = server.nowMilliseconds
        let findings = try ActivityRequest.lint(content, activity: current, app: app, now: now)
        let limits = server.configuration.activityLimits
        let apnsID = APNsID.random().description
        let changed = try await server.store.changeActivity(app: app.id, id: id) { row -> Result<StoredActivity, ActivityRequest.Refusal> in
            guard row.state.isOpen else {
                return .failure(ActivityRequest.Refusal(
                    status: 409, message: "the activity \(row.state == .expired ? "expired (the system ends an activity after \(limits.active))" : "ended"): no \(content.event.rawValue) is sent after it"))
            }
            row.pending = content
            row.pendingSeq += 1
            row.pendingAPNsID = apnsID
            row.pendingSince = now
            if content.event == .end {
                row.state = .ended
                row.endedAt = now
                if row.startPending != nil, row.claimedBy == nil, row.startedAt == nil {
                    // Ended before its start went: nothing reaches the device at all.
                    row.startPending = nil
                    row.pending = nil
                    row.lastReason = "ended before its start was sent: nothing was sent"
                }
            }
            row.updatedAt = now
            row.dueAt = row.claimedBy == nil ? row.nextDue(now: now, limits: limits) : row.dueAt ?? now
            row.recount()
            return .success(row)
        }
        guard let changed else { throw ActivityRequest.Refusal(status: 404, message: "no activity \(id)") }
        let row = try changed.get()
        server.activityChanged()
        var warnings: [JSONValue] = []
        let used = row.priority10(inHourOf: now) + (content.priority == 10 ? 1 : 0)
        if content.priority == 10, used > limits.priority10PerHour {
            warnings.append(.string(
                "this is the activity's priority-10 push number \(used) this hour: priority 10 counts against a budget the system sets per device (larger with NSSupportsLiveActivitiesFrequentUpdates), past which updates are throttled (Apple, \"Starting and updating Live Activities with ActivityKit push notifications\"); send priority 5 unless the update must show at once"))
        }
        let waiting = !row.canSendUpdates && row.channelID == nil && !row.wantsChannel
        if waiting {
            warnings.append(.string("no update token yet: the \(content.event.rawValue) waits for the app to report it (at most \(limits.tokenWait); only the newest waiting content is sent)"))
        }
        return Self.json(
            [
                "id": .string(id), "state": .string(row.state.rawValue), "seq": .number(JSONNumber(row.pendingSeq)),
                "waitingForToken": .bool(waiting), "warnings": .array(warnings), "findings": .array(findings.map { Self.findingValue($0) }),
            ], status: .accepted)
    }

    /// Records the update token the app reported; what waited for it is due at once.
    static func setUpdateToken(_ root: JSONDocument.Node, activity id: String, app: GatewayApp, server: GatewayServer) async throws -> Response {
        guard let hex = root["token"]?.stringValue, let token = try? DeviceToken(hex: hex) else {
            throw ActivityRequest.Refusal(status: 400, message: "required: \"token\", the activity's update token (hex) from pushTokenUpdates", pointer: "/token")
        }
        let now = server.nowMilliseconds
        let limits = server.configuration.activityLimits
        let row = try await server.store.changeActivity(app: app.id, id: id) { row -> StoredActivity in
            guard row.state.isOpen, row.updateToken != token.hex else { return row }
            row.updateToken = token.hex
            if row.state == .starting { row.state = .active }
            row.updatedAt = now
            if row.claimedBy == nil { row.dueAt = row.nextDue(now: now, limits: limits) }
            return row
        }
        guard let row else { throw ActivityRequest.Refusal(status: 404, message: "no activity \(id)") }
        server.activityChanged()
        return Self.json(["id": .string(row.id), "state": .string(row.state.rawValue), "updateToken": row.updateToken.map { .string($0) } ?? .null])
    }

    /// An activity as the API shows it.
    static func activityValue(_ a: StoredActivity, limits: LiveActivityLimits, now: Int64) -> JSONValue {
        func node(_ text: String?) -> JSONValue { text.flatMap { try? JSONDocument(parsing: Array($0.utf8)) }?.root.value ?? .null }
        let lockScreenUntil: Int64? = a.endedAt.map { ended in
            let limit = ended + limits.lockScreen.milliseconds
            return a.pending?.dismissalDate.map { min($0 * 1_000, limit) } ?? limit
        }
        return [
            "id": .string(a.id), "attributesType": .string(a.attributesType), "attributes": node(a.attributes), "state": .string(a.state.rawValue),
            "user": a.user.map { .string($0) } ?? .null, "startTokens": .array(a.startTokens.map { .string($0) }),
            "startPending": a.startPending.map { .array($0.tokens.map { .string($0) }) } ?? .null,
            "updateToken": a.updateToken.map { .string($0) } ?? .null,
            "channel": a.wantsChannel ? ["id": a.channelID.map { .string($0) } ?? .null, "deleted": .bool(a.channelDeleted)] : .null,
            "createdAt": APITime.json(a.createdAt), "startedAt": APITime.json(a.startedAt), "endedAt": APITime.json(a.endedAt),
            "expiresAt": APITime.json(a.createdAt + limits.active.milliseconds), "lockScreenUntil": APITime.json(lockScreenUntil),
            "lastContent": node(a.lastContent), "lastTimestamp": a.lastTimestamp.map { .number(JSONNumber($0)) } ?? .null,
            "lastSentAt": APITime.json(a.lastSentAt), "lastStatus": a.lastStatus.map { .number(JSONNumber($0)) } ?? .null,
            "lastReason": a.lastReason.map { .string($0) } ?? .null,
            "pending": a.pending.map { content in
                [
                    "event": .string(content.event.rawValue), "seq": .number(JSONNumber(a.pendingSeq)), "since": APITime.json(a.pendingSince),
                    "waitingForToken": .bool(!a.canSendUpdates && !a.wantsChannel), "dueAt": APITime.json(a.dueAt),
                ]
            } ?? .null,
            "counts": [
                "sent": .number(JSONNumber(a.sends)), "superseded": .number(JSONNumber(a.superseded)), "failed": .number(JSONNumber(a.failures)),
                "submitted": .number(JSONNumber(a.pendingSeq)),
            ],
            "budget": ["priority10ThisHour": .number(JSONNumber(a.priority10(inHourOf: now))), "warnsAfter": .number(JSONNumber(limits.priority10PerHour))],
        ]
    }
}
