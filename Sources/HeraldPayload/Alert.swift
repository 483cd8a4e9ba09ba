import HeraldJSON

/// The `alert` value: a plain string (shown as the body) or a dictionary.
///
/// The older guide recommends the string form when the alert is only a body ("Don't specify a
/// dictionary as the value of alert if the dictionary only has the body property"); the current
/// guide recommends a dictionary.
public enum Alert: Sendable, Hashable, ExpressibleByStringLiteral {
    /// `"alert": "text"`: the text is the body.
    case body(String)
    /// `"alert": { … }`.
    case content(AlertContent)

    /// A string alert.
    public init(stringLiteral value: String) {
        self = .body(value)
    }

    /// The dictionary form of this alert (a string alert becomes `{"body": …}`).
    public var asContent: AlertContent {
        switch self {
        case .body(let text): AlertContent(body: .text(text))
        case .content(let content): content
        }
    }
}

/// The `alert` dictionary (the "Local and Remote Notification Programming Guide", Table 5-2, "Generating a remote notification", Table 2, and Live Activity alerts of Apple's “Starting and updating Live Activities with ActivityKit push notifications”).
public struct AlertContent: Sendable, Hashable {
    /// `title`: a short title.
    public var title: AlertText?
    /// `subtitle`: a secondary line.
    public var subtitle: AlertText?
    /// `body`: the message.
    public var body: AlertText?
    /// `launch-image`: a launch image file in the app bundle.
    public var launchImage: String?
    /// `title-loc-key`: a key in the app's `Localizable.strings` for the title (string or null).
    public var titleLocKey: Nullable<String>?
    /// `title-loc-args`: arguments for the title's format specifiers (array of strings or null).
    public var titleLocArgs: Nullable<[String]>?
    /// `subtitle-loc-key`: a key for the subtitle.
    public var subtitleLocKey: String?
    /// `subtitle-loc-args`: arguments for the subtitle's format specifiers.
    public var subtitleLocArgs: [String]?
    /// `loc-key`: a key for the body.
    public var locKey: String?
    /// `loc-args`: arguments for the body's format specifiers (`%@`, `%n$@`).
    public var locArgs: [String]?
    /// `action-loc-key` (legacy): a key for the action button's title; `null` means no action
    /// button, only an OK button.
    public var actionLocKey: Nullable<String>?
    /// `action` (legacy).
    public var action: String?
    /// `summary-arg` (legacy): the notification summary's argument.
    public var summaryArg: String?
    /// `summary-arg-count` (legacy): how many items this notification adds to the summary.
    public var summaryArgCount: Int?
    /// `sound` inside the alert: where Apple's Live Activity samples put it.
    public var sound: Sound?
    /// Keys Apple does not define, kept in order.
    public var otherKeys: JSONObject

    /// No key: what the decoder fills in place (see ``APS/empty``).
    static let empty = AlertContent()

    /// Creates an alert dictionary.
    public init(
        title: AlertText? = nil, subtitle: AlertText? = nil, body: AlertText? = nil, launchImage: String? = nil,
        titleLocKey: Nullable<String>? = nil, titleLocArgs: Nullable<[String]>? = nil,
        subtitleLocKey: String? = nil, subtitleLocArgs: [String]? = nil, locKey: String? = nil,
        locArgs: [String]? = nil, actionLocKey: Nullable<String>? = nil, action: String? = nil,
        summaryArg: String? = nil, summaryArgCount: Int? = nil, sound: Sound? = nil, otherKeys: JSONObject = [:]
    ) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.launchImage = launchImage
        self.titleLocKey = titleLocKey
        self.titleLocArgs = titleLocArgs
        self.subtitleLocKey = subtitleLocKey
        self.subtitleLocArgs = subtitleLocArgs
        self.locKey = locKey
        self.locArgs = locArgs
        self.actionLocKey = actionLocKey
        self.action = action
        self.summaryArg = summaryArg
        self.summaryArgCount = summaryArgCount
        self.sound = sound
        self.otherKeys = otherKeys
    }
}

/// A `title`, `subtitle` or `body` value: plain text, or (in Live Activity alerts) a localized
/// `{"loc-key": …, "loc-args": […]}` dictionary.
public enum AlertText: Sendable, Hashable, ExpressibleByStringLiteral {
    /// Text shown as is.
    case text(String)
    /// A key looked up in the app's strings tables, formatted with the arguments (`loc-args`;
    /// `nil` when the dictionary has none).
    case localized(key: String, arguments: [String]? = nil)

    /// Plain text.
    public init(stringLiteral value: String) {
        self = .text(value)
    }

    /// The plain text, if this is not localized.
    public var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }
}

/// A value that may be JSON `null`, for the keys Apple's tables document as "string or null" or
/// "array of strings or null". An absent key is `nil`; a present `null` is ``null``.
public enum Nullable<Wrapped: Sendable & Hashable>: Sendable, Hashable {
    /// JSON `null`.
    case null
    /// A value.
    case value(Wrapped)

    /// The value, or `nil` for `null`.
    public var wrapped: Wrapped? {
        if case .value(let value) = self { return value }
        return nil
    }
}

extension Nullable: ExpressibleByUnicodeScalarLiteral where Wrapped == String {
    /// A string value.
    public init(unicodeScalarLiteral value: String) { self = .value(value) }
}

extension Nullable: ExpressibleByExtendedGraphemeClusterLiteral where Wrapped == String {
    /// A string value.
    public init(extendedGraphemeClusterLiteral value: String) { self = .value(value) }
}

extension Nullable: ExpressibleByStringLiteral where Wrapped == String {
    /// A string value.
    public init(stringLiteral value: String) { self = .value(value) }
}

extension Nullable: ExpressibleByNilLiteral {
    /// `null`. (Write `.null` where an `Optional<Nullable>` could mean "absent".)
    public init(nilLiteral: ()) { self = .null }
}
