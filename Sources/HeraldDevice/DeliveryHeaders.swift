import HeraldProtocol

/// The request headers that change what a device does with a payload.
public struct DeliveryHeaders: Sendable, Hashable {
    /// `apns-push-type`: `liveactivity` renders an activity update, `background` means the push
    /// is meant to be silent.
    public var pushType: PushType?
    /// `apns-priority`.
    public var priority: PushPriority?
    /// `apns-collapse-id`: a notification with the same ID replaces the earlier one.
    public var collapseID: String?
    /// `apns-expiration`: when a stored notification stops being worth delivering.
    public var expiration: Expiration?
    /// `apns-id`: the notification's identifier (the device's request identifier).
    public var apnsID: String?

    /// Creates headers; all are optional, as in a request.
    public init(pushType: PushType? = nil, priority: PushPriority? = nil, collapseID: String? = nil, expiration: Expiration? = nil, apnsID: String? = nil) {
        self.pushType = pushType
        self.priority = priority
        self.collapseID = collapseID
        self.expiration = expiration
        self.apnsID = apnsID
    }
}
