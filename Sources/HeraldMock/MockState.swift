import HeraldHTTPAPI
import Foundation
import HeraldDevice
import HeraldJSON
import HeraldProtocol
import Synchronization

/// A simulated device as the mock knows it: its binding (topic, environment), whether its token
/// is registered, and what its Notification Center shows.
public struct MockDevice: Sendable {
    /// The device token (lowercase hex).
    public var token: DeviceToken
    /// The topic the token belongs to (`nil` until the first push binds it).
    public var topic: String?
    /// The environment the token belongs to.
    public var environment: APNsEnvironment
    /// When the token was marked unregistered (410 from then on), or `nil` while it is active.
    public var unregisteredAt: Date?
    /// The broadcast channels it is subscribed to.
    public var channels: Set<String>
    /// Accepted pushes delivered to it.
    public var deliveries: Int
    /// Its Notification Center, badge, Live Activities and event log.
    public var device: SimulatedDevice
    /// When a push last reached it (accepted or not).
    public var lastSeen: Date?
    /// Whether it was registered through the API (kept), rather than made by a first push (the
    /// oldest of those are forgotten beyond 10,000).
    public var registered: Bool = false
    /// Whether its Notification Center and log were emptied because more recently reached
    /// devices took the mock's history budget (``MockConfiguration/deviceHistories``); the
    /// next push it receives starts a new history.
    public var historyForgotten: Bool = false
    /// For a Live Activity's update token: the push-to-start token whose start made it.
    public var startToken: DeviceToken? = nil
    /// For a push-to-start token: the update tokens its starts made (the newest 100).
    public var activityTokens: [DeviceToken] = []
    /// For an update token: how posting it to ``MockConfiguration/activityTokenReport`` went
    /// (`200`, or why it failed), once tried.
    public var tokenReport: String? = nil

    /// The device as JSON: `token`, `topic`, `environment`, `state` (`active` or
    /// `unregistered`), `unregisteredAt`, `channels`, `deliveries`, `lastSeen`, `registered`, `historyForgotten`, `badge`, `notificationCount`, `groups` (each
    /// `{threadId, notifications}`), `activities`, `backgroundWakes` (how many in the last
    /// hour), `backgroundWakeTimes` and `language` (the language it renders in). Times are RFC 3339
    /// in UTC with milliseconds, as everywhere in the API.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        func add(_ key: String, _ value: JSONValue) { object.members.append(.init(key: key, value: value)) }
        add("token", .string(token.hex))
        add("topic", topic.map { .string($0) } ?? .null)
        add("environment", .string(environment.rawValue))
        add("state", .string(unregisteredAt == nil ? "active" : "unregistered"))
        add("unregisteredAt", APITime.json(unregisteredAt.map(\.unixMilliseconds)))
        add("channels", .array(channels.sorted().map { .string($0) }))
        add("deliveries", .number(JSONNumber(deliveries)))
        add("lastSeen", lastSeen.map { .string(NotificationRecord.iso8601($0)) } ?? .null)
        add("registered", .bool(registered))
        add("historyForgotten", .bool(historyForgotten))
        add("badge", device.badge.map { .number(JSONNumber($0)) } ?? .null)
        add("notificationCount", .number(JSONNumber(device.notificationCount)))
        add("groups", .array(device.groups.map { group in
            [
                "threadId": group.threadIdentifier.map { .string($0) } ?? .null,
                "notifications": .array(group.notifications.map { notification in
                    [
                        "id": .string(notification.id), "receivedAt": APITime.json(Int64((notification.receivedAt * 1000).rounded())),
                        "collapseId": notification.collapseID.map { .string($0) } ?? .null,
                        "replacements": .number(JSONNumber(notification.replacements)), "content": notification.content.jsonValue,
                    ]
                }),
            ]
        }))
        add("activities", .array(device.activities.values.sorted { $0.id < $1.id }.map { activity in
            var value = MockCore.activityValue(activity, updateToken: startToken == nil ? nil : token, startToken: startToken)
            if case .object(var members) = value {
                members.members.insert(.init(key: "id", value: .string(activity.id)), at: 0)
                members.members.append(.init(key: "event", value: activity.latest.event.map { .string($0) } ?? .null))
                value = .object(members)
            }
            return value
        }))
        if let startToken { add("startToken", .string(startToken.hex)) }
        if !activityTokens.isEmpty { add("activityTokens", .array(activityTokens.map { .string($0.hex) })) }
        if let tokenReport { add("tokenReport", .string(tokenReport)) }
        add("backgroundWakes", .number(JSONNumber(device.backgroundWakes.count)))
        add("backgroundWakeTimes", .array(device.backgroundWakes.map { .string(NotificationRecord.iso8601(Date(timeIntervalSince1970: $0))) }))
        add("language", .string(device.renderer.localizer.language))
        return .object(object)
    }
}

/// A broadcast channel of the mock.
public struct MockChannel: Sendable, Hashable {
    /// The channel ID (base64 of 16 random bytes, as APNs' are).
    public var id: String
    /// The bundle ID it belongs to.
    public var bundleID: String
    /// 0: no message stored; 1: the most recent message stored.
    public var storagePolicy: Int
    /// When it was created.
    public var createdAt: Date

    /// `{id, bundleId, messageStoragePolicy, createdAt, subscribers}`.
    func jsonValue(subscribers: Int) -> JSONValue {
        [
            "id": .string(id), "bundleId": .string(bundleID), "messageStoragePolicy": .number(JSONNumber(storagePolicy)),
            "createdAt": .string(NotificationRecord.iso8601(createdAt)), "subscribers": .number(JSONNumber(subscribers)),
        ]
    }
}

/// Something that happened in the mock, for the event stream.
public enum MockEvent: Sendable {
    /// A request was answered (or not) and recorded.
    case received(NotificationRecord)
    /// The store was cleared.
    case cleared
    /// Something happened on a connection (a GOAWAY, a reset, a protocol error, a close).
    case connection(ConnectionEvent)
}

/// The devices the mock simulates, each behind its own lock so pushes to different devices run
/// in parallel.
final class DeviceRegistry: Sendable {
    final class Entry: Sendable {
        let state: Mutex<MockDevice>
        init(_ device: MockDevice) { state = Mutex(device) }
    }

    private let entries = Mutex<[DeviceToken: Entry]>([:])
    /// Insertion order of devices registered by a first push, for eviction: those before
    /// `head` are gone (popping the front of an array of 10,000 on every new device cost a
    /// load test over more devices than that a copy of the array per push).
    private let automatic = Mutex<(list: [DeviceToken], head: Int)>(([], 0))
    /// The devices that keep a history, most recently reached last.
    private let histories: Mutex<RecencyOrder<DeviceToken>>
    let capacity: Int
    /// What devices render with: the mock's app strings and default language.
    let renderer: NotificationRenderer

    /// `capacity` devices made by a first push are kept; the `histories` most recently reached
    /// devices keep their Notification Center and log (each device's own caps bound those).
    init(capacity: Int, histories: Int, renderer: NotificationRenderer) {
        self.capacity = capacity
        self.histories = Mutex(RecencyOrder(limit: histories))
        self.renderer = renderer
    }

    /// Notes that a push reached `token`'s device: the device reached longest ago beyond the
    /// history budget forgets its history. (Under a load test over more devices than the
    /// budget, memory stays flat: each device's caps times the budget.)
    func reached(_ token: DeviceToken) {
        histories.withLock { order in
            guard let forgotten = order.touch(token) else { return }
            entries.withLock { $0[forgotten] }?.state.withLock { device in
                device.device.forgetHistory()
                device.historyForgotten = true
            }
        }
    }

    func entry(_ token: DeviceToken) -> Entry? { entries.withLock { $0[token] } }

    /// The entry for `token`, made (bound to `topic` and `environment`) when it is new, and
    /// the token of a device evicted to make room, if any. Devices made this way are evicted
    /// oldest first beyond `capacity`.
    func entry(_ token: DeviceToken, creatingWith topic: String?, environment: APNsEnvironment) -> (entry: Entry, created: Bool, evicted: DeviceToken?) {
        let made: (entry: Entry, created: Bool, evicted: DeviceToken?) = entries.withLock { entries in
            if let entry = entries[token] { return (entry, false, nil) }
            let entry = Entry(MockDevice(token: token, topic: topic, environment: environment, unregisteredAt: nil, channels: [], deliveries: 0, device: SimulatedDevice(renderer: renderer)))
            entries[token] = entry
            let evicted: DeviceToken? = automatic.withLock { queue in
                queue.list.append(token)
                guard queue.list.count - queue.head > capacity else { return nil }
                let oldest = queue.list[queue.head]
                queue.head += 1
                if queue.head > capacity {
                    queue.list.removeFirst(queue.head)
                    queue.head = 0
                }
                return oldest
            }
            if let evicted { entries[evicted] = nil }
            return (entry, true, evicted)
        }
        // Outside the devices' lock: `reached` takes the two the other way round.
        if let evicted = made.evicted { histories.withLock { $0.remove(evicted) } }
        return made
    }

    /// Puts back a device as a database kept it (its Notification Center comes empty).
    func restore(_ device: MockDevice) {
        entries.withLock { entries in
            entries[device.token] = Entry(device)
            if !device.registered { automatic.withLock { $0.list.append(device.token) } }
        }
    }

    /// Registers (or re-binds) a device explicitly; it is never evicted.
    func register(_ token: DeviceToken, topic: String?, environment: APNsEnvironment) -> MockDevice {
        entries.withLock { entries in
            automatic.withLock { queue in
                if let index = queue.list[queue.head...].firstIndex(of: token) { queue.list.remove(at: index) }
            }
            if let entry = entries[token] {
                return entry.state.withLock { device in
                    if let topic { device.topic = topic }
                    device.environment = environment
                    device.unregisteredAt = nil
                    device.registered = true
                    return device
                }
            }
            var device = MockDevice(token: token, topic: topic, environment: environment, unregisteredAt: nil, channels: [], deliveries: 0, device: SimulatedDevice(renderer: renderer))
            device.registered = true
            entries[token] = Entry(device)
            return device
        }
    }

    func remove(_ token: DeviceToken) -> Bool {
        histories.withLock { $0.remove(token) }
        return entries.withLock { $0.removeValue(forKey: token) != nil }
    }

    var all: [MockDevice] {
        let list = entries.withLock { Array($0.values) }
        return list.map { $0.state.withLock { $0 } }.sorted { $0.token.hex < $1.token.hex }
    }

    var count: Int { entries.withLock { $0.count } }

    func removeAll() {
        histories.withLock { $0.removeAll() }
        entries.withLock { $0.removeAll() }
        automatic.withLock { $0 = ([], 0) }
    }
}

/// The `limit` most recently touched keys, in amortised constant time per touch: touches are
/// appended to a list, a key's latest touch is the one that counts, and the list is compacted
/// when stale touches make up half of it.
struct RecencyOrder<Key: Hashable> {
    let limit: Int
    private var latest: [Key: Int] = [:]
    private var touches: [(key: Key, sequence: Int)] = []
    private var head = 0
    private var sequence = 0

    init(limit: Int) { self.limit = max(1, limit) }

    /// Whether `key` is among the most recent.
    func contains(_ key: Key) -> Bool { latest[key] != nil }

    /// Marks `key` touched now; returns the key that fell out of the most recent `limit`, if
    /// one did (a touch adds at most one key, so at most one falls out: nothing allocated).
    mutating func touch(_ key: Key) -> Key? {
        sequence += 1
        latest[key] = sequence
        touches.append((key, sequence))
        var dropped: Key?
        while latest.count > limit, head < touches.count {
            let oldest = touches[head]
            head += 1
            if latest[oldest.key] == oldest.sequence {
                latest[oldest.key] = nil
                dropped = oldest.key
            }
        }
        if touches.count - head > 2 * limit + 16 || head > limit + 16 {
            touches = touches[head...].filter { latest[$0.key] == $0.sequence }
            head = 0
        }
        return dropped
    }

    mutating func remove(_ key: Key) { latest[key] = nil }

    mutating func removeAll() {
        latest.removeAll()
        touches.removeAll()
        head = 0
    }
}

/// Broadcast channels by bundle ID.
final class ChannelRegistry: Sendable {
    /// Apple's limit per app and environment.
    static let limitPerApp = 10_000
    private let channels = Mutex<[String: [String: MockChannel]]>([:])
    private let subscribers = Mutex<[String: Set<DeviceToken>]>([:])

    func create(bundleID: String, storagePolicy: Int, now: Date) -> MockChannel? {
        channels.withLock { all in
            guard all[bundleID, default: [:]].count < Self.limitPerApp else { return nil }
            var bytes = [UInt8](repeating: 0, count: 16)
            for index in bytes.indices { bytes[index] = .random(in: 0...255) }
            let channel = MockChannel(id: Data(bytes).base64EncodedString(), bundleID: bundleID, storagePolicy: storagePolicy, createdAt: now)
            all[bundleID, default: [:]][channel.id] = channel
            return channel
        }
    }

    /// Puts back a channel as a database kept it.
    func restore(_ channel: MockChannel) {
        channels.withLock { $0[channel.bundleID, default: [:]][channel.id] = channel }
    }

    func channel(bundleID: String, id: String) -> MockChannel? { channels.withLock { $0[bundleID]?[id] } }

    func channel(id: String) -> MockChannel? {
        channels.withLock { all in all.values.lazy.compactMap { $0[id] }.first }
    }

    func delete(bundleID: String, id: String) -> Bool {
        let removed = channels.withLock { $0[bundleID]?.removeValue(forKey: id) != nil }
        if removed { _ = subscribers.withLock { $0.removeValue(forKey: id) } }
        return removed
    }

    func list(bundleID: String) -> [MockChannel] {
        channels.withLock { ($0[bundleID] ?? [:]).values.sorted { $0.createdAt < $1.createdAt } }
    }

    var all: [MockChannel] {
        channels.withLock { $0.values.flatMap(\.values).sorted { $0.createdAt < $1.createdAt } }
    }

    func subscribe(_ token: DeviceToken, to id: String) { subscribers.withLock { _ = $0[id, default: []].insert(token) } }
    func subscribers(of id: String) -> [DeviceToken] { subscribers.withLock { Array($0[id] ?? []).sorted { $0.hex < $1.hex } } }

    func removeAll() {
        channels.withLock { $0.removeAll() }
        subscribers.withLock { $0.removeAll() }
    }
}

/// The fault rules in force, with their running counts.
final class FaultTable: Sendable {
    struct Entry: Sendable {
        var id: Int
        var rule: FaultRule
        var seen = 0
        var applied = 0
    }

    private let state = Mutex<(entries: [Entry], nextID: Int)>(([], 1))
    /// How many rules there are, read without the lock on every request.
    private let ruleCount = Atomic<Int>(0)
    /// Counts every change (rules and their counts), so a store can tell when to save them.
    private let changes = Atomic<Int>(0)

    /// Changes so far.
    var version: Int { changes.load(ordering: .relaxed) }

    /// Puts back rules as a database kept them (ids and counts); new ids continue after theirs.
    func restore(_ restored: [Entry]) {
        state.withLock { state in
            state.entries.append(contentsOf: restored)
            state.nextID = max(state.nextID, (state.entries.map(\.id).max() ?? 0) + 1)
            ruleCount.store(state.entries.count, ordering: .relaxed)
        }
        changes.add(1, ordering: .relaxed)
    }

    @discardableResult
    func add(_ rule: FaultRule) -> Int {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.entries.append(Entry(id: id, rule: rule))
            ruleCount.store(state.entries.count, ordering: .relaxed)
            changes.add(1, ordering: .relaxed)
            return id
        }
    }

    func remove(id: Int) -> Bool {
        state.withLock { state in
            let before = state.entries.count
            state.entries.removeAll { $0.id == id }
            ruleCount.store(state.entries.count, ordering: .relaxed)
            changes.add(1, ordering: .relaxed)
            return state.entries.count != before
        }
    }

    func removeAll() {
        state.withLock { state in
            state.entries.removeAll()
            ruleCount.store(0, ordering: .relaxed)
        }
        changes.add(1, ordering: .relaxed)
    }

    var entries: [Entry] { state.withLock { $0.entries } }

    var isEmpty: Bool { ruleCount.load(ordering: .relaxed) == 0 }

    /// The first rule that matches this request, counted; rules that ran out are removed.
    func match(token: DeviceToken?, topic: String?, pushType: PushType?, path: FaultRule.PathKind) -> FaultRule? {
        state.withLock { state in
            for index in state.entries.indices {
                let rule = state.entries[index].rule
                guard rule.filters(token: token, topic: topic, pushType: pushType, path: path) else { continue }
                state.entries[index].seen += 1
                changes.add(1, ordering: .relaxed)
                if let every = rule.every, every > 1, state.entries[index].seen % every != 0 { continue }
                if let probability = rule.probability, Double.random(in: 0..<1) >= probability { continue }
                state.entries[index].applied += 1
                changes.add(1, ordering: .relaxed)
                if let times = rule.times, state.entries[index].applied >= times {
                    state.entries.remove(at: index)
                    ruleCount.store(state.entries.count, ordering: .relaxed)
                }
                return rule
            }
            return nil
        }
    }
}

/// Subscribers to the event stream; each has a bounded buffer (a slow reader loses the oldest
/// events, never the server's memory).
final class EventHub: Sendable {
    private let subscribers = Mutex<[Int: AsyncStream<MockEvent>.Continuation]>([:])
    private let nextID = Atomic<Int>(0)
    /// How many subscribers there are, read without the lock on every request.
    private let subscriberCount = Atomic<Int>(0)

    func subscribe(buffer: Int = 1000) -> AsyncStream<MockEvent> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<MockEvent>.makeStream(bufferingPolicy: .bufferingNewest(buffer))
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            if subscribers.withLock({ $0.removeValue(forKey: id) }) != nil {
                subscriberCount.subtract(1, ordering: .relaxed)
            }
        }
        subscribers.withLock { $0[id] = continuation }
        subscriberCount.add(1, ordering: .relaxed)
        return stream
    }

    var hasSubscribers: Bool { subscriberCount.load(ordering: .relaxed) > 0 }

    func publish(_ event: MockEvent) {
        let targets = subscribers.withLock { Array($0.values) }
        for continuation in targets { continuation.yield(event) }
    }

    func finishAll() {
        let targets = subscribers.withLock { state in
            defer { state.removeAll() }
            return Array(state.values)
        }
        subscriberCount.store(0, ordering: .relaxed)
        for continuation in targets { continuation.finish() }
    }
}
