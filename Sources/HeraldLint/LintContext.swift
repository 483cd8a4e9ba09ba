import HeraldProtocol

/// What the linter knows about the request besides the body: its header fields as sent (so an
/// invalid value can be reported as written), the endpoint, and where the body comes from.
///
/// Leave a header out when it is unknown. When ``isRequest`` is `true` (the mock server and the
/// client always know the whole request) a missing header is itself a finding, such as a missing
/// `apns-push-type`. A typed request converts with ``init(request:isSimulatorFile:)``.
public struct LintContext: Sendable, Hashable {
    /// The header fields, as sent; `:path` carries the device token.
    public var fields: APNsHeaderFields {
        didSet { values = HeaderValues(fields) }
    }

    /// The headers rules read, looked up once: a linter reads them for every payload.
    private var values: HeaderValues

    struct HeaderValues: Sendable, Hashable {
        var pushType, priority, topic, collapseID, expiration, apnsID, deviceToken: String?

        /// One pass over the fields (names are lowercase); the first of a repeated name counts,
        /// as ``APNsHeaderFields``' subscript gives it.
        init(_ fields: APNsHeaderFields) {
            // Each value moved out (`take()`), not copied.
            var known = APNsHeaderFields.KnownValues()
            fields.read(into: &known)
            pushType = known.pushType.take()
            priority = known.priority.take()
            topic = known.topic.take()
            collapseID = known.collapseID.take()
            expiration = known.expiration.take()
            apnsID = known.id.take()
            deviceToken = known.path?.suffix(afterASCIIPrefix: APNsPath.devicePrefix)
        }
    }
    /// A device push or a broadcast.
    public var endpoint: APNsEndpoint
    /// `true` when these are all the request's headers, so an absent one was not sent.
    public var isRequest: Bool
    /// `true` for an Xcode simulator file (`.apns`): its tooling keys (`Simulator Target Bundle`)
    /// belong there, so lint says nothing about them.
    public var isSimulatorFile: Bool

    /// A context from header fields as sent.
    public init(fields: APNsHeaderFields, endpoint: APNsEndpoint = .device, isRequest: Bool = false, isSimulatorFile: Bool = false) {
        self.fields = fields
        self.values = HeaderValues(fields)
        self.endpoint = endpoint
        self.isRequest = isRequest
        self.isSimulatorFile = isSimulatorFile
    }

    /// A context from header values as sent; every header is optional. The device token goes
    /// into `:path`.
    public init(
        pushType: String? = nil, priority: String? = nil, topic: String? = nil, collapseID: String? = nil,
        expiration: String? = nil, apnsID: String? = nil, deviceToken: String? = nil,
        endpoint: APNsEndpoint = .device, isRequest: Bool = false, isSimulatorFile: Bool = false
    ) {
        var fields = APNsHeaderFields()
        if let deviceToken { fields.append(name: ":path", value: APNsPath.devicePrefix + deviceToken) }
        for (name, value) in [
            (APNsHeader.pushType, pushType), (APNsHeader.id, apnsID), (APNsHeader.expiration, expiration),
            (APNsHeader.priority, priority), (APNsHeader.topic, topic), (APNsHeader.collapseID, collapseID),
        ] {
            if let value { fields.append(name: name, value: value) }
        }
        self.init(fields: fields, endpoint: endpoint, isRequest: isRequest, isSimulatorFile: isSimulatorFile)
    }

    /// The context of a complete, typed request.
    public init(request: APNsRequestHeaders, isSimulatorFile: Bool = false) {
        self.init(fields: request.fields, endpoint: request.endpoint, isRequest: true, isSimulatorFile: isSimulatorFile)
    }

    /// No headers known: lint the body alone.
    public static let bodyOnly = LintContext()

    /// `apns-push-type`, as sent.
    public var pushType: String? { values.pushType }
    /// `apns-priority`, as sent.
    public var priority: String? { values.priority }
    /// `apns-topic`, as sent.
    public var topic: String? { values.topic }
    /// `apns-collapse-id`, as sent.
    public var collapseID: String? { values.collapseID }
    /// `apns-expiration`, as sent.
    public var expiration: String? { values.expiration }
    /// `apns-id`, as sent.
    public var apnsID: String? { values.apnsID }
    /// The device token of a `/3/device/<token>` path, as sent.
    public var deviceToken: String? { values.deviceToken }

    /// The push type, if the header names a valid one.
    public var knownPushType: PushType? { pushType.flatMap(PushType.init(rawValue:)) }

    /// The priority in effect: the header's if valid, 10 if the header is known to be absent,
    /// `nil` if unknown or invalid.
    public var effectivePriority: PushPriority? {
        if let priority { return PushPriority(headerValue: priority) }
        return isRequest ? .default : nil
    }

    /// Whether any header is known.
    public var hasHeaders: Bool { isRequest || fields.count > 0 }

    /// Whether this is a Safari website push: its topic is a website push ID (`web.…`), the
    /// payload shape of Apple's "Notification Programming Guide for Websites".
    public var isWebsitePush: Bool { topic?.hasPrefix("web.") == true }
}
