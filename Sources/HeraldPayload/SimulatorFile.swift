import HeraldJSON

/// An Xcode simulator push file (`.apns`): a payload with the Simulator's own top-level keys,
/// as `xcrun simctl push` and a file dropped on the Simulator take it. APNs knows nothing of
/// those keys; a provider sends the payload without them.
public enum SimulatorFile {
    /// The app the Simulator delivers to (the topic, when sending for real).
    public static let targetBundleKey = "Simulator Target Bundle"
    /// Actions for the watchOS Simulator.
    public static let watchKitActionsKey = "WatchKit Simulator Actions"

    /// The payload without the Simulator's keys, and the bundle ID the file names.
    ///
    /// Only those members are cut out, with the comma that joined them; every other byte stays
    /// as written (the payload's size and key order are the file's). A body that is not a JSON
    /// object comes back unchanged.
    public static func strippingSimulatorKeys(_ body: [UInt8]) -> (payload: [UInt8], bundleID: String?) {
        guard let document = try? JSONDocument(parsing: body), document.root.kind == .object else { return (body, nil) }
        let members = Array(document.root.members)
        var bundleID: String?
        var cuts: [Range<Int>] = []
        for (index, member) in members.enumerated() where member.key == targetBundleKey || member.key == watchKitActionsKey {
            if member.key == targetBundleKey { bundleID = member.value.stringValue }
            // The member and the comma after it, or (the last member) the comma before it.
            if index + 1 < members.count {
                cuts.append(member.keyNode.byteRange.lowerBound..<members[index + 1].keyNode.byteRange.lowerBound)
            } else if index > 0 {
                cuts.append(members[index - 1].value.byteRange.upperBound..<member.value.byteRange.upperBound)
            } else {
                cuts.append(member.keyNode.byteRange.lowerBound..<member.value.byteRange.upperBound)
            }
        }
        var result = body
        for cut in cuts.sorted(by: { $0.lowerBound > $1.lowerBound }) { result.removeSubrange(cut) }
        return (result, bundleID)
    }
}
