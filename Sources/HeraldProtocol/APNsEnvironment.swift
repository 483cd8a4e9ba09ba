/// Production or sandbox (development) APNs, with their hosts and ports (Apple's “Sending notification requests to APNs”; Apple's “Sending channel management requests to APNs”).
///
/// A device token belongs to one environment: a sandbox token sent to production (or the reverse)
/// gives ``APNsReason/badDeviceToken``.
public enum APNsEnvironment: String, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    /// `api.push.apple.com`: apps signed for distribution.
    case production
    /// `api.sandbox.push.apple.com`: apps signed for development.
    case sandbox

    /// The provider API host.
    public var host: String {
        switch self {
        case .production: "api.push.apple.com"
        case .sandbox: "api.sandbox.push.apple.com"
        }
    }

    /// The HTTPS port.
    public static let port = 443
    /// The alternate port, for firewalls that let APNs through while blocking other HTTPS.
    public static let alternatePort = 2197

    /// The older development host name that Apple's own `openssl s_client` example still uses;
    /// treated as the sandbox.
    public static let legacySandboxHost = "api.development.push.apple.com"

    /// The broadcast channel-management host.
    public var channelManagementHost: String {
        switch self {
        case .production: "api-manage-broadcast.push.apple.com"
        case .sandbox: "api-manage-broadcast.sandbox.push.apple.com"
        }
    }

    /// The broadcast channel-management port: 2196 in production, 2195 in the sandbox.
    public var channelManagementPort: Int {
        switch self {
        case .production: 2196
        case .sandbox: 2195
        }
    }

    /// Whether responses carry `apns-unique-id` (development only).
    public var sendsUniqueID: Bool { self == .sandbox }

    /// The environment a provider host names, including the legacy sandbox name.
    public init?(host: String) {
        switch host.lowercased() {
        case Self.production.host: self = .production
        case Self.sandbox.host, Self.legacySandboxHost: self = .sandbox
        default: return nil
        }
    }

    /// `production` or `sandbox`.
    public var description: String { rawValue }
}

/// The request paths of the provider API (Apple's “Sending notification requests to APNs”; Apple's “Sending broadcast push notification requests to APNs”).
public enum APNsPath {
    /// The prefix of a device push: `/3/device/` followed by the hex token.
    public static let devicePrefix = "/3/device/"
    /// The prefix of a broadcast push: `/4/broadcasts/apps/` followed by the bare bundle ID.
    public static let broadcastPrefix = "/4/broadcasts/apps/"
    /// The prefix of channel management: `/1/apps/` followed by the bundle ID.
    public static let channelManagementPrefix = "/1/apps/"

    /// `/3/device/<token>`.
    public static func device(_ token: DeviceToken) -> String { devicePrefix + token.hex }

    /// `/4/broadcasts/apps/<bundle-id>`.
    public static func broadcast(bundleID: String) -> String { broadcastPrefix + bundleID }

    /// `/1/apps/<bundle-id>/channels`.
    public static func channels(bundleID: String) -> String { channelManagementPrefix + bundleID + "/channels" }

    /// `/1/apps/<bundle-id>/all-channels`.
    public static func allChannels(bundleID: String) -> String { channelManagementPrefix + bundleID + "/all-channels" }
}

/// Header names of the provider API, each spelled once (Apple's “Sending notification requests to APNs”; Apple's “Handling notification responses from APNs”; Apple's “Sending broadcast push notification requests to APNs”).
public enum APNsHeader {
    /// `apns-push-type`: one of the ``PushType`` values.
    public static let pushType = "apns-push-type"
    /// `apns-id`: the notification's canonical lowercase UUID (``APNsID``).
    public static let id = "apns-id"
    /// `apns-expiration`: UNIX epoch seconds (``Expiration``).
    public static let expiration = "apns-expiration"
    /// `apns-priority`: 10, 5 or 1 (``PushPriority``).
    public static let priority = "apns-priority"
    /// `apns-topic`: the bundle ID plus the push type's suffix.
    public static let topic = "apns-topic"
    /// `apns-collapse-id`: at most 64 bytes (``CollapseID``).
    public static let collapseID = "apns-collapse-id"
    /// `authorization`: `bearer <JWT>` under token authentication.
    public static let authorization = "authorization"
    /// `apns-unique-id`: in development responses, the Delivery Log lookup key.
    public static let uniqueID = "apns-unique-id"
    /// `apns-channel-id`: a broadcast channel (base64).
    public static let channelID = "apns-channel-id"
    /// `apns-request-id`: a broadcast or channel request's UUID.
    public static let requestID = "apns-request-id"
    /// `content-type` of error bodies: `application/json`.
    public static let contentType = "content-type"

    /// The request headers a device push may carry (besides pseudo-headers).
    public static let deviceRequestHeaders = [authorization, pushType, id, expiration, priority, topic, collapseID]

    /// The `apns-` request header `name` stands for (any case, `_` for `-`), such as a key
    /// `apns_priority` written into a payload by mistake; `nil` for other names.
    public static func requestHeader(named name: String) -> String? {
        // Most keys are not: the first five bytes tell, before any string is made.
        var head = name.utf8.makeIterator()
        guard head.next().map({ $0 | 0x20 == UInt8(ascii: "a") }) == true, head.next().map({ $0 | 0x20 == UInt8(ascii: "p") }) == true,
              head.next().map({ $0 | 0x20 == UInt8(ascii: "n") }) == true, head.next().map({ $0 | 0x20 == UInt8(ascii: "s") }) == true,
              head.next().map({ $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }) == true else { return nil }
        let normalized = String(name.lowercased().map { $0 == "_" ? "-" : $0 })
        guard normalized.hasPrefix("apns-") else { return nil }
        return deviceRequestHeaders.first { $0 == normalized }
    }

    /// The scheme of `authorization` under token authentication, with its space: `bearer `.
    public static let bearerPrefix = "bearer "

    /// The provider token in an `authorization` value (`bearer <token>`, the scheme in any case),
    /// or `nil` when the value is not a bearer token.
    public static func providerToken(inAuthorization value: String) -> String? {
        // The scheme is compared byte by byte (ASCII letters in any case), and the token copied
        // from the bytes past it, without a lowercased copy or a walk over characters: every
        // request the mock answers carries one.
        var text = value
        var scheme = bearerPrefix
        return text.withUTF8 { bytes in
            scheme.withUTF8 { scheme -> String? in
                guard bytes.count > scheme.count else { return nil }
                for (sent, expected) in zip(bytes, scheme) where sent != expected {
                    guard sent | 0x20 == expected, expected &- UInt8(ascii: "a") < 26 else { return nil }
                }
                var start = scheme.count
                while start < bytes.count, bytes[start] == UInt8(ascii: " ") { start += 1 }
                return start == bytes.count ? nil : String(decoding: UnsafeBufferPointer(rebasing: bytes[start...]), as: UTF8.self)
            }
        }
    }
}
