import HeraldJSON
import HeraldPayload

extension LintRule {
    static let simulatorTargetBundle = LintRule(
        .simulatorTargetBundle, .info, .tooling,
        summary: "The payload has \"Simulator Target Bundle\", a key for the simulator.",
        rationale: "xcrun simctl push and .apns files read \"Simulator Target Bundle\" to pick the app (reference §10.1). APNs passes it to the device as custom data; it does no harm, but it has no meaning in production.",
        triggering: [LintExample(#"{"Simulator Target Bundle":"com.example.MyApp","aps":{"alert":"Hi"}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":"Hi"}}"#)])
}

extension LintPass {
    static let simulatorTargetBundle = PayloadKey.simulatorTargetBundle.description

    /// Called by the form check for the `Simulator Target Bundle` member.
    mutating func checkTooling(_ member: JSONDocument.Member) {
        let target = member.value.stringValue.map { " (\($0))" } ?? ""
        report(.simulatorTargetBundle, "\"Simulator Target Bundle\"\(target) is for xcrun simctl push and .apns files; APNs delivers it as custom data", atKeyOf: member)
    }
}
