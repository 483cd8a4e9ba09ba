/// The value of the `apns-push-type` header: what kind of notification a request carries.
///
/// Apple's current list has eleven values (Apple's “Sending notification requests to APNs”). Each knows the topic suffix
/// it needs, its payload size limit, and the platforms that do not support it.
///
/// ```swift
/// PushType(rawValue: "voip")?.payloadLimit        // 5120
/// PushType.liveactivity.topic(forBundleID: "com.example.app")
/// // "com.example.app.push-type.liveactivity"
/// ```
public enum PushType: String, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    /// A notification that shows an alert, plays a sound or badges the icon.
    case alert
    /// A silent notification that wakes the app in the background (`content-available: 1`).
    case background
    /// An update to a watchOS complication.
    case complication
    /// An update to a control (WidgetKit controls).
    case controls
    /// A signal to a File Provider extension.
    case fileprovider
    /// A Live Activity start, update or end.
    case liveactivity
    /// A request to a Location Push Service extension.
    case location
    /// A Mobile Device Management "wake up" push.
    case mdm
    /// A Push to Talk notification.
    case pushtotalk
    /// A VoIP call notification (PushKit).
    case voip
    /// A WidgetKit reload.
    case widgets

    /// The header value.
    public var description: String { rawValue }

    /// What `apns-topic` must end with, after the bundle ID: `""` for `alert` and `background`
    /// (the bare bundle ID), `nil` for `mdm` (whose topic is the UID attribute of the MDM push
    /// certificate subject). Apple's DocC typos `h.complication` and
    /// `push-type.liveactivity` without the dot are corrected (a typo in Apple's documentation).
    public var topicSuffix: String? {
        switch self {
        case .alert, .background: ""
        case .complication: ".complication"
        case .controls: ".push-type.controls"
        case .fileprovider: ".pushkit.fileprovider"
        case .liveactivity: ".push-type.liveactivity"
        case .location: ".location-query"
        case .mdm: nil
        case .pushtotalk: ".voip-ptt"
        case .voip: ".voip"
        case .widgets: ".push-type.widgets"
        }
    }

    /// The topic for an app's bundle ID, or `nil` for `mdm`.
    public func topic(forBundleID bundleID: String) -> String? {
        topicSuffix.map { bundleID + $0 }
    }

    /// The push type a topic's suffix implies (`com.example.voip` → `voip`), or `nil` for a
    /// topic without a known suffix (a bare bundle ID: `alert`, `background` or `mdm`).
    public static func implied(byTopic topic: String) -> PushType? {
        var best: (type: PushType, length: Int)?
        for type in allCases {
            guard let suffix = type.topicSuffix, !suffix.isEmpty, topic.hasSuffix(suffix),
                  topic.utf8.count > suffix.utf8.count else { continue }
            if suffix.utf8.count > best?.length ?? 0 { best = (type, suffix.utf8.count) }
        }
        return best?.type
    }

    /// The largest accepted body for this push type when sent to a device token: 5120 bytes for
    /// `voip`, 4096 for everything else (Apple's “Generating a remote notification”).
    public var payloadLimit: Int {
        self == .voip ? PayloadLimit.voip : PayloadLimit.standard
    }

    /// Whether only token-based (JWT) connections may send this type: `location` (“Sending notification requests to APNs”) and
    /// `fileprovider` (the File Provider documentation says not to use provider certificates).
    public var requiresTokenAuthentication: Bool {
        self == .location || self == .fileprovider
    }

    /// The platforms that do not support this push type (Apple's “Sending notification requests to APNs”, "Not available on").
    public var unavailablePlatforms: Set<ApplePlatform> {
        switch self {
        case .alert, .background, .controls, .widgets: []
        case .complication: [.macOS, .tvOS, .iPadOS]
        case .fileprovider, .mdm, .voip: [.watchOS]
        case .liveactivity, .pushtotalk: [.watchOS, .macOS, .tvOS]
        case .location: [.macOS, .tvOS, .watchOS]
        }
    }

    /// The priorities Apple documents for this type, when it restricts them: `background` must be
    /// sent with priority 5 ("Using priority 10 is an error", “Sending notification requests to APNs”).
    public var requiredPriority: PushPriority? {
        self == .background ? .conservePower : nil
    }

    /// One line on what the type is for.
    public var summary: String {
        switch self {
        case .alert: "shows an alert, plays a sound or sets the badge"
        case .background: "wakes the app silently to fetch content"
        case .complication: "updates a watchOS complication"
        case .controls: "reloads a WidgetKit control"
        case .fileprovider: "signals a File Provider extension"
        case .liveactivity: "starts, updates or ends a Live Activity"
        case .location: "asks a Location Push Service extension for the location"
        case .mdm: "tells a managed device to contact its MDM server"
        case .pushtotalk: "delivers a Push to Talk update"
        case .voip: "announces a VoIP call through PushKit"
        case .widgets: "reloads a WidgetKit widget"
        }
    }
}

/// Apple platforms, as named where push types are "not available".
public enum ApplePlatform: String, CaseIterable, Sendable, Hashable {
    /// iOS.
    case iOS
    /// iPadOS.
    case iPadOS
    /// macOS.
    case macOS
    /// tvOS.
    case tvOS
    /// watchOS.
    case watchOS
    /// visionOS.
    case visionOS
}
