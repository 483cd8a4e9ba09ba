/// Apple's documents, by the titles a reader can look up: what messages, rule rationales and
/// help text cite for a fact.
public enum AppleDocument: String, CaseIterable, Sendable, CustomStringConvertible {
    /// The current payload key tables.
    case generatingARemoteNotification = "Generating a remote notification"
    /// Request headers, paths, push types, priorities, limits.
    case sendingNotificationRequests = "Sending notification requests to APNs"
    /// Statuses, reasons, the `timestamp` of 410.
    case handlingNotificationResponses = "Handling notification responses from APNs"
    /// JWT provider tokens, refresh rules, key scoping.
    case tokenBasedConnection = "Establishing a token-based connection to APNs"
    /// Provider certificates.
    case certificateBasedConnection = "Establishing a certificate-based connection to APNs"
    /// Background (silent) updates.
    case pushingBackgroundUpdates = "Pushing background updates to your App"
    /// Notification service extensions: when `mutable-content` runs one.
    case modifyingNotificationContent = "Modifying content in newly delivered notifications"
    /// ActivityKit pushes.
    case liveActivityPushes = "Starting and updating Live Activities with ActivityKit push notifications"
    /// WidgetKit reload pushes.
    case widgetPushes = "Updating widgets with WidgetKit push notifications"
    /// WidgetKit control pushes.
    case controlPushes = "Updating controls locally and remotely"
    /// Broadcast channel management.
    case channelManagement = "Sending channel management requests to APNs"
    /// Broadcast pushes.
    case broadcastPushes = "Sending broadcast push notification requests to APNs"
    /// The archived guide with the original payload tables and examples.
    case legacyProgrammingGuide = "Local and Remote Notification Programming Guide"
    /// Safari website pushes.
    case websitesProgrammingGuide = "Notification Programming Guide for Websites"
    /// What the device shows (`UNNotificationContent`).
    case notificationContent = "UNNotificationContent"
    /// How a `loc-key` is looked up and formatted.
    case localizedUserNotificationString = "localizedUserNotificationString(forKey:arguments:)"
    /// `xcrun simctl push` and `.apns` files.
    case simulatorPush = "xcrun simctl push (Xcode's simctl help)"

    /// The title in quotes, as a citation: `"Generating a remote notification"`.
    public var description: String { "\"\(rawValue)\"" }
}
