import HeraldJSON
import HeraldSQL

/// Where a Live Activity is in its life.
enum ActivityState: String, Sendable, CaseIterable {
    /// Created; its start has not been accepted by APNs for any push-to-start token yet.
    case starting
    /// Started (accepted for at least one token, or its update token is known).
    case active
    /// Ended by the sender (`POST …/end`); the end may still be on its way.
    case ended
    /// Past the system's limit (``LiveActivityLimits``): the device ended it.
    case expired

    /// Whether it still takes updates.
    var isOpen: Bool { self == .starting || self == .active }
}

/// A Live Activity as the store keeps it: the row is its own queue (the start still to send, the
/// newest update or end not yet sent, a lease while a process sends), and what was sent.
struct StoredActivity: Sendable, Equatable {
    var app: String
    var id: String
    var attributesType: String
    /// The static attributes, compact JSON.
    var attributes: String
    var state: ActivityState
    var user: String?
    /// The push-to-start tokens it was started on.
    var startTokens: [String]
    /// The activity's own token, once the app reported it.
    var updateToken: String?
    var wantsChannel: Bool = false
    /// Its broadcast channel, once created.
    var channelID: String?
    var channelDeleted: Bool = false
    /// The start still to send (``ActivityStart``), or `nil` once sent.
    var startPending: ActivityStart?
    /// The newest update or end not yet sent, its sequence number, `apns-id` and since when it
    /// waits.
    var pending: ActivityContent?
    var pendingSeq: Int64 = 0
    var pendingAPNsID: String?
    var pendingSince: Int64?
    /// The sequence number of the newest update or end APNs accepted.
    var sentSeq: Int64 = 0
    /// When there is something to do (a send, a retry, the end of a wait for a token, a
    /// channel to delete); `nil`: nothing.
    var dueAt: Int64?
    var attempts: Int = 0
    var claimedBy: String?
    var leaseUntil: Int64?
    /// The content state last accepted (compact JSON), its `timestamp` (Unix seconds), when.
    var lastContent: String?
    var lastTimestamp: Int64?
    var lastSentAt: Int64?
    var lastStatus: Int?
    var lastReason: String?
    /// Updates and ends accepted, superseded by a newer one before they went (``recount()``),
    /// failed for good.
    var sends: Int = 0
    var superseded: Int = 0
    var failures: Int = 0
    /// Priority-10 sends in the hour that began at `priority10Hour` (Unix milliseconds).
    var priority10Hour: Int64?
    var priority10Count: Int = 0
    var createdAt: Int64
    var startedAt: Int64?
    var endedAt: Int64?
    var updatedAt: Int64

    /// Whether an update or end can go now: the start went, and it has an address.
    var canSendUpdates: Bool { startPending == nil && (updateToken != nil || channelID != nil) }

    /// Counts as superseded what was submitted and neither sent, failed, waiting nor in flight:
    /// an update replaced by a newer one before it went.
    mutating func recount() {
        superseded = max(0, Int(pendingSeq) - sends - failures - (pending != nil ? 1 : 0) - (claimedBy != nil ? 1 : 0))
    }

    /// Priority-10 sends in the hour of `now`.
    func priority10(inHourOf now: Int64) -> Int {
        priority10Hour == now / 3_600_000 * 3_600_000 ? priority10Count : 0
    }
}

/// A start still to send: the tokens it has not reached, its `apns-id`, its content.
struct ActivityStart: Sendable, Equatable {
    var tokens: [String]
    var apnsID: String
    var content: ActivityContent

    var json: JSONValue {
        ["tokens": .array(tokens.map { .string($0) }), "apnsId": .string(apnsID), "content": content.json]
    }

    init(tokens: [String], apnsID: String, content: ActivityContent) {
        self.tokens = tokens
        self.apnsID = apnsID
        self.content = content
    }

    init?(_ node: JSONDocument.Node) {
        guard let list = node["tokens"], let apnsID = node["apnsId"]?.stringValue, let content = node["content"].flatMap(ActivityContent.init) else { return nil }
        self.init(tokens: list.elements.compactMap(\.stringValue), apnsID: apnsID, content: content)
    }
}

/// What one start, update or end says: the payload's `aps` keys a sender gives (the gateway adds
/// `timestamp`, `event` and the start's token or channel request when it sends).
struct ActivityContent: Sendable, Equatable {
    enum Event: String, Sendable { case start, update, end }

    var event: Event
    var contentState: JSONValue?
    var alert: JSONValue?
    var staleDate: Int64?
    var dismissalDate: Int64?
    var relevanceScore: JSONNumber?
    /// 5 or 10.
    var priority: Int

    var json: JSONValue {
        var object = JSONObject()
        func add(_ key: String, _ value: JSONValue?) { if let value { object.members.append(.init(key: key, value: value)) } }
        add("event", .string(event.rawValue))
        add("contentState", contentState)
        add("alert", alert)
        add("staleDate", staleDate.map { .number(JSONNumber($0)) })
        add("dismissalDate", dismissalDate.map { .number(JSONNumber($0)) })
        add("relevanceScore", relevanceScore.map { .number($0) })
        add("priority", .number(JSONNumber(priority)))
        return .object(object)
    }

    init(event: Event, contentState: JSONValue?, alert: JSONValue?, staleDate: Int64?, dismissalDate: Int64?, relevanceScore: JSONNumber?, priority: Int) {
        self.event = event
        self.contentState = contentState
        self.alert = alert
        self.staleDate = staleDate
        self.dismissalDate = dismissalDate
        self.relevanceScore = relevanceScore
        self.priority = priority
    }

    init?(_ node: JSONDocument.Node) {
        guard let event = node["event"]?.stringValue.flatMap(Event.init(rawValue:)) else { return nil }
        self.init(
            event: event, contentState: node["contentState"]?.value, alert: node["alert"]?.value, staleDate: node["staleDate"]?.int64Value,
            dismissalDate: node["dismissalDate"]?.int64Value, relevanceScore: node["relevanceScore"]?.value.numberValue,
            priority: Int(node["priority"]?.int64Value ?? 5))
    }
}

/// The store's side of Live Activities (``SQLGatewayStore`` implements it once for both
/// databases; ``GuardedStore`` puts its deadline on each call).
protocol ActivityStore: Sendable {
    /// Registers a push-to-start token; a user's earlier token for the same attributes type is
    /// replaced.
    func upsertStartToken(app: String, token: String, attributesType: String, user: String?, now: Int64) async throws
    /// The push-to-start tokens of a user for an attributes type.
    func startTokens(app: String, user: String, attributesType: String) async throws -> [String]
    /// Inserts a new activity; `false` when the app has one with that id.
    func insertActivity(_ activity: StoredActivity) async throws -> Bool
    func activity(app: String, id: String) async throws -> StoredActivity?
    /// A page of activities, oldest first after `after` (an id).
    func activities(app: String, state: ActivityState?, after: String?, limit: Int) async throws -> [StoredActivity]
    /// The open activities of `app` of `attributesType`, newest first (at most 100): what an
    /// update token reported without an activity id is matched against.
    func openActivities(app: String, attributesType: String) async throws -> [StoredActivity]
    /// Reads the activity with its row locked, lets `change` edit it, and writes it back, in one
    /// transaction; `nil` when there is no such activity. A `change` that throws writes nothing.
    func changeActivity<T: Sendable>(app: String, id: String, _ change: @escaping @Sendable (inout StoredActivity) throws -> T) async throws -> T?
    /// Takes up to `limit` activities with something due, of apps not paused, for `worker`
    /// until `leaseUntil`.
    func claimActivities(worker: String, limit: Int, now: Int64, leaseUntil: Int64) async throws -> [StoredActivity]
    /// Marks open activities created before `startedBefore` expired (with a channel: due, to
    /// delete it); returns how many.
    func expireActivities(startedBefore: Int64, now: Int64) async throws -> Int
    /// Forgets a push-to-start token APNs called dead.
    func deleteStartToken(app: String, token: String) async throws
}

extension JSONValue {
    /// The value as compact JSON text (what the activity's row keeps).
    var compactText: String {
        var writer = JSONWriter(output: JSONBytes())
        writer.value(self)
        return String(decoding: writer.output.bytes, as: UTF8.self)
    }

    /// The number, when this is one.
    var numberValue: JSONNumber? {
        if case .number(let number) = self { return number }
        return nil
    }
}
