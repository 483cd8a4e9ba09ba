import HeraldProtocol

/// What the linter knows about the request besides the body: the headers (as sent, so invalid
/// values can be reported) and the endpoint.
///
/// Leave a header `nil` when it is unknown. When ``isRequest`` is `true` (the mock server and the
/// client always know the whole request) a missing header is itself a finding, such as a missing
/// `apns-push-type`.
public struct LintContext: Sendable, Hashable {
    /// `apns-push-type`, as sent.
    public var pushType: String?
    /// `apns-priority`, as sent.
    public var priority: String?
    /// `apns-topic`, as sent.
    public var topic: String?
    /// `apns-collapse-id`, as sent.
    public var collapseID: String?
    /// `apns-expiration`, as sent.
    public var expiration: String?
    /// `apns-id`, as sent.
    public var apnsID: String?
    /// The device token of the path, hex as sent.
    public var deviceToken: String?
    /// A device push or a broadcast.
    public var endpoint: APNsEndpoint
    /// `true` when these are all the request's headers, so an absent one was not sent.
    public var isRequest: Bool

    /// A context; every header is optional.
    public init(
        pushType: String? = nil, priority: String? = nil, topic: String? = nil, collapseID: String? = nil,
        expiration: String? = nil, apnsID: String? = nil, deviceToken: String? = nil,
        endpoint: APNsEndpoint = .device, isRequest: Bool = false
    ) {
        self.pushType = pushType
        self.priority = priority
        self.topic = topic
        self.collapseID = collapseID
        self.expiration = expiration
        self.apnsID = apnsID
        self.deviceToken = deviceToken
        self.endpoint = endpoint
        self.isRequest = isRequest
    }

    /// No headers known: lint the body alone.
    public static let bodyOnly = LintContext()

    /// The push type, if the header names a valid one.
    public var knownPushType: PushType? { pushType.flatMap(PushType.init(rawValue:)) }

    /// The priority in effect: the header's if valid, 10 if the header is known to be absent,
    /// `nil` if unknown or invalid.
    public var effectivePriority: PushPriority? {
        if let priority { return PushPriority(headerValue: priority) }
        return isRequest ? .default : nil
    }

    /// Whether any header is known.
    public var hasHeaders: Bool {
        isRequest || pushType != nil || priority != nil || topic != nil || collapseID != nil || expiration != nil
            || apnsID != nil || deviceToken != nil
    }
}
