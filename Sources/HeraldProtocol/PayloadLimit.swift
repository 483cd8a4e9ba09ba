/// Payload size limits in bytes of the request body as sent (Apple's “Generating a remote notification”).
///
/// APNs counts the raw body: UTF-8 JSON, whitespace included. Exceeding the limit gives
/// 413 ``APNsReason/payloadTooLarge``.
public enum PayloadLimit {
    /// Every device push except VoIP: 4096 bytes (“Sending notification requests to APNs”, “Generating a remote notification”).
    public static let standard = 4096
    /// VoIP pushes: 5120 bytes (“Sending notification requests to APNs”, “Generating a remote notification”).
    public static let voip = 5120
    /// Broadcast (channel) pushes: 5120 bytes (“Sending broadcast push notification requests to APNs”).
    public static let broadcast = 5120
    /// The retired binary interface (iOS 8 to 2021): 2048 bytes, from Apple's “Local and Remote Notification Programming Guide”.
    public static let legacyBinary = 2048
    /// The binary interface before iOS 8: 256 bytes.
    public static let legacyBinaryBeforeIOS8 = 256
    /// `xcrun simctl push` files: 4096 bytes.
    public static let simulator = 4096

    /// The limit for a request: broadcast pushes allow 5120 bytes, device pushes
    /// ``PushType/payloadLimit`` (4096 when the push type is unknown).
    public static func limit(for pushType: PushType?, endpoint: APNsEndpoint = .device) -> Int {
        switch endpoint {
        case .broadcast: broadcast
        case .device: pushType?.payloadLimit ?? standard
        }
    }
}

/// Which APNs request a payload travels in.
public enum APNsEndpoint: String, Sendable, Hashable, CaseIterable {
    /// `POST /3/device/<token>`: one device (or one Live Activity token).
    case device
    /// `POST /4/broadcasts/apps/<bundle-id>`: every subscriber of a broadcast channel.
    case broadcast
}
