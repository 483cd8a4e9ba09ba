import HeraldJSON
import HeraldPayload
import HeraldProtocol

extension LintRule {
    static let silentWithVisibleContent = LintRule(
        .silentWithVisibleContent, .warning, .silent,
        summary: "content-available is 1 but the payload also has alert, sound or badge.",
        rationale: "\"For a silent notification, take care to ensure there is no alert, sound, or badge payload in the aps dictionary. If you don't follow this guidance, the incorrectly-configured notification might be throttled and not delivered to the app in the background, and instead of being silent is displayed to the user\" (seed 000, \"Configuring a Silent Notification\").",
        triggering: [LintExample(#"{"aps":{"content-available":1,"alert":"New content"}}"#), LintExample(#"{"aps":{"content-available":1,"badge":1}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"content-available":1},"acme":"sync"}"#)])

    static let backgroundWithVisibleContent = LintRule(
        .backgroundWithVisibleContent, .error, .silent,
        summary: "A background push carries alert, sound or badge.",
        rationale: "Push type background is for notifications that \"do not interact with the user\" (seed 003, \"Push type\"); aps must hold only content-available (reference §9, A-BG). Send visible notifications as alert pushes.",
        triggering: [LintExample.headers(#"{"aps":{"content-available":1,"sound":"default"}}"#, pushType: "background", priority: "5")],
        nonTriggering: [LintExample.headers(#"{"aps":{"content-available":1}}"#, pushType: "background", priority: "5")])

    static let backgroundWithoutContentAvailable = LintRule(
        .backgroundWithoutContentAvailable, .error, .silent,
        summary: "A background push lacks content-available: 1, so the app is not woken.",
        rationale: "A background update is aps with content-available set to 1 (seed 001, Table 1; reference §9, A-BG). Without it the push wakes nothing.",
        triggering: [LintExample.headers(#"{"aps":{},"acme":"sync"}"#, pushType: "background", priority: "5")],
        nonTriggering: [LintExample.headers(#"{"aps":{"content-available":1},"acme":"sync"}"#, pushType: "background", priority: "5")])

    static let backgroundPriority = LintRule(
        .backgroundPriority, .error, .silent,
        summary: "A background push is sent with priority 10 (also the default when apns-priority is absent).",
        rationale: "\"Notifications with push type background must use priority 5. Using priority 10 is an error\" (reference §1.2, A-SEND; seed 003, \"Priority\"). apns-priority defaults to 10, so leaving it out is the same mistake. APNs tends to accept such pushes and then not deliver them.",
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
        if wakesApp && hasVisibleContent {
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
            report(.backgroundPriority, "\(how); background pushes must use priority 5", at: .header(APNsHeader.priority))
        }
    }
}
