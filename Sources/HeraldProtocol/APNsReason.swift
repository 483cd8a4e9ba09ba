/// The `reason` of an APNs error response or GOAWAY frame, such as `BadDeviceToken`.
///
/// Every reason Apple documents is a static member with its HTTP status, meaning and retry
/// guidance (Apple's “Handling notification responses from APNs”; Apple's “Sending broadcast push notification requests to APNs”). A reason Herald does not know is kept as received:
/// ``isKnown`` is `false` and ``status`` is `nil`, but ``rawValue`` is never lost.
///
/// ```swift
/// let reason = APNsReason(rawValue: "Unregistered")
/// reason.status          // 410
/// reason.retry           // .doNotRetry
/// ```
public struct APNsReason: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The reason string as it appears on the wire.
    public let rawValue: String

    /// Wraps any reason string, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The reason string.
    public var description: String { rawValue }

    /// What Herald knows about this reason, or `nil` for an unknown one.
    public var info: Info? { Self.catalog[rawValue] }

    /// `true` for a reason in Apple's tables (or observed on the wire, see ``Info/isDocumented``).
    public var isKnown: Bool { info != nil }

    /// The HTTP status APNs sends with this reason.
    public var status: Int? { info?.status }

    /// What a provider should do after this error.
    public var retry: RetryGuidance? { info?.retry }

    /// The status and the reason, as users read them in messages: `400 BadPriority`.
    public var statusAndReason: String { "\(status.map(String.init) ?? "?") \(rawValue)" }

    /// What Herald knows about one reason.
    public struct Info: Sendable, Hashable {
        /// The HTTP status.
        public let status: Int
        /// Apple's meaning, in a sentence.
        public let meaning: String
        /// The requests that can return it.
        public let endpoints: Set<APNsEndpoint>
        /// Apple's retry guidance for it.
        public let retry: RetryGuidance
        /// `false` for a reason seen on the wire but absent from Apple's tables.
        public let isDocumented: Bool
    }

    /// Apple's guidance on retrying after an error (“Handling notification responses from APNs”).
    public enum RetryGuidance: String, Sendable, Hashable {
        /// Never retry: the token or request cannot succeed (`BadDeviceToken`, `Unregistered`, …).
        case doNotRetry
        /// Retry once the request is corrected (most 400s).
        case retryAfterFixingRequest
        /// Make a new provider token (JWT), then retry.
        case refreshProviderTokenAndRetry
        /// Open a new connection, then retry there.
        case retryOnNewConnection
        /// Retry after a delay (429 `TooManyRequests`).
        case retryAfterDelay
        /// Retry with exponential backoff (5xx; Apple suggests waiting about 15 minutes).
        case retryWithBackoff
    }

    /// Every known reason with its facts. Each reason string appears in source once, in the
    /// static members below; this table refers to them.
    public static let all: [APNsReason] = catalogEntries.map(\.0)

    private static let catalog: [String: Info] = Dictionary(
        catalogEntries.map { ($0.0.rawValue, $0.1) }, uniquingKeysWith: { first, _ in first })

    private static func entry(
        _ reason: APNsReason, _ status: Int, _ meaning: String, _ endpoints: Set<APNsEndpoint> = [.device, .broadcast],
        retry: RetryGuidance? = nil, documented: Bool = true
    ) -> (APNsReason, Info) {
        let guidance = retry ?? (status >= 500 ? .retryWithBackoff : .retryAfterFixingRequest)
        return (reason, Info(status: status, meaning: meaning, endpoints: endpoints, retry: guidance, isDocumented: documented))
    }

    // "Handling notification responses from APNs" (device pushes, 32 reasons) and "Handling error
    // responses from Apple Push Notification service" (broadcast and channel reasons).
    private static let catalogEntries: [(APNsReason, Info)] = [
        entry(.badCollapseID, 400, "The collapse identifier exceeds the maximum allowed size (64 bytes).", [.device]),
        entry(.badDeviceToken, 400, "The device token is malformed, or belongs to the other environment.", [.device], retry: .doNotRetry),
        entry(.badExpirationDate, 400, "The apns-expiration value is invalid (or nonzero on a no-storage channel)."),
        entry(.badMessageID, 400, "The apns-id value is not a canonical UUID."),
        entry(.badPriority, 400, "The apns-priority value is not 10, 5 or 1."),
        entry(.badTopic, 400, "The apns-topic value is invalid.", [.device]),
        entry(.deviceTokenNotForTopic, 400, "The device token does not belong to the topic.", [.device], retry: .doNotRetry),
        entry(.duplicateHeaders, 400, "One or more headers are repeated.", [.device]),
        entry(.idleTimeout, 400, "The connection was idle too long (usually a GOAWAY reason).", [.device], retry: .retryOnNewConnection),
        entry(.invalidPushType, 400, "The apns-push-type value is not valid."),
        entry(.missingDeviceToken, 400, "The request path has no device token.", [.device]),
        entry(.missingTopic, 400, "The apns-topic header is required but absent.", [.device]),
        entry(.payloadEmpty, 400, "The request body is empty."),
        entry(.topicDisallowed, 400, "Pushing to this topic is not allowed (for broadcasts: a push-type suffix on the bundle ID)."),
        entry(.badCertificate, 403, "The certificate is invalid."),
        entry(.badCertificateEnvironment, 403, "The certificate is for the other environment."),
        entry(.expiredProviderToken, 403, "The provider token's iat is more than one hour old.", retry: .refreshProviderTokenAndRetry),
        entry(.forbidden, 403, "The action is not allowed (for example, a revoked key).", [.device], retry: .doNotRetry),
        entry(.invalidProviderToken, 403, "The provider token is invalid or its signature does not verify."),
        entry(.missingProviderToken, 403, "There is no client certificate and no authorization header."),
        entry(.unrelatedKeyIDInToken, 403, "The key ID is not related to the key of this connection's first push; open a new connection.", [.device], retry: .retryOnNewConnection),
        entry(.badEnvironmentKeyIDInToken, 403, "The key is restricted to the other environment.", [.device], retry: .retryOnNewConnection),
        entry(.badPath, 404, "The request path is invalid."),
        entry(.methodNotAllowed, 405, "The method is not POST (or not allowed for this path)."),
        entry(.expiredToken, 410, "The device token has expired.", [.device], retry: .doNotRetry),
        entry(.unregistered, 410, "The device token is no longer active for the topic.", [.device], retry: .doNotRetry),
        entry(.payloadTooLarge, 413, "The body exceeds the size limit (4096 bytes; 5120 for VoIP and broadcasts).", retry: .doNotRetry),
        entry(.tooManyProviderTokenUpdates, 429, "The provider token changed more than once in 20 minutes on this connection.", retry: .retryOnNewConnection),
        entry(.tooManyRequests, 429, "Too many requests to the same device token.", retry: .retryAfterDelay),
        entry(.internalServerError, 500, "An internal server error occurred."),
        entry(.serviceUnavailable, 503, "The service is unavailable."),
        entry(.shutdown, 503, "The server is shutting down (usually a GOAWAY reason).", retry: .retryOnNewConnection),
        // Broadcast and channel management only (“Handling error responses from Apple Push Notification service”).
        entry(.featureNotEnabled, 400, "The broadcast capability is not enabled for the topic.", [.broadcast]),
        entry(.missingChannelID, 400, "The apns-channel-id header is absent.", [.broadcast]),
        entry(.badChannelID, 400, "The channel ID is badly encoded or too long.", [.broadcast]),
        entry(.channelNotRegistered, 400, "The channel does not exist.", [.broadcast], retry: .doNotRetry),
        entry(.badRequestParams, 400, "The JSON body has an attribute APNs does not recognise.", [.broadcast]),
        entry(.badRequestPayload, 400, "The body cannot be parsed.", [.broadcast]),
        entry(.missingPushType, 400, "The apns-push-type header is absent.", [.broadcast]),
        entry(.cannotCreateChannelConfig, 400, "The app has reached the limit of 10,000 channels in this environment.", [.broadcast]),
        entry(.topicMismatch, 403, "The bundle IDs of the token or certificate do not include the path's topic.", [.broadcast]),
        // Seen on the wire though Apple documents BadEnvironmentKeyIdInToken (Apple's “Handling notification responses from APNs”).
        entry(.badEnvironmentKeyInToken, 403, "The key is restricted to the other environment (undocumented spelling).", [.device], retry: .retryOnNewConnection, documented: false),
    ]
}

extension APNsReason {
    /// 400: collapse ID longer than 64 bytes.
    public static let badCollapseID = APNsReason(rawValue: "BadCollapseId")
    /// 400: malformed token, or a token from the other environment.
    public static let badDeviceToken = APNsReason(rawValue: "BadDeviceToken")
    /// 400: bad `apns-expiration`.
    public static let badExpirationDate = APNsReason(rawValue: "BadExpirationDate")
    /// 400: bad `apns-id`.
    public static let badMessageID = APNsReason(rawValue: "BadMessageId")
    /// 400: bad `apns-priority`.
    public static let badPriority = APNsReason(rawValue: "BadPriority")
    /// 400: bad `apns-topic`.
    public static let badTopic = APNsReason(rawValue: "BadTopic")
    /// 400: the token does not belong to the topic.
    public static let deviceTokenNotForTopic = APNsReason(rawValue: "DeviceTokenNotForTopic")
    /// 400: a header was repeated.
    public static let duplicateHeaders = APNsReason(rawValue: "DuplicateHeaders")
    /// 400: idle timeout (GOAWAY).
    public static let idleTimeout = APNsReason(rawValue: "IdleTimeout")
    /// 400: bad `apns-push-type`.
    public static let invalidPushType = APNsReason(rawValue: "InvalidPushType")
    /// 400: no token in the path.
    public static let missingDeviceToken = APNsReason(rawValue: "MissingDeviceToken")
    /// 400: topic required but absent.
    public static let missingTopic = APNsReason(rawValue: "MissingTopic")
    /// 400: empty body.
    public static let payloadEmpty = APNsReason(rawValue: "PayloadEmpty")
    /// 400: pushing to this topic is not allowed.
    public static let topicDisallowed = APNsReason(rawValue: "TopicDisallowed")
    /// 403: invalid certificate.
    public static let badCertificate = APNsReason(rawValue: "BadCertificate")
    /// 403: certificate for the wrong environment.
    public static let badCertificateEnvironment = APNsReason(rawValue: "BadCertificateEnvironment")
    /// 403: the JWT is more than an hour old.
    public static let expiredProviderToken = APNsReason(rawValue: "ExpiredProviderToken")
    /// 403: action not allowed.
    public static let forbidden = APNsReason(rawValue: "Forbidden")
    /// 403: the JWT is invalid.
    public static let invalidProviderToken = APNsReason(rawValue: "InvalidProviderToken")
    /// 403: no certificate and no `authorization` header.
    public static let missingProviderToken = APNsReason(rawValue: "MissingProviderToken")
    /// 403: key unrelated to the connection's first key.
    public static let unrelatedKeyIDInToken = APNsReason(rawValue: "UnrelatedKeyIdInToken")
    /// 403: key restricted to the other environment (documented spelling).
    public static let badEnvironmentKeyIDInToken = APNsReason(rawValue: "BadEnvironmentKeyIdInToken")
    /// 403: key restricted to the other environment (spelling observed on the wire).
    public static let badEnvironmentKeyInToken = APNsReason(rawValue: "BadEnvironmentKeyInToken")
    /// 404: bad `:path`.
    public static let badPath = APNsReason(rawValue: "BadPath")
    /// 405: method not POST.
    public static let methodNotAllowed = APNsReason(rawValue: "MethodNotAllowed")
    /// 410: device token expired.
    public static let expiredToken = APNsReason(rawValue: "ExpiredToken")
    /// 410: device token inactive for the topic.
    public static let unregistered = APNsReason(rawValue: "Unregistered")
    /// 413: body over the size limit.
    public static let payloadTooLarge = APNsReason(rawValue: "PayloadTooLarge")
    /// 429: provider token changed too often on one connection.
    public static let tooManyProviderTokenUpdates = APNsReason(rawValue: "TooManyProviderTokenUpdates")
    /// 429: too many requests to one device token.
    public static let tooManyRequests = APNsReason(rawValue: "TooManyRequests")
    /// 500: internal server error.
    public static let internalServerError = APNsReason(rawValue: "InternalServerError")
    /// 503: service unavailable.
    public static let serviceUnavailable = APNsReason(rawValue: "ServiceUnavailable")
    /// 503: server shutting down (GOAWAY).
    public static let shutdown = APNsReason(rawValue: "Shutdown")
    /// 400 (broadcast): capability not enabled.
    public static let featureNotEnabled = APNsReason(rawValue: "FeatureNotEnabled")
    /// 400 (broadcast): no `apns-channel-id`.
    public static let missingChannelID = APNsReason(rawValue: "MissingChannelId")
    /// 400 (broadcast): malformed channel ID.
    public static let badChannelID = APNsReason(rawValue: "BadChannelId")
    /// 400 (broadcast): channel does not exist.
    public static let channelNotRegistered = APNsReason(rawValue: "ChannelNotRegistered")
    /// 400 (channel management): unknown attribute in the body.
    public static let badRequestParams = APNsReason(rawValue: "BadRequestParams")
    /// 400 (channel management): body not parseable.
    public static let badRequestPayload = APNsReason(rawValue: "BadRequestPayload")
    /// 400 (broadcast): no `apns-push-type`.
    public static let missingPushType = APNsReason(rawValue: "MissingPushType")
    /// 400 (channel management): channel limit reached.
    public static let cannotCreateChannelConfig = APNsReason(rawValue: "CannotCreateChannelConfig")
    /// 403 (broadcast): token or certificate not for the path's topic.
    public static let topicMismatch = APNsReason(rawValue: "TopicMismatch")
}

/// The HTTP statuses of the provider API and what they mean (“Handling notification responses from APNs”).
public enum APNsStatus {
    /// The meaning of a status, or `nil` for one APNs does not use.
    public static func meaning(of status: Int) -> String? {
        switch status {
        case 200: "Success"
        case 201: "Created (channel management)"
        case 204: "Deleted (channel management)"
        case 400: "Bad request"
        case 403: "There was an error with the certificate or with the provider authentication token"
        case 404: "The request contained an invalid :path value"
        case 405: "The request used an invalid :method value; only POST requests are supported"
        case 410: "The device token is no longer active for the topic"
        case 413: "The notification payload was too large"
        case 429: "The server received too many requests for the same device token"
        case 500: "Internal server error"
        case 503: "The server is shutting down and unavailable"
        default: nil
        }
    }
}
