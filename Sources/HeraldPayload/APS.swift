import HeraldJSON

/// The contents of the `aps` dictionary: every key of Apple's payload tables, legacy and current, the
/// Live Activity keys, and any other key kept as given.
public struct APS: Sendable, Hashable {
    /// What to show: a string (the body) or a dictionary.
    public var alert: Alert?
    /// The icon badge; `0` removes it, absent leaves it unchanged.
    public var badge: Int?
    /// The sound to play.
    public var sound: Sound?
    /// The group this notification joins in Notification Center (`thread-id`).
    public var threadID: String?
    /// The registered category whose actions the notification offers.
    public var category: String?
    /// `1` makes this a background (silent) notification (`content-available`).
    public var contentAvailable: Int?
    /// `1` passes the notification through the app's service extension first (`mutable-content`).
    public var mutableContent: Int?
    /// The identifier of the window to bring forward (`target-content-id`).
    public var targetContentID: String?
    /// How urgently to interrupt (`interruption-level`).
    public var interruptionLevel: InterruptionLevel?
    /// 0 to 1 for notifications; any number for Live Activities (`relevance-score`).
    public var relevanceScore: Double?
    /// The Focus filter criteria (`filter-criteria`).
    public var filterCriteria: String?
    /// Live Activity: when this update was sent, in seconds since 1970 (`timestamp`).
    public var timestamp: Double?
    /// Live Activity: `start`, `update` or `end` (`event`).
    public var event: LiveActivityEvent?
    /// Live Activity: the dynamic content, matching the app's `ContentState` (`content-state`).
    public var contentState: JSONObject? {
        get { contentStateStorage?.object }
        set { contentStateStorage = newValue.map(DeferredJSONObject.value) }
    }
    /// ``contentState`` as held: a decoded payload keeps it in its document until it is read.
    package var contentStateStorage: DeferredJSONObject?
    /// Live Activity: when the activity becomes stale, in seconds since 1970 (`stale-date`).
    public var staleDate: Double?
    /// Live Activity: when an ended activity is removed, in seconds since 1970 (`dismissal-date`).
    public var dismissalDate: Double?
    /// Live Activity start: the `ActivityAttributes` type name (`attributes-type`).
    public var attributesType: String?
    /// Live Activity start: the static attributes (`attributes`).
    public var attributes: JSONObject?
    /// Live Activity start: `1` asks for an update token (`input-push-token`, iOS 18).
    public var inputPushToken: Int?
    /// Live Activity start: the broadcast channel to subscribe to (`input-push-channel`, iOS 18).
    public var inputPushChannel: String?
    /// Widgets and controls: `true` asks for a reload (`content-changed`).
    public var contentChanged: Bool?
    /// Safari website pushes: the values for the placeholders of the website's URL format
    /// string (`url-args`).
    public var urlArgs: [String]?
    /// Keys Apple does not define, kept in order. APNs ignores custom keys inside `aps`; put them
    /// beside it in ``Payload/custom``.
    public var otherKeys: JSONObject

    /// No key: what a decoded payload's box starts from, copied from one value made once: building
    /// `APS()` in place goes through every default argument and copies the whole struct twice.
    static let empty = APS()

    /// Creates an `aps` dictionary; every key is optional.
    public init(
        alert: Alert? = nil, badge: Int? = nil, sound: Sound? = nil, threadID: String? = nil,
        category: String? = nil, contentAvailable: Int? = nil, mutableContent: Int? = nil,
        targetContentID: String? = nil, interruptionLevel: InterruptionLevel? = nil,
        relevanceScore: Double? = nil, filterCriteria: String? = nil, timestamp: Double? = nil,
        event: LiveActivityEvent? = nil, contentState: JSONObject? = nil, staleDate: Double? = nil,
        dismissalDate: Double? = nil, attributesType: String? = nil, attributes: JSONObject? = nil,
        inputPushToken: Int? = nil, inputPushChannel: String? = nil, contentChanged: Bool? = nil, urlArgs: [String]? = nil,
        otherKeys: JSONObject = [:]
    ) {
        self.alert = alert
        self.badge = badge
        self.sound = sound
        self.threadID = threadID
        self.category = category
        self.contentAvailable = contentAvailable
        self.mutableContent = mutableContent
        self.targetContentID = targetContentID
        self.interruptionLevel = interruptionLevel
        self.relevanceScore = relevanceScore
        self.filterCriteria = filterCriteria
        self.timestamp = timestamp
        self.event = event
        self.contentStateStorage = contentState.map(DeferredJSONObject.value)
        self.staleDate = staleDate
        self.dismissalDate = dismissalDate
        self.attributesType = attributesType
        self.attributes = attributes
        self.inputPushToken = inputPushToken
        self.inputPushChannel = inputPushChannel
        self.contentChanged = contentChanged
        self.urlArgs = urlArgs
        self.otherKeys = otherKeys
    }
}
