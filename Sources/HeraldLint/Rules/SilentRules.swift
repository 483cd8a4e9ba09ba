import HeraldJSON
import HeraldPayload
import HeraldProtocol

extension LintRule {
    static let silentWithVisibleContent = LintRule(
        id: .silentWithVisibleContent, severity: .warning, category: .silent,
        summary: "content-available is 1 but the payload also has alert, sound or badge (unless it is sent as an alert push).",
        rationale: "\"For a silent notification, take care to ensure there is no alert, sound, or badge payload in the aps dictionary. If you don't follow this guidance, the incorrectly-configured notification might be throttled and not delivered to the app in the background, and instead of being silent is displayed to the user\" (Apple's \(AppleDocument.legacyProgrammingGuide), \"Configuring a Silent Notification\").",
        triggering: [LintExample(#"{"aps":{"content-available":1,"alert":"New content"}}"#), LintExample(#"{"aps":{"content-available":1,"badge":1}}"#)],
        nonTriggering: [
            LintExample(#"{"aps":{"content-available":1},"acme":"sync"}"#),
            LintExample.headers(#"{"aps":{"content-available":1,"event":"update","timestamp":1700000000,"content-state":{},"alert":{"title":"Goal"}}}"#, pushType: "liveactivity"),
            LintExample.headers(#"{"aps":{"content-available":1,"alert":"New mail"}}"#, pushType: "alert"),
        ])

    static let contentAvailableNoEffect = LintRule(
        id: .contentAvailableNoEffect, severity: .info, category: .silent,
        summary: "content-available is sent with a Live Activity push, where it has no effect.",
        rationale: "A Live Activity push updates the activity through ActivityKit; it never wakes the app in the background, and it is never silent (\(AppleDocument.liveActivityPushes)). \(APSKey.contentAvailable) belongs to background updates (\(AppleDocument.pushingBackgroundUpdates)); here it is carried along for nothing.",
        triggering: [LintExample.headers(#"{"aps":{"content-available":1,"event":"update","timestamp":1700000000,"content-state":{},"alert":{"title":"Goal"}}}"#, pushType: "liveactivity")],
        nonTriggering: [
            LintExample.headers(#"{"aps":{"event":"update","timestamp":1700000000,"content-state":{}}}"#, pushType: "liveactivity"),
            LintExample.headers(#"{"aps":{"content-available":1}}"#, pushType: "background", priority: "5"),
        ])

    static let backgroundWithVisibleContent = LintRule(
        id: .backgroundWithVisibleContent, severity: .error, category: .silent,
        summary: "A background push carries alert, sound or badge.",
        rationale: "Push type background is for notifications that deliver content in the background and do not interact with the user (Apple's \(AppleDocument.sendingNotificationRequests)); aps holds only \(APSKey.contentAvailable) (\(AppleDocument.pushingBackgroundUpdates)). Send visible notifications as alert pushes.",
        triggering: [LintExample.headers(#"{"aps":{"content-available":1,"sound":"default"}}"#, pushType: "background", priority: "5")],
        nonTriggering: [LintExample.headers(#"{"aps":{"content-available":1}}"#, pushType: "background", priority: "5")])

    static let backgroundWithoutContentAvailable = LintRule(
        id: .backgroundWithoutContentAvailable, severity: .error, category: .silent,
        summary: "A background push lacks content-available: 1, so the app is not woken.",
        rationale: "A background update is aps with \(APSKey.contentAvailable) set to 1 (Apple's \(AppleDocument.pushingBackgroundUpdates)). Without it the push wakes nothing.",
        triggering: [LintExample.headers(#"{"aps":{},"acme":"sync"}"#, pushType: "background", priority: "5")],
        nonTriggering: [LintExample.headers(#"{"aps":{"content-available":1},"acme":"sync"}"#, pushType: "background", priority: "5")])

    static let backgroundPriority = LintRule(
        id: .backgroundPriority, severity: .error, category: .silent,
        summary: "A background push is sent with priority 10 (also the default when apns-priority is absent).",
        rationale: "Background pushes must use priority \(PushPriority.conservePower): \"Using priority 10 is an error\" (Apple's \(AppleDocument.sendingNotificationRequests)). \(APNsHeader.priority) defaults to \(PushPriority.default), so leaving it out is the same mistake. APNs is reported to accept such pushes and then not deliver them.",
        triggering: [
            LintExample.headers(#"{"aps":{"content-available":1}}"#, pushType: "background", priority: "10"),
            LintExample.request(#"{"aps":{"content-available":1}}"#, pushType: "background", topic: "com.example.app"),
        ],
        nonTriggering: [LintExample.headers(#"{"aps":{"content-available":1}}"#, pushType: "background", priority: "5")])
}

extension LintPass {
    /// Whether aps asks to show, play or badge anything.
    var hasVisibleContent: Bool { apsValues.has(.alert) || apsValues.has(.sound) || apsValues.has(.badge) }

    /// Whether `content-available` is 1.
    var wakesApp: Bool { apsValues[.contentAvailable]?.number?.integralValue == 1 }

    mutating func checkSilent() {
        guard let aps else { return }
        if pushType == .liveactivity {
            // Never silent: content-available only rides along.
            if let node = apsValues[.contentAvailable] {
                report(.contentAvailableNoEffect, "\"content-available\" has no effect on a Live Activity push; the activity is updated, the app is not woken", at: node)
            }
        } else if wakesApp && hasVisibleContent && pushType != .alert {
            // Sent as alert, the push is meant to be seen: nothing was meant to stay silent.
            let keys = [APSKey.alert, .sound, .badge].filter { apsValues.has($0) }.map { "\"\($0)\"" }.joined(separator: ", ")
            report(.silentWithVisibleContent, "content-available is 1 alongside \(keys): the push may be throttled and shown instead of staying silent", at: aps)
        }
        if pushType == .background {
            if hasVisibleContent {
                report(.backgroundWithVisibleContent, "a background push must not carry alert, sound or badge; send visible notifications with push type alert", at: aps)
            }
            if !wakesApp {
                report(.backgroundWithoutContentAvailable, "a background push needs \"content-available\": 1 in aps, or the app is not woken", at: aps)
            }
        }
        let backgroundOnly = pushType == .background || (context.pushType == nil && wakesApp && !hasVisibleContent)
        if backgroundOnly, context.effectivePriority == .immediate {
            let how = context.priority == nil ? "apns-priority is absent, so it is 10" : "apns-priority is 10"
            report(.backgroundPriority, "\(how); background pushes must use priority \(PushPriority.conservePower)", at: .header(APNsHeader.priority))
        }
    }
}
