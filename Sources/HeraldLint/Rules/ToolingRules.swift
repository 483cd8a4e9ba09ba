import HeraldJSON
import HeraldPayload
import HeraldProtocol

extension LintRule {
    static let simulatorTargetBundle = LintRule(
        id: .simulatorTargetBundle, severity: .info, category: .tooling,
        summary: "The payload has \"Simulator Target Bundle\", a key for the simulator.",
        rationale: "xcrun simctl push and .apns files read \"\(PayloadKey.simulatorTargetBundle)\" to pick the app (\(AppleDocument.simulatorPush)). APNs passes it to the device as custom data; it does no harm, but it has no meaning in production. Lint says nothing about it in a .apns file, where it belongs.",
        triggering: [LintExample(#"{"Simulator Target Bundle":"com.example.MyApp","aps":{"alert":"Hi"}}"#)],
        nonTriggering: [
            LintExample(#"{"aps":{"alert":"Hi"}}"#),
            LintExample(#"{"Simulator Target Bundle":"com.example.MyApp","aps":{"alert":"Hi"}}"#, LintContext(isSimulatorFile: true)),
        ])

    static let watchKitSimulatorActions = LintRule(
        id: .watchKitSimulatorActions, severity: .info, category: .tooling,
        summary: "The payload has \"WatchKit Simulator Actions\", a key for the watchOS simulator.",
        rationale: "Xcode's watchOS notification templates carry \"\(PayloadKey.watchKitSimulatorActions)\", the action buttons the simulator shows. Real devices take actions from the notification's category; APNs passes the key along as custom data. Lint says nothing about it in a .apns file.",
        triggering: [LintExample(#"{"aps":{"alert":"Hi","category":"myCategory"},"WatchKit Simulator Actions":[{"title":"First","identifier":"firstButtonAction"}]}"#)],
        nonTriggering: [
            LintExample(#"{"aps":{"alert":"Hi","category":"myCategory"}}"#),
            LintExample(#"{"aps":{"alert":"Hi"},"WatchKit Simulator Actions":[]}"#, LintContext(isSimulatorFile: true)),
        ])

    static let simulatorKeyMisspelled = LintRule(
        id: .simulatorKeyMisspelled, severity: .warning, category: .tooling,
        summary: "A top-level key is a near miss of \"Simulator Target Bundle\", which the Simulator reads only spelled exactly.",
        rationale: "xcrun simctl push and a .apns file dropped on the Simulator find the app by \"\(PayloadKey.simulatorTargetBundle)\", spelled exactly (\(AppleDocument.simulatorPush)); \"Simulate Target Bundle\" or \"simulator target bundle\" is an ordinary custom key, and the Simulator asks which app to send to, or refuses the file.",
        triggering: [
            LintExample(#"{"Simulate Target Bundle":"com.example.MyApp","aps":{"alert":"Hi"}}"#, LintContext(isSimulatorFile: true)),
            LintExample(#"{"Simulation Target Bundle":"com.example.MyApp","aps":{"alert":"Hi"}}"#, LintContext(isSimulatorFile: true)),
        ],
        nonTriggering: [
            LintExample(#"{"Simulator Target Bundle":"com.example.MyApp","aps":{"alert":"Hi"}}"#, LintContext(isSimulatorFile: true)),
            LintExample(#"{"target":"com.example.MyApp","aps":{"alert":"Hi"}}"#, LintContext(isSimulatorFile: true)),
        ])
}

extension LintPass {
    static let simulatorTargetBundle = PayloadKey.simulatorTargetBundle.description
    static let watchKitSimulatorActions = PayloadKey.watchKitSimulatorActions.description

    /// "simulatortargetbundle": the key folded to lowercase letters, for near misses.
    private static let foldedSimulatorKey = "simulatortargetbundle"

    /// Called by the form check for each top-level member that is not `aps`.
    mutating func checkTooling(_ member: JSONDocument.Member, _ key: TopLevelKey) {
        if let misspelled = Self.nearMissOfSimulatorKey(member) {
            report(.simulatorKeyMisspelled, "\"\(misspelled)\" is not \"\(Self.simulatorTargetBundle)\": the Simulator reads only that spelling", atKeyOf: member)
            return
        }
        guard !context.isSimulatorFile else { return }
        if key.isSimulatorTargetBundle {
            let target = member.value.stringValue.map { " (\($0))" } ?? ""
            report(.simulatorTargetBundle, "\"\(Self.simulatorTargetBundle)\"\(target) is for xcrun simctl push and .apns files; APNs delivers it as custom data", atKeyOf: member)
        } else if key.isWatchKitSimulatorActions {
            report(.watchKitSimulatorActions, "\"\(Self.watchKitSimulatorActions)\" is for the watchOS simulator; devices take actions from the category, and APNs delivers this as custom data", atKeyOf: member)
        }
    }

    /// The lengths of a key's source, quotes included, that ``nearMissOfSimulatorKey(_:)``
    /// compares (its text, as written, of 15 to 40 bytes).
    static var simulatorKeyNearMissLengths: ClosedRange<Int> { 17...42 }

    /// The key, when it is close to "Simulator Target Bundle" without being it: letters folded
    /// to lowercase (spaces, dashes and underscores dropped) within three edits. Only keys of a
    /// plausible length are compared, so the cost is bounded whatever the payload.
    static func nearMissOfSimulatorKey(_ member: JSONDocument.Member) -> String? {
        guard simulatorKeyNearMissLengths.contains(member.keyNode.byteRange.count), !member.keyNode.stringEquals(simulatorTargetBundle), let key = member.keyNode.stringValue else { return nil }
        var folded = ""
        for scalar in key.unicodeScalars {
            switch scalar.value {
            case 0x41...0x5A: folded.unicodeScalars.append(Unicode.Scalar(scalar.value + 32)!)
            case 0x61...0x7A: folded.unicodeScalars.append(scalar)
            case 0x20, 0x2D, 0x5F: continue
            default: return nil
            }
        }
        return KeySuggester.editDistance(folded, foldedSimulatorKey, limit: 3) <= 3 ? key : nil
    }
}
