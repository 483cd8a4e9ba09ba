import HeraldJSON
import HeraldLocalization
import HeraldPayload

/// What the device makes of a payload: the content of the notification a user sees, mirroring
/// Apple's `UNNotificationContent`, and how it is presented.
public struct RenderedNotification: Sendable, Hashable {
    /// How the device presents a notification.
    public enum Presentation: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// A visible alert (banner, lock screen, Notification Center).
        case alert
        /// No visible alert, only a sound and/or a badge.
        case soundBadge = "sound-badge"
        /// A background wake (`content-available: 1` alone); the user sees nothing.
        case silent
        /// Meant to be silent (`content-available: 1` or push type `background`) but carries an
        /// alert, sound or badge: Apple's documents warn it "might be throttled and not delivered to the
        /// app in the background, and instead of being silent is displayed to the user".
        case shownDespiteSilent = "shown-despite-silent"
        /// A Live Activity start, update or end.
        case liveActivity = "live-activity"
        /// Nothing for the system to do (no alert, sound, badge or `content-available`).
        case none

        /// The name used in JSON and text output.
        public var description: String { rawValue }
    }

    /// The sound the device plays.
    public struct PlayedSound: Sendable, Hashable {
        /// The name in the payload (`default`, `chime.aiff`).
        public var name: String
        /// A critical alert sound (plays through mute and Do Not Disturb).
        public var critical: Bool
        /// The critical alert's volume, 0 to 1.
        public var volume: Double?
        /// Whether the system's default sound plays instead of the named file: `default` was
        /// asked for, or the file is not in the app bundle (Apple's “Local and Remote Notification Programming Guide”, Table 5-1).
        public var playsDefault: Bool

        /// Creates a sound.
        public init(name: String, critical: Bool = false, volume: Double? = nil, playsDefault: Bool = false) {
            self.name = name
            self.critical = critical
            self.volume = volume
            self.playsDefault = playsDefault
        }
    }

    /// A Live Activity update as ActivityKit applies it.
    public struct ActivityUpdate: Sendable, Hashable {
        /// `event`: `start`, `update` or `end`.
        public var event: String?
        /// `timestamp`: when the update was sent (epoch seconds); older updates are ignored.
        public var timestamp: Double?
        /// `content-state`: the activity's new dynamic content.
        public var contentState: JSONObject? {
            get { contentStateStorage?.object }
            set { contentStateStorage = newValue.map(DeferredJSONObject.value) }
        }
        /// ``contentState`` as held: a rendered payload's stays in its document until read (a
        /// simulated device keeps the last ``SimulatedDevice/Activity/historyLimit`` of them).
        package var contentStateStorage: DeferredJSONObject?
        /// `stale-date`: when the content becomes stale.
        public var staleDate: Double?
        /// `dismissal-date`: when an ended activity leaves the lock screen.
        public var dismissalDate: Double?
        /// `attributes-type`: the `ActivityAttributes` type, on start.
        public var attributesType: String?
        /// `attributes`: the static attributes, on start.
        public var attributes: JSONObject?
    }

    /// How the device presents it.
    public var presentation: Presentation {
        get { storage.fields.presentation }
        set { fields.presentation = newValue }
    }
    /// The localization used for the text (`fr`), or the preferred language when no table
    /// applies.
    public var language: String {
        get { storage.fields.language }
        set { fields.language = newValue }
    }
    /// The app's display name, when the bundle provides it.
    public var appName: String? {
        get { storage.fields.appName }
        set { fields.appName = newValue }
    }
    /// `title` (localized).
    public var title: String? {
        get { storage.fields.title }
        set { fields.title = newValue }
    }
    /// `subtitle` (localized).
    public var subtitle: String? {
        get { storage.fields.subtitle }
        set { fields.subtitle = newValue }
    }
    /// `body` (localized); a string `alert` is the body.
    public var body: String? {
        get { storage.fields.body }
        set { fields.body = newValue }
    }
    /// The action button's title from `action-loc-key` (legacy); `nil` when absent or `null`
    /// (`null` means an alert with only an OK button).
    public var actionTitle: String? {
        get { storage.fields.actionTitle }
        set { fields.actionTitle = newValue }
    }
    /// Whether `action-loc-key` was `null`, removing the action button.
    public var hidesActionButton: Bool {
        get { storage.fields.hidesActionButton }
        set { fields.hidesActionButton = newValue }
    }
    /// `launch-image`.
    public var launchImage: String? {
        get { storage.fields.launchImage }
        set { fields.launchImage = newValue }
    }
    /// The sound, if any.
    public var sound: PlayedSound? {
        get { storage.fields.sound }
        set { fields.sound = newValue }
    }
    /// `badge`: the new badge number (`0` clears it); `nil` leaves the badge unchanged.
    public var badge: Int? {
        get { storage.fields.badge }
        set { fields.badge = newValue }
    }
    /// `thread-id`.
    public var threadIdentifier: String? {
        get { storage.fields.threadIdentifier }
        set { fields.threadIdentifier = newValue }
    }
    /// `category`.
    public var categoryIdentifier: String? {
        get { storage.fields.categoryIdentifier }
        set { fields.categoryIdentifier = newValue }
    }
    /// `target-content-id`.
    public var targetContentIdentifier: String? {
        get { storage.fields.targetContentIdentifier }
        set { fields.targetContentIdentifier = newValue }
    }
    /// `interruption-level` as given (the device uses `active` when absent).
    public var interruptionLevel: String? {
        get { storage.fields.interruptionLevel }
        set { fields.interruptionLevel = newValue }
    }
    /// `relevance-score`.
    public var relevanceScore: Double? {
        get { storage.fields.relevanceScore }
        set { fields.relevanceScore = newValue }
    }
    /// `filter-criteria`.
    public var filterCriteria: String? {
        get { storage.fields.filterCriteria }
        set { fields.filterCriteria = newValue }
    }
    /// `summary-arg` (legacy).
    public var summaryArgument: String? {
        get { storage.fields.summaryArgument }
        set { fields.summaryArgument = newValue }
    }
    /// `summary-arg-count` (legacy).
    public var summaryArgumentCount: Int? {
        get { storage.fields.summaryArgumentCount }
        set { fields.summaryArgumentCount = newValue }
    }
    /// `mutable-content: 1`: a Notification Service Extension runs first and may change all of
    /// this.
    public var serviceExtensionWillRun: Bool {
        get { storage.fields.serviceExtensionWillRun }
        set { fields.serviceExtensionWillRun = newValue }
    }
    /// `content-available: 1`: the app is woken in the background (if the budget allows).
    public var wakesApp: Bool {
        get { storage.fields.wakesApp }
        set { fields.wakesApp = newValue }
    }
    /// The Live Activity update, for ``Presentation/liveActivity``.
    public var activity: ActivityUpdate? {
        get { storage.fields.activity }
        set { fields.activity = newValue }
    }
    /// The whole payload, as `userInfo` holds it.
    public var userInfo: JSONObject {
        get { storage.fields.userInfo }
        set { fields.userInfo = newValue }
    }
    /// What Herald noticed while rendering: lookups, formatting, sounds, classification.
    public var diagnostics: [LocalizationDiagnostic] {
        get { storage.fields.diagnostics }
        set { fields.diagnostics = newValue }
    }

    /// The stored values: the notification's fields live in one shared, immutable-once-shared
    /// object, so a copy (a simulated device keeps one in Notification Center, the mock passes
    /// one from its renderer to the device) is one retain, not one per string field.
    private var storage: Storage

    struct Fields: Sendable, Hashable {
        var presentation: Presentation
        var language: String
        var appName: String?
        var title: String?
        var subtitle: String?
        var body: String?
        var actionTitle: String?
        var hidesActionButton: Bool
        var launchImage: String?
        var sound: PlayedSound?
        var badge: Int?
        var threadIdentifier: String?
        var categoryIdentifier: String?
        var targetContentIdentifier: String?
        var interruptionLevel: String?
        var relevanceScore: Double?
        var filterCriteria: String?
        var summaryArgument: String?
        var summaryArgumentCount: Int?
        var serviceExtensionWillRun: Bool
        var wakesApp: Bool
        var activity: ActivityUpdate?
        var userInfo: JSONObject
        var diagnostics: [LocalizationDiagnostic]
    }

    /// Copied on write: `fields` is changed only while `storage` is uniquely referenced.
    private final class Storage: @unchecked Sendable {
        var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    /// The fields, for a change: the storage is copied first when it is shared.
    private var fields: Fields {
        get { storage.fields }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
            yield &storage.fields
        }
    }

    init(
        presentation: Presentation, language: String, appName: String?, title: String?, subtitle: String?, body: String?,
        actionTitle: String?, hidesActionButton: Bool, launchImage: String?, sound: PlayedSound?, badge: Int?, threadIdentifier: String?,
        categoryIdentifier: String?, targetContentIdentifier: String?, interruptionLevel: String?, relevanceScore: Double?,
        filterCriteria: String?, summaryArgument: String?, summaryArgumentCount: Int?, serviceExtensionWillRun: Bool, wakesApp: Bool,
        activity: ActivityUpdate?, userInfo: JSONObject, diagnostics: [LocalizationDiagnostic]
    ) {
        storage = Storage(
            Fields(
                presentation: presentation, language: language, appName: appName, title: title, subtitle: subtitle, body: body,
                actionTitle: actionTitle, hidesActionButton: hidesActionButton, launchImage: launchImage, sound: sound, badge: badge,
                threadIdentifier: threadIdentifier, categoryIdentifier: categoryIdentifier,
                targetContentIdentifier: targetContentIdentifier, interruptionLevel: interruptionLevel, relevanceScore: relevanceScore,
                filterCriteria: filterCriteria, summaryArgument: summaryArgument, summaryArgumentCount: summaryArgumentCount,
                serviceExtensionWillRun: serviceExtensionWillRun, wakesApp: wakesApp, activity: activity, userInfo: userInfo,
                diagnostics: diagnostics
            ))
    }

    public static func == (lhs: RenderedNotification, rhs: RenderedNotification) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.fields == rhs.storage.fields
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.fields)
    }
}

extension RenderedNotification: CustomReflectable {
    /// The fields, as `print` and `dump` show a struct's (not the storage they share).
    public var customMirror: Mirror {
        Mirror(self, children: Mirror(reflecting: storage.fields).children, displayStyle: .struct)
    }

    /// The interruption level in effect: the payload's, or `active`.
    public var effectiveInterruptionLevel: String { interruptionLevel ?? InterruptionLevel.active.rawValue }

    /// Whether any text is visible.
    public var hasVisibleText: Bool {
        [title, subtitle, body].contains { !($0 ?? "").isEmpty }
    }

    /// The most serious diagnostic's severity, if any.
    public var worstSeverity: LocalizationDiagnostic.Severity? {
        diagnostics.map(\.severity).max()
    }
}
