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
    public var presentation: Presentation
    /// The localization used for the text (`fr`), or the preferred language when no table
    /// applies.
    public var language: String
    /// The app's display name, when the bundle provides it.
    public var appName: String?
    /// `title` (localized).
    public var title: String?
    /// `subtitle` (localized).
    public var subtitle: String?
    /// `body` (localized); a string `alert` is the body.
    public var body: String?
    /// The action button's title from `action-loc-key` (legacy); `nil` when absent or `null`
    /// (`null` means an alert with only an OK button).
    public var actionTitle: String?
    /// Whether `action-loc-key` was `null`, removing the action button.
    public var hidesActionButton: Bool
    /// `launch-image`.
    public var launchImage: String?
    /// The sound, if any.
    public var sound: PlayedSound?
    /// `badge`: the new badge number (`0` clears it); `nil` leaves the badge unchanged.
    public var badge: Int?
    /// `thread-id`.
    public var threadIdentifier: String?
    /// `category`.
    public var categoryIdentifier: String?
    /// `target-content-id`.
    public var targetContentIdentifier: String?
    /// `interruption-level` as given (the device uses `active` when absent).
    public var interruptionLevel: String?
    /// `relevance-score`.
    public var relevanceScore: Double?
    /// `filter-criteria`.
    public var filterCriteria: String?
    /// `summary-arg` (legacy).
    public var summaryArgument: String?
    /// `summary-arg-count` (legacy).
    public var summaryArgumentCount: Int?
    /// `mutable-content: 1`: a Notification Service Extension runs first and may change all of
    /// this.
    public var serviceExtensionWillRun: Bool
    /// `content-available: 1`: the app is woken in the background (if the budget allows).
    public var wakesApp: Bool
    /// The Live Activity update, for ``Presentation/liveActivity``.
    public var activity: ActivityUpdate?
    /// The whole payload, as `userInfo` holds it.
    public var userInfo: JSONObject
    /// What Herald noticed while rendering: lookups, formatting, sounds, classification.
    public var diagnostics: [LocalizationDiagnostic]

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
