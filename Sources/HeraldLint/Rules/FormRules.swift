import HeraldJSON
import HeraldPayload
import HeraldProtocol

extension LintRule {
    static let payloadEmpty = LintRule(
        id: .payloadEmpty, severity: .error, category: .form,
        summary: "The body is empty.",
        rationale: "APNs rejects an empty body with \(APNsReason.payloadEmpty.statusAndReason) (Apple's \(AppleDocument.handlingNotificationResponses)).",
        apnsReason: .payloadEmpty,
        triggering: [LintExample("")],
        nonTriggering: [LintExample(#"{"aps":{"alert":"Hi"}}"#)])

    static let invalidJSON = LintRule(
        id: .invalidJSON, severity: .error, category: .form,
        summary: "The body is not valid JSON.",
        rationale: "A payload is a JSON dictionary (Apple's \(AppleDocument.generatingARemoteNotification); the \(AppleDocument.legacyProgrammingGuide) cites RFC 4627). The older guide's fifth example lacks a comma, and copies of it carry typographic quotes; both break the payload. Herald reads past a missing comma, a trailing comma and typographic quotes, so the rest of the payload is still checked.",
        triggering: [
            LintExample("{\n  \"aps\" : {\n    \"category\" : \"NEW_MESSAGE_CATEGORY\"\n    \"badge\" : 3\n  }\n}"),
            LintExample("{\"aps\":{\"sound\":“chime.aiff\"}}"),
            LintExample("{\"aps\":{\"badge\":1,}}"),
        ],
        nonTriggering: [LintExample(#"{"aps":{"category":"NEW_MESSAGE_CATEGORY","badge":3}}"#)])

    static let payloadNotObject = LintRule(
        id: .payloadNotObject, severity: .error, category: .form,
        summary: "The body is JSON but not an object.",
        rationale: "The payload must be a JSON dictionary containing the \(PayloadKey.aps) dictionary (Apple's \(AppleDocument.generatingARemoteNotification), \"Create the JSON payload\").",
        triggering: [LintExample(#"["aps"]"#), LintExample(#""Hello""#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":"Hello"}}"#)])

    static let duplicateKey = LintRule(
        id: .duplicateKey, severity: .warning, category: .form,
        summary: "An object gives the same key twice.",
        rationale: "JSON (RFC 8259) leaves duplicate keys undefined: APNs, the device and your service extension may each keep a different one. Herald keeps both and reports the later key.",
        triggering: [LintExample(#"{"aps":{"badge":1,"badge":2}}"#), LintExample(#"{"aps":{},"id":1,"id":2}"#)],
        nonTriggering: [LintExample(#"{"aps":{"badge":1},"badge":2}"#)])

    static let apsMissing = LintRule(
        id: .apsMissing, severity: .error, category: .form,
        summary: "The payload has no aps dictionary.",
        rationale: "\"This dictionary must contain another dictionary identified by the aps key\" (Apple's \(AppleDocument.legacyProgrammingGuide)). \(LintPass.typesNeedingAPS.map(\.rawValue).sorted().joined(separator: ", ")) pushes need it; MDM, VoIP, location, File Provider and Push to Talk payloads may do without.",
        triggering: [LintExample(#"{"alert":"Hi"}"#), LintExample.request(#"{"acme":1}"#, pushType: "alert", topic: "com.example.app")],
        nonTriggering: [LintExample.request(#"{"mdm":"3B5E7F2A"}"#, pushType: "mdm", topic: "com.apple.mgmt.External.1"), LintExample(#"{"aps":{"alert":"Hi"}}"#)])

    static let apsNotObject = LintRule(
        id: .apsNotObject, severity: .error, category: .form,
        summary: "aps is not a dictionary.",
        rationale: "\(PayloadKey.aps) is a dictionary of Apple-defined keys (Apple's \(AppleDocument.generatingARemoteNotification), Table 1).",
        triggering: [LintExample(#"{"aps":"Hello"}"#), LintExample(#"{"aps":[]}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":"Hello"}}"#)])

    static let apsEmpty = LintRule(
        id: .apsEmpty, severity: .warning, category: .form,
        summary: "aps is an empty dictionary: the notification does nothing.",
        rationale: "The \(PayloadKey.aps) dictionary should contain one or more properties (Apple's \(AppleDocument.legacyProgrammingGuide), \"Payload Keys\"); empty, there is nothing to show, play, badge or wake. The exceptions are pushes that wake their extension or app whatever aps holds: MDM ({\"aps\":{},\"\(PayloadKey.mdm)\":\"…\"} wakes the device's MDM client), and the push types that may do without aps altogether (VoIP, location, complication, File Provider, Push to Talk: Apple's \(AppleDocument.sendingNotificationRequests)).",
        triggering: [LintExample(#"{"aps":{},"acme":1}"#), LintExample.headers(#"{"aps":{},"acme":1}"#, pushType: "alert")],
        nonTriggering: [
            LintExample(#"{"aps":{"badge":0}}"#),
            LintExample.request(#"{"aps":{},"mdm":"3B5E7F2A-1C2D"}"#, pushType: "mdm", topic: "com.apple.mgmt.External.3f1c"),
            LintExample(#"{"aps":{},"mdm":"3B5E7F2A-1C2D"}"#),
            LintExample.request(#"{"aps":{},"acme":1}"#, pushType: "location", topic: "com.example.app.location-query"),
            LintExample.request(#"{"aps":{},"channel":"ops"}"#, pushType: "pushtotalk", priority: "10", topic: "com.example.app.voip-ptt"),
            LintExample.request(#"{"aps":{},"score":"2-1"}"#, pushType: "complication", topic: "com.example.app.complication"),
        ])

    static let appleKeyOutsideAPS = LintRule(
        id: .appleKeyOutsideAPS, severity: .warning, category: .form,
        summary: "An aps key (alert, badge, content-available, …) or an alert key only aps.alert reads (loc-key, summary-arg, …), or a near miss of one such as Firebase's content_available, sits beside aps.",
        rationale: "Apple's keys only take effect inside the \(PayloadKey.aps) dictionary (Apple's \(AppleDocument.generatingARemoteNotification), Table 1), and the alert's keys only inside its alert dictionary (Table 2); beside aps they are custom data the system ignores. Payloads written for Firebase's APNs bridge use content_available and mutable_content beside aps; sent straight to APNs they do nothing. A key beside aps whose value could not be the Apple key's (an app's own \"event\" dictionary), or a Live Activity key on a push that is not a Live Activity, is the app's own data and is left alone.",
        triggering: [
            LintExample(#"{"aps":{"alert":"Hi"},"badge":3}"#), LintExample(#"{"aps":{"alert":"Hi"},"mutable_content":true}"#), LintExample(#"{"aps":{},"content_available":1}"#),
            LintExample(#"{"aps":{"alert":{"body":"3 new photos"}},"summary-arg":"Ann"}"#),
            LintExample.headers(#"{"aps":{"content-state":{}},"event":"update"}"#, pushType: "liveactivity"),
        ],
        nonTriggering: [
            LintExample(#"{"aps":{"alert":"Hi","badge":3},"acme":1}"#), LintExample(#"{"aps":{"alert":"Hi"},"threadTitle":"x","contents":1}"#),
            LintExample.headers(#"{"aps":{"alert":"Match starts"},"event":{"id":42,"name":"Final"}}"#, pushType: "alert"),
            LintExample.headers(#"{"aps":{"alert":"Match starts"},"event":"final","timestamp":1700000000}"#, pushType: "alert"),
            LintExample(#"{"aps":{"alert":"Hi"},"sound":3}"#),
        ])
}

extension LintPass {
    /// Alert keys with no other common meaning: beside aps they are a misplaced alert key, not
    /// the app's data (`title` and `body` beside aps are often an app's own).
    static let alertOnlyKeys: Set<AlertKey> = [
        .titleLocKey, .titleLocArgs, .subtitleLocKey, .subtitleLocArgs, .locKey, .locArgs, .actionLocKey, .summaryArg, .summaryArgCount, .launchImage,
    ]

    /// Push types whose payload must carry `aps` (Apple's “Sending notification requests to APNs”; Apple's “Starting and updating Live Activities with ActivityKit push notifications”; Apple's “Pushing background updates to your App”).
    static let typesNeedingAPS: Set<PushType> = [.alert, .background, .liveactivity, .widgets, .controls]

    /// What a top-level key is, from one look at its bytes: `aps`, `mdm`, an aps or alert key
    /// by its exact spelling, possibly a respelling of an aps key, or a key of Apple's tools.
    struct TopLevelKey {
        var isAPS = false
        var isMDM = false
        var apsKey: APSKey?
        var alertKey: AlertKey?
        var mayBeRespelled = false
        var isSimulatorTargetBundle = false
        var isWatchKitSimulatorActions = false

        init(_ bytes: UnsafeRawBufferPointer, _ appleKeys: AppleKeyLookup) {
            isSimulatorTargetBundle = Self.equal(bytes, PayloadKey.simulatorTargetBundle)
            isWatchKitSimulatorActions = Self.equal(bytes, PayloadKey.watchKitSimulatorActions)
            if bytes.count == 3 {
                isAPS = bytes[0] == UInt8(ascii: "a") && bytes[1] == UInt8(ascii: "p") && bytes[2] == UInt8(ascii: "s")
                isMDM = bytes[0] == UInt8(ascii: "m") && bytes[1] == UInt8(ascii: "d") && bytes[2] == UInt8(ascii: "m")
                if isAPS || isMDM { return }
            }
            (apsKey, alertKey) = appleKeys(bytes)
            if apsKey == nil, alertKey == nil { mayBeRespelled = KeySuggester.mayBeRespelled(bytes) }
        }

        /// Neither aps nor mdm, nor an Apple key, a possible respelling of one, or a key of Apple's
        /// tools: the app's own data.
        var isAppData: Bool {
            !isAPS && !isMDM && apsKey == nil && alertKey == nil && !mayBeRespelled && !isSimulatorTargetBundle && !isWatchKitSimulatorActions
        }

        private static func equal(_ bytes: UnsafeRawBufferPointer, _ spelling: StaticString) -> Bool {
            bytes.count == spelling.utf8CodeUnitCount && bytes.elementsEqual(UnsafeBufferPointer(start: spelling.utf8Start, count: spelling.utf8CodeUnitCount))
        }
    }

    mutating func checkForm(_ root: Node) {
        var apsValue: Node?
        var hasMDMKey = false
        let checkOutside = isActive(.appleKeyOutsideAPS)
        let appleKeys = AppleKeyLookup()
        let document = root.document
        for keyIndex in root.memberKeyIndices {
            let key = document.withStringUTF8(atTapeIndex: keyIndex) { TopLevelKey($0, appleKeys) } ?? TopLevelKey(UnsafeRawBufferPointer(start: nil, count: 0), appleKeys)
            // Most top-level keys are the app's own, and none of the checks below has anything
            // to say about them: no member is made for those (each holds the document twice).
            if key.isAppData, document.kind(at: keyIndex + 1) != .null,
               !Self.simulatorKeyNearMissLengths.contains(document.sourceLength(at: keyIndex)) {
                continue
            }
            let member = document.member(atKey: keyIndex)
            if key.isAPS {
                apsValue = member.value // the last `aps`, as readers take it
                apsKeyIndices.append(member.keyNode.index)
                continue
            }
            hasMDMKey = hasMDMKey || key.isMDM
            checkTooling(member, key)
            if member.value.isNull {
                report(.customValueNull, MessageText.quoting("custom key \"", member.keyNode.index, "\" is null; custom values are dictionaries, arrays, strings, numbers or Booleans: omit the key instead"), at: member.value)
            }
            guard checkOutside else { continue }
            if let apsKey = key.apsKey {
                // The app's own data under an Apple name: a value the Apple key could not
                // hold, or a Live Activity key on a push that is not a Live Activity.
                let fits = Self.expectedKinds(apsKey).kinds.contains(member.value.kind)
                let liveActivityElsewhere = apsKey.isLiveActivityKey && pushType.map { $0 != .liveactivity } == true
                if fits && !liveActivityElsewhere {
                    report(.appleKeyOutsideAPS, MessageText.quoting("\"", member.keyNode.index, "\" is an aps key; beside aps the system ignores it: move it into aps"), atKeyOf: member)
                }
            } else if let alertKey = key.alertKey, Self.alertOnlyKeys.contains(alertKey) {
                report(.appleKeyOutsideAPS, MessageText.quoting("\"", member.keyNode.index, "\" is an alert key; beside aps the system ignores it: move it into the \"alert\" dictionary inside aps"), atKeyOf: member)
            } else if key.mayBeRespelled, let meant = KeySuggester.sameShape(member.key, among: KeySuggester.apsKeys) {
                report(.appleKeyOutsideAPS, "\"\(member.key)\" beside aps does nothing (Firebase's spelling); APNs reads \"\(meant)\" inside aps", atKeyOf: member)
            }
        }
        indexPayload(lastAPS: apsValue)
        guard let apsValue else {
            let needsAPS = pushType.map { Self.typesNeedingAPS.contains($0) } ?? (context.pushType == nil)
            if needsAPS {
                let near = root.members.first { ($0.key.lowercased() == "aps" || $0.key.lowercased() == "\"aps\"") }
                let hint = near.map { "; \"\($0.key)\" is not \"aps\": keys are case-sensitive" } ?? ""
                let forType = pushType.map { " for \($0.rawValue) pushes" } ?? ""
                report(.apsMissing, "the payload has no \"aps\" dictionary\(forType)\(hint)", at: root)
            }
            return
        }
        guard apsValue.kind == .object else {
            report(.apsNotObject, "\"aps\" is \(apsValue.kind); it must be a dictionary", at: apsValue)
            return
        }
        let isMDM = pushType == .mdm || hasMDMKey
        // Push types that may do without aps wake their extension or app whatever it holds.
        let needsContent = pushType.map { Self.typesNeedingAPS.contains($0) } ?? true
        if apsValue.count == 0, !isMDM, needsContent {
            report(.apsEmpty, "\"aps\" is empty: nothing to show, play, badge or wake", at: apsValue)
        }
    }

    /// Reports the later of every pair of equal keys, in every object of the document, and notes
    /// the values they hide (see ``hiddenRanges``).
    mutating func checkDuplicateKeys(_ document: JSONDocument) {
        let repeated = document.repeatedKeys()
        guard !repeated.isEmpty else { return }
        hiddenRanges = document.hiddenRanges(of: repeated)
        guard isActive(.duplicateKey) else { return }
        for key in repeated.laterKeys {
            guard let range = document.keyByteRange(at: Int(key)) else { continue }
            report(.duplicateKey, MessageText.quoting("the key \"", Int(key), "\" appears more than once in this object; readers disagree on which value wins"),
                   at: .key(value: Int(key) + 1, offset: range.lowerBound))
        }
    }
}
