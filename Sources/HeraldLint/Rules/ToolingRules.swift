import HeraldJSON
import HeraldPayload
import HeraldProtocol

extension LintRule {
    static let simulatorTargetBundle = LintRule(
        .simulatorTargetBundle, .info, .tooling,
        summary: "The payload has \"Simulator Target Bundle\", a key for the simulator.",
        rationale: "xcrun simctl push and .apns files read \"\(PayloadKey.simulatorTargetBundle)\" to pick the app (\(AppleDocument.simulatorPush)). APNs passes it to the device as custom data; it does no harm, but it has no meaning in production. Lint says nothing about it in a .apns file, where it belongs.",
        triggering: [LintExample(#"{"Simulator Target Bundle":"com.example.MyApp","aps":{"alert":"Hi"}}"#)],
        nonTriggering: [
            LintExample(#"{"aps":{"alert":"Hi"}}"#),
            LintExample(#"{"Simulator Target Bundle":"com.example.MyApp","aps":{"alert":"Hi"}}"#, LintContext(isSimulatorFile: true)),
        ])

    static let watchKitSimulatorActions = LintRule(
        .watchKitSimulatorActions, .info, .tooling,
        summary: "The payload has \"WatchKit Simulator Actions\", a key for the watchOS simulator.",
        rationale: "Xcode's watchOS notification templates carry \"\(PayloadKey.watchKitSimulatorActions)\", the action buttons the simulator shows. Real devices take actions from the notification's category; APNs passes the key along as custom data. Lint says nothing about it in a .apns file.",
        triggering: [LintExample(#"{"aps":{"alert":"Hi","category":"myCategory"},"WatchKit Simulator Actions":[{"title":"First","identifier":"firstButtonAction"}]}"#)],
        nonTriggering: [
            LintExample(#"{"aps":{"alert":"Hi","category":"myCategory"}}"#),
            LintExample(#"{"aps":{"alert":"Hi"},"WatchKit Simulator Actions":[]}"#, LintContext(isSimulatorFile: true)),
        ])
}

extension LintPass {
    static let simulatorTargetBundle = PayloadKey.simulatorTargetBundle.description
    static let watchKitSimulatorActions = PayloadKey.watchKitSimulatorActions.description

    /// Called by the form check for each top-level member that is not `aps`.
    mutating func checkTooling(_ member: JSONDocument.Member) {
        guard !context.isSimulatorFile else { return }
        if member.keyNode.stringEquals(Self.simulatorTargetBundle) {
            let target = member.value.stringValue.map { " (\($0))" } ?? ""
            report(.simulatorTargetBundle, "\"\(Self.simulatorTargetBundle)\"\(target) is for xcrun simctl push and .apns files; APNs delivers it as custom data", atKeyOf: member)
        } else if member.keyNode.stringEquals(Self.watchKitSimulatorActions) {
            report(.watchKitSimulatorActions, "\"\(Self.watchKitSimulatorActions)\" is for the watchOS simulator; devices take actions from the category, and APNs delivers this as custom data", atKeyOf: member)
        }
    }
}
