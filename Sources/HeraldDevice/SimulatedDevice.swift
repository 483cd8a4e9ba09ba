import DequeModule
import HeraldJSON
import HeraldPayload
import HeraldProtocol

/// A device's notification state, driven by a sequence of deliveries: what Notification
/// Center shows, grouped by `thread-id`, with `apns-collapse-id` replacement, the app's badge,
/// background wakes under the system's budget, Live Activities, and expiry.
///
/// The simulation never reads a clock: every call carries the time (UNIX seconds), so a run is
/// deterministic and tests (and the mock APNs server) decide how time passes.
///
/// ```swift
/// var device = SimulatedDevice(renderer: NotificationRenderer(bundle: nil, preferredLanguages: ["en"]))
/// device.receive(SimulatedDevice.Delivery(payload: payload, headers: APNsRequestHeaders(collapseID: "score")), at: 1_000)
/// device.groups.first?.notifications.first?.content.body
/// ```
public struct SimulatedDevice: Sendable {
    /// Limits the system applies.
    public struct Configuration: Sendable, Hashable {
        /// Background wakes allowed per ``backgroundWindow`` (Apple's "Pushing background updates
        /// to your App": the system does not deliver more than two or three per hour).
        public var backgroundWakeLimit: Int
        /// The rolling window for ``backgroundWakeLimit``, in seconds.
        public var backgroundWindow: Double
        /// The most notifications Notification Center keeps; the oldest go first. Apple documents
        /// no number; a bound keeps a long-running simulation's memory flat.
        public var notificationLimit: Int
        /// The most ``SimulatedDevice/log`` entries kept (the newest; between trims the log may
        /// hold up to half as many again).
        public var logLimit: Int

        /// Creates a configuration.
        public init(backgroundWakeLimit: Int = 3, backgroundWindow: Double = 3600, notificationLimit: Int = 64, logLimit: Int = 256) {
            self.backgroundWakeLimit = max(0, backgroundWakeLimit)
            self.backgroundWindow = max(0, backgroundWindow)
            self.notificationLimit = max(1, notificationLimit)
            self.logLimit = max(1, logLimit)
        }
    }

    /// One push arriving at the device.
    public struct Delivery: Sendable, Hashable {
        /// An identifier for the notification: `apns-id` when given, otherwise assigned.
        public var id: String
        /// The payload.
        public var payload: Payload
        /// The headers.
        public var headers: APNsRequestHeaders
        /// When the provider sent it (UNIX seconds); `nil` means when it arrives.
        public var sentAt: Double?
        /// The Live Activity it addresses (its push token or channel); `nil` for the app's
        /// single activity.
        public var activityID: String?
        /// What the device shows, when the caller has rendered it already with the device's
        /// renderer (the mock server records it too); `nil` renders the payload on arrival.
        public var rendered: RenderedNotification?

        /// Creates a delivery. Without an `id`, the `apns-id` header is used, then a counter.
        public init(
            id: String? = nil, payload: Payload, headers: APNsRequestHeaders = APNsRequestHeaders(), sentAt: Double? = nil, activityID: String? = nil,
            rendered: RenderedNotification? = nil
        ) {
            self.id = id ?? headers.apnsID?.uuidString ?? ""
            self.payload = payload
            self.headers = headers
            self.sentAt = sentAt
            self.activityID = activityID
            self.rendered = rendered
        }
    }

    /// A notification in Notification Center.
    public struct DeliveredNotification: Sendable, Hashable {
        /// Its identifier.
        public var id: String
        /// What it shows.
        public var content: RenderedNotification
        /// When it arrived.
        public var receivedAt: Double
        /// Its `apns-collapse-id`.
        public var collapseID: String?
        /// How many earlier notifications it replaced through its collapse ID.
        public var replacements: Int

        /// Creates a delivered notification.
        public init(id: String, content: RenderedNotification, receivedAt: Double, collapseID: String?, replacements: Int) {
            self.id = id
            self.content = content
            self.receivedAt = receivedAt
            self.collapseID = collapseID
            self.replacements = replacements
        }
    }

    /// The notifications of one thread (or of the app when `thread-id` is absent), newest first.
    public struct Group: Sendable, Hashable {
        /// The `thread-id`, or `nil` for the app's default group.
        public var threadIdentifier: String?
        /// Newest first.
        public var notifications: [DeliveredNotification]
    }

    /// A Live Activity's current state.
    public struct Activity: Sendable, Hashable {
        /// Its identifier (``Delivery/activityID``, or `default`).
        public var id: String
        /// The latest update applied.
        public var latest: RenderedNotification.ActivityUpdate
        /// Whether an `end` event arrived.
        public var ended: Bool
        /// How many updates were applied.
        public var updates: Int
        /// `attributes-type` and `attributes` of the start (they never change after it).
        public var attributesType: String?
        /// The static attributes the start gave.
        public var attributes: JSONObject?
        /// The content states applied, oldest first: the newest ``Activity/historyLimit``,
        /// each with its `timestamp` (what a Lock Screen card showed over time).
        public var history: [RenderedNotification.ActivityUpdate] = []

        /// How many applied updates ``history`` keeps.
        public static let historyLimit = 20

        /// Whether an ended activity's `dismissal-date` has come at `time` (it is gone from the
        /// Lock Screen). Without one, the system keeps it for up to four hours after the end.
        public func isDismissed(at time: Double) -> Bool {
            guard ended else { return false }
            return (latest.dismissalDate ?? .infinity) <= time
        }
    }

    /// Why a delivery had no effect.
    public enum DropReason: String, Sendable, Hashable {
        /// Past its `apns-expiration`, or sent with expiration 0 while the device was offline.
        case expired
        /// A background push for an app the user force-quit.
        case appForceQuit = "app-force-quit"
        /// Replaced by a newer push while the device was offline (APNs stores one per app).
        case replacedWhileOffline = "replaced-while-offline"
        /// A pending background push replaced by a newer one (coalesced to the newest).
        case coalesced
        /// A Live Activity update older than the one already applied.
        case staleActivityUpdate = "stale-activity-update"
        /// A Live Activity push after the activity ended (the system ignores it).
        case activityEnded = "activity-ended"
        /// Nothing in it for the system to do.
        case nothingToDo = "nothing-to-do"
    }

    /// Something the device did.
    public enum Event: Sendable, Hashable {
        /// A notification was added to Notification Center.
        case displayed(id: String)
        /// A notification replaced an earlier one with the same collapse ID.
        case replaced(id: String, previousID: String)
        /// The app's badge changed.
        case badgeChanged(from: Int?, to: Int?)
        /// A sound played (`default` when the named file is missing).
        case soundPlayed(id: String, name: String)
        /// The app was woken in the background.
        case appWoken(id: String)
        /// A background push waits for the budget.
        case backgroundDeferred(id: String)
        /// The device was offline; APNs holds the push.
        case held(id: String)
        /// A Live Activity was started, updated or ended.
        case activityUpdated(id: String, activityID: String, event: String)
        /// A delivery was dropped.
        case dropped(id: String, reason: DropReason)
    }

    /// An event and when it happened.
    public struct LogEntry: Sendable, Hashable {
        /// UNIX seconds.
        public var time: Double
        /// What happened.
        public var event: Event
    }

    /// Renders payloads.
    public let renderer: NotificationRenderer
    /// Limits.
    public let configuration: Configuration
    /// Notification Center's groups, the most recently updated first, each newest first.
    public var groups: [Group] {
        storedGroups.reversed().map { Group(threadIdentifier: $0.threadIdentifier, notifications: $0.notifications.reversed()) }
    }
    /// The groups in the opposite order (least recently updated first, each oldest first), so
    /// that a new notification is appended rather than inserted at the front.
    private var storedGroups: [StoredGroup] = []

    /// A group as the device keeps it: its notifications oldest first in a deque, so that
    /// dropping the oldest of a full Notification Center moves nothing (an array's
    /// `removeFirst` moved the other 63 on every push past the limit).
    private struct StoredGroup: Sendable, Hashable {
        var threadIdentifier: String?
        var notifications: Deque<DeliveredNotification>
    }
    /// The app icon's badge (`nil`: no badge).
    public private(set) var badge: Int?
    /// Live Activities by identifier.
    public private(set) var activities: [String: Activity] = [:]
    /// When the app was woken in the background.
    public private(set) var backgroundWakes: [Double] = []
    /// The background push waiting for budget (only the newest is kept).
    public private(set) var pendingBackground: Delivery?
    /// Whether the device is reachable; offline pushes are held (one per app, as APNs stores).
    public private(set) var isOnline = true
    /// The push held while offline.
    public private(set) var held: Delivery?
    /// Whether the user force-quit the app (background pushes are then discarded).
    public var isAppForceQuit = false
    /// Everything that happened, in order.
    public private(set) var log: [LogEntry] = []
    private var counter = 0
    private var pendingSince: Double = 0

    /// Creates a device with nothing delivered.
    public init(renderer: NotificationRenderer, configuration: Configuration = Configuration()) {
        self.renderer = renderer
        self.configuration = configuration
    }

    /// All notifications for a summary: highest `relevance-score` first (absent counts as 0),
    /// then newest first.
    public var summary: [DeliveredNotification] {
        storedGroups.flatMap(\.notifications).sorted {
            let left = $0.content.relevanceScore ?? 0, right = $1.content.relevanceScore ?? 0
            return left != right ? left > right : $0.receivedAt > $1.receivedAt
        }
    }

    /// How many notifications Notification Center holds.
    public var notificationCount: Int { storedGroups.reduce(0) { $0 + $1.notifications.count } }

    /// Delivers a push at `time`, returning what the device did.
    @discardableResult
    public mutating func receive(_ delivery: Delivery, at time: Double) -> [Event] {
        var retired: [RenderedNotification.ActivityUpdate] = []
        return receive(delivery, at: time, retiring: &retired)
    }

    /// ``receive(_:at:)``, handing the Live Activity updates its history lets go of to `retired`
    /// rather than freeing them: a host that holds a lock around the device frees them after the
    /// lock (a content state is a tree of values, and freeing one was most of the time a Live
    /// Activity update held the lock).
    package mutating func receive(
        _ delivery: consuming Delivery, at time: Double, retiring retired: inout [RenderedNotification.ActivityUpdate]
    ) -> [Event] {
        // Consumed, not copied: a copy retained each of its headers' and payload's references.
        var delivery = delivery
        if delivery.id.isEmpty {
            counter += 1
            delivery.id = "delivery-\(counter)"
        }
        if !activities.isEmpty { dismissActivities(at: time) }
        var events = releaseBackground(upTo: time)
        if !isOnline {
            if case .immediately? = delivery.headers.expiration {
                events.append(.dropped(id: delivery.id, reason: .expired))
            } else {
                if let previous = held { events.append(.dropped(id: previous.id, reason: .replacedWhileOffline)) }
                held = delivery
                events.append(.held(id: delivery.id))
            }
            record(events, at: time)
            return events
        }
        events += apply(delivery, at: time, retiring: &retired)
        record(events, at: time)
        return events
    }

    /// Lets time pass: background pushes waiting for budget are delivered when it allows.
    @discardableResult
    public mutating func advance(to time: Double) -> [Event] {
        let events = releaseBackground(upTo: time)
        record(events, at: time)
        return events
    }

    /// Takes the device offline or back online; coming online delivers the held push (unless it
    /// expired meanwhile).
    @discardableResult
    public mutating func setOnline(_ online: Bool, at time: Double) -> [Event] {
        isOnline = online
        guard online, let delivery = held else { return [] }
        held = nil
        var retired: [RenderedNotification.ActivityUpdate] = []
        let events = releaseBackground(upTo: time) + apply(delivery, at: time, retiring: &retired)
        record(events, at: time)
        return events
    }

    /// Removes a notification (the user swiped it away).
    public mutating func remove(id: String) {
        for index in storedGroups.indices { storedGroups[index].notifications.removeAll { $0.id == id } }
        storedGroups.removeAll { $0.notifications.isEmpty }
    }

    /// Clears Notification Center.
    public mutating func removeAll() {
        storedGroups.removeAll()
    }

    /// Forgets what the device showed and did: Notification Center and the log. Its state
    /// stays (badge, Live Activities, the background budget, a held push), so later pushes
    /// behave as before. A host simulating many devices keeps the history of only some.
    public mutating func forgetHistory() {
        storedGroups.removeAll()
        log.removeAll()
    }

    // MARK: Delivery

    private mutating func apply(_ delivery: Delivery, at time: Double, retiring retired: inout [RenderedNotification.ActivityUpdate]) -> [Event] {
        if case .at(let seconds)? = delivery.headers.expiration, time > Double(seconds) {
            return [.dropped(id: delivery.id, reason: .expired)]
        }
        let content = delivery.rendered ?? renderer.render(delivery.payload, headers: delivery.headers)
        var events: [Event] = []
        switch content.presentation {
        case .liveActivity:
            events += applyActivity(content, delivery: delivery, retiring: &retired)
            if let sound = content.sound { events.append(.soundPlayed(id: delivery.id, name: sound.playsDefault ? "default" : sound.name)) }
        case .silent:
            if isAppForceQuit { return [.dropped(id: delivery.id, reason: .appForceQuit)] }
            if canWake(at: time) {
                recordWake(at: time)
                events.append(.appWoken(id: delivery.id))
            } else {
                if let previous = pendingBackground { events.append(.dropped(id: previous.id, reason: .coalesced)) }
                pendingBackground = delivery
                pendingSince = time
                events.append(.backgroundDeferred(id: delivery.id))
            }
        case .none:
            events.append(.dropped(id: delivery.id, reason: .nothingToDo))
        case .alert, .shownDespiteSilent, .soundBadge:
            if content.presentation != .soundBadge {
                events += display(content, delivery: delivery, at: time)
            }
            if let sound = content.sound {
                events.append(.soundPlayed(id: delivery.id, name: sound.playsDefault ? "default" : sound.name))
            }
            if content.wakesApp, !isAppForceQuit {
                if canWake(at: time) {
                    recordWake(at: time)
                    events.append(.appWoken(id: delivery.id))
                }
            }
        }
        if let newBadge = content.badge, content.presentation != .liveActivity {
            let value: Int? = newBadge == 0 ? nil : newBadge
            if value != badge {
                events.append(.badgeChanged(from: badge, to: value))
                badge = value
            }
        }
        return events
    }

    private mutating func display(_ content: RenderedNotification, delivery: Delivery, at time: Double) -> [Event] {
        var events: [Event] = []
        var replacements = 0
        if let collapseID = delivery.headers.collapseID?.value {
            for groupIndex in storedGroups.indices {
                if let index = storedGroups[groupIndex].notifications.firstIndex(where: { $0.collapseID == collapseID }) {
                    let previous = storedGroups[groupIndex].notifications.remove(at: index)
                    replacements = previous.replacements + 1
                    events.append(.replaced(id: delivery.id, previousID: previous.id))
                }
            }
            storedGroups.removeAll { $0.notifications.isEmpty }
        }
        let notification = DeliveredNotification(id: delivery.id, content: content, receivedAt: time, collapseID: delivery.headers.collapseID?.value, replacements: replacements)
        let thread = content.threadIdentifier
        if let index = storedGroups.lastIndex(where: { $0.threadIdentifier == thread }) {
            if index == storedGroups.count - 1 {
                storedGroups[index].notifications.append(notification)
            } else {
                var group = storedGroups.remove(at: index)
                group.notifications.append(notification)
                storedGroups.append(group)
            }
        } else {
            storedGroups.append(StoredGroup(threadIdentifier: thread, notifications: [notification]))
        }
        if events.isEmpty { events.append(.displayed(id: delivery.id)) }
        if notificationCount > configuration.notificationLimit { removeOldest() }
        return events
    }

    private mutating func applyActivity(
        _ content: RenderedNotification, delivery: Delivery, retiring retired: inout [RenderedNotification.ActivityUpdate]
    ) -> [Event] {
        guard let update = content.activity else { return [] }
        let id = delivery.activityID ?? "default"
        let ends = update.event == LiveActivityEvent.end.rawValue
        // Only what the checks need is read out: a copy of the activity would share its history
        // with the dictionary's, and the change below would then copy the whole history.
        if let (wasEnded, lastTimestamp) = activities[id].map({ ($0.ended, $0.latest.timestamp) }) {
            if wasEnded, update.event != LiveActivityEvent.start.rawValue {
                return [.dropped(id: delivery.id, reason: .activityEnded)]
            }
            if let new = update.timestamp, let old = lastTimestamp, new < old {
                return [.dropped(id: delivery.id, reason: .staleActivityUpdate)]
            }
            if update.event == LiveActivityEvent.start.rawValue {
                // Started again under the same identifier: a new activity.
                activities[id] = Activity(id: id, latest: update, ended: ends, updates: 0, attributesType: update.attributesType, attributes: update.attributes)
            }
            // The oldest update the history lets go of goes to `retired` (freed by the caller).
            if let oldest = activities[id].flatMap({ $0.history.count >= Activity.historyLimit ? $0.history.first : nil }) {
                retired.append(oldest)
            }
            activities[id]?.apply(update, ends: ends)
        } else {
            var activity = Activity(id: id, latest: update, ended: ends, updates: 1, attributesType: update.attributesType, attributes: update.attributes)
            activity.remember(update)
            activities[id] = activity
        }
        return [.activityUpdated(id: delivery.id, activityID: id, event: update.event ?? "update")]
    }

    /// Removes the ended activities whose `dismissal-date` has come by `time`; returns their
    /// identifiers.
    @discardableResult
    public mutating func dismissActivities(at time: Double) -> [String] {
        let gone = activities.values.filter { $0.isDismissed(at: time) }.map(\.id)
        for id in gone { activities[id] = nil }
        return gone.sorted()
    }

    // MARK: Background budget

    private func canWake(at time: Double) -> Bool {
        let recent = backgroundWakes.filter { $0 > time - configuration.backgroundWindow }
        return recent.count < configuration.backgroundWakeLimit
    }

    /// When the budget next allows a wake, at or after `time`: once the oldest of the last
    /// `limit` wakes leaves the window.
    private func nextWakeTime(after time: Double) -> Double? {
        guard configuration.backgroundWakeLimit > 0 else { return nil }
        let count = backgroundWakes.count
        guard count >= configuration.backgroundWakeLimit else { return time }
        return max(time, backgroundWakes[count - configuration.backgroundWakeLimit] + configuration.backgroundWindow)
    }

    private mutating func releaseBackground(upTo time: Double) -> [Event] {
        guard let pending = pendingBackground, let wakeTime = nextWakeTime(after: pendingSince), wakeTime <= time else { return [] }
        pendingBackground = nil
        if isAppForceQuit { return [.dropped(id: pending.id, reason: .appForceQuit)] }
        if case .at(let seconds)? = pending.headers.expiration, wakeTime > Double(seconds) {
            return [.dropped(id: pending.id, reason: .expired)]
        }
        recordWake(at: wakeTime)
        return [.appWoken(id: pending.id)]
    }

    private mutating func record(_ events: [Event], at time: Double) {
        for event in events { log.append(LogEntry(time: time, event: event)) }
        // Trimmed in batches so that each push moves the log only now and then.
        if log.count > configuration.logLimit + configuration.logLimit / 2 {
            log.removeFirst(log.count - configuration.logLimit)
        }
    }

    /// Drops the notification received first (Notification Center is full).
    private mutating func removeOldest() {
        // Each group holds its notifications oldest first: the oldest of all is a group's first.
        var oldest: (group: Int, time: Double)?
        for (groupIndex, group) in storedGroups.enumerated() {
            if let first = group.notifications.first, first.receivedAt < oldest?.time ?? .infinity {
                oldest = (groupIndex, first.receivedAt)
            }
        }
        guard let oldest else { return }
        storedGroups[oldest.group].notifications.removeFirst()
        if storedGroups[oldest.group].notifications.isEmpty { storedGroups.remove(at: oldest.group) }
    }

    /// Records a background wake, forgetting those outside the window.
    private mutating func recordWake(at time: Double) {
        backgroundWakes.removeAll { $0 <= time - configuration.backgroundWindow }
        backgroundWakes.append(time)
    }
}

extension SimulatedDevice.Activity {
    /// Keeps `update` in the history, the oldest leaving beyond the limit.
    /// An update applied: the latest, counted, remembered.
    mutating func apply(_ update: RenderedNotification.ActivityUpdate, ends: Bool) {
        latest = update
        updates += 1
        if ends { ended = true }
        remember(update)
    }

    mutating func remember(_ update: RenderedNotification.ActivityUpdate) {
        history.append(update)
        if history.count > Self.historyLimit { history.removeFirst(history.count - Self.historyLimit) }
    }
}
