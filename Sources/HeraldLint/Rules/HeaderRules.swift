import HeraldJSON
import HeraldPayload
import HeraldProtocol

private let token32 = String(repeating: "a1", count: 32)

extension LintRule {
    static let pushTypeInvalid = LintRule(
        id: .pushTypeInvalid, severity: .error, category: .headers,
        summary: "apns-push-type is not one of the eleven push types.",
        rationale: "APNs answers \(APNsReason.invalidPushType.statusAndReason) for a value outside \(PushType.allCases.map(\.rawValue).joined(separator: ", ")) (Apple's \(AppleDocument.sendingNotificationRequests)). Values are lowercase.",
        apnsReason: .invalidPushType,
        triggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, pushType: "Alert"), LintExample.headers(#"{"aps":{"alert":"x"}}"#, pushType: "notification")],
        nonTriggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, pushType: "alert")])

    static let pushTypeMissing = LintRule(
        id: .pushTypeMissing, severity: .warning, category: .headers,
        summary: "The request has no apns-push-type.",
        rationale: "\(APNsHeader.pushType) is required for watchOS 6 and later and Apple asks for it on every push; without it APNs \"may return an error, delay, or drop\" the notification (Apple's \(AppleDocument.sendingNotificationRequests)).",
        triggering: [LintExample.request(#"{"aps":{"alert":"x"}}"#, topic: "com.example.app")],
        nonTriggering: [LintExample.request(#"{"aps":{"alert":"x"}}"#, pushType: "alert", topic: "com.example.app"), LintExample(#"{"aps":{"alert":"x"}}"#)])

    static let topicMissing = LintRule(
        id: .topicMissing, severity: .warning, category: .headers,
        summary: "The request has no apns-topic.",
        rationale: "\(APNsHeader.topic) is required with token authentication (\(APNsReason.missingTopic.statusAndReason)) and may be left out only with a certificate for a single topic (Apple's \(AppleDocument.sendingNotificationRequests)).",
        triggering: [LintExample.request(#"{"aps":{"alert":"x"}}"#, pushType: "alert")],
        nonTriggering: [LintExample.request(#"{"aps":{"alert":"x"}}"#, pushType: "alert", topic: "com.example.app")])

    static let topicMismatch = LintRule(
        id: .topicMismatch, severity: .error, category: .headers,
        summary: "apns-topic does not end with the suffix the push type needs.",
        rationale: "Each push type has its topic: the bundle ID for alert and background, plus \(PushType.allCases.compactMap(\.topicSuffix).filter { !$0.isEmpty }.joined(separator: ", ")) for the others (Apple's \(AppleDocument.sendingNotificationRequests)). Apple does not document what APNs answers for a mismatch; Herald's mock answers \(APNsReason.deviceTokenNotForTopic) by default.",
        apnsReason: .deviceTokenNotForTopic,
        triggering: [
            LintExample.headers(#"{"aps":{}}"#, pushType: "voip", topic: "com.example.app"),
            LintExample.headers(#"{"aps":{"alert":"x"}}"#, pushType: "alert", topic: "com.example.app.voip"),
            LintExample.headers(#"{"aps":{"event":"update","timestamp":1,"content-state":{}}}"#, pushType: "liveactivity", topic: "com.example.app.push-type.widgets"),
        ],
        nonTriggering: [
            LintExample.headers(#"{"aps":{}}"#, pushType: "voip", topic: "com.example.app.voip"),
            LintExample.headers(#"{"aps":{"content-changed":true}}"#, pushType: "widgets", topic: "com.example.app.push-type.widgets"),
        ])

    static let priorityInvalid = LintRule(
        id: .priorityInvalid, severity: .error, category: .headers,
        summary: "apns-priority is not 10, 5 or 1.",
        rationale: "Only \(PushPriority.immediate) (immediately), \(PushPriority.conservePower) (power considerations) and \(PushPriority.lowPower) (never wake the device) exist; anything else gives \(APNsReason.badPriority.statusAndReason) (Apple's \(AppleDocument.sendingNotificationRequests)).",
        apnsReason: .badPriority,
        triggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, priority: "high"), LintExample.headers(#"{"aps":{"alert":"x"}}"#, priority: "7")],
        nonTriggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, priority: "10")])

    static let collapseIDTooLong = LintRule(
        id: .collapseIDTooLong, severity: .error, category: .headers,
        summary: "apns-collapse-id is longer than 64 bytes.",
        rationale: "The identifier \"must not exceed \(CollapseID.maximumByteCount) bytes\"; longer gives \(APNsReason.badCollapseID.statusAndReason) (Apple's \(AppleDocument.sendingNotificationRequests)). Bytes, not characters: 22 Hangul syllables are 66 bytes.",
        apnsReason: .badCollapseID,
        triggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, collapseID: String(repeating: "안", count: 22))],
        nonTriggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, collapseID: "score-update")])

    static let apnsIDInvalid = LintRule(
        id: .apnsIDInvalid, severity: .error, category: .headers,
        summary: "apns-id is not a UUID in 8-4-4-4-12 form.",
        rationale: "\(APNsHeader.id) is a canonical UUID; an invalid one gives \(APNsReason.badMessageID.statusAndReason) (Apple's \(AppleDocument.sendingNotificationRequests)).",
        apnsReason: .badMessageID,
        triggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, apnsID: "123e4567e89b12d3a4564266554400a0")],
        nonTriggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, apnsID: "123e4567-e89b-12d3-a456-4266554400a0")])

    static let apnsIDNotLowercase = LintRule(
        id: .apnsIDNotLowercase, severity: .warning, category: .headers,
        summary: "apns-id has uppercase hex digits.",
        rationale: "Apple specifies 32 lowercase hexadecimal digits (\(AppleDocument.sendingNotificationRequests)); whether APNs rejects uppercase is not documented. Send lowercase.",
        triggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, apnsID: "123E4567-E89B-12D3-A456-4266554400A0")],
        nonTriggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, apnsID: "123e4567-e89b-12d3-a456-4266554400a0")])

    static let expirationInvalid = LintRule(
        id: .expirationInvalid, severity: .error, category: .headers,
        summary: "apns-expiration is not a whole number of UNIX seconds.",
        rationale: "\(APNsHeader.expiration) is a UNIX epoch in seconds, or 0; anything else gives \(APNsReason.badExpirationDate.statusAndReason) (Apple's \(AppleDocument.sendingNotificationRequests)).",
        apnsReason: .badExpirationDate,
        triggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, expiration: "2026-12-01T00:00:00Z"), LintExample.headers(#"{"aps":{"alert":"x"}}"#, expiration: "-1")],
        nonTriggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, expiration: "0"), LintExample.headers(#"{"aps":{"alert":"x"}}"#, expiration: "1798761600")])

    static let expirationInMilliseconds = LintRule(
        id: .expirationInMilliseconds, severity: .warning, category: .headers,
        summary: "apns-expiration looks like milliseconds.",
        rationale: "\(APNsHeader.expiration) is in seconds (Apple's \(AppleDocument.sendingNotificationRequests)); a value above 10^11 lies in the year 5138 as seconds.",
        triggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, expiration: "1798761600000")],
        nonTriggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, expiration: "1798761600")])

    static let deviceTokenInvalid = LintRule(
        id: .deviceTokenInvalid, severity: .error, category: .headers,
        summary: "The device token is not an even number of hex digits for 32 to 100 bytes.",
        rationale: "Tokens are hex-encoded bytes in the path; a malformed one gives \(APNsReason.badDeviceToken.statusAndReason) (Apple's \(AppleDocument.handlingNotificationResponses)).",
        apnsReason: .badDeviceToken,
        triggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, deviceToken: "<a1b2 c3d4>"), LintExample.headers(#"{"aps":{"alert":"x"}}"#, deviceToken: String(token32.dropLast()))],
        nonTriggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, deviceToken: token32)])

    static let deviceTokenUnusualLength = LintRule(
        id: .deviceTokenUnusualLength, severity: .info, category: .headers,
        summary: "The device token is not 32 bytes.",
        rationale: "Every token issued so far is \(DeviceToken.conventionalByteCount) bytes (64 hex digits); Apple says \"don't make assumptions about device token size\" (\(AppleDocument.sendingNotificationRequests)), so Herald accepts \(DeviceToken.acceptedByteCounts.lowerBound) to \(DeviceToken.acceptedByteCounts.upperBound) bytes and notes the unusual ones.",
        triggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, deviceToken: token32 + "a1b2")],
        nonTriggering: [LintExample.headers(#"{"aps":{"alert":"x"}}"#, deviceToken: token32)])

    static let alertPushWithoutContent = LintRule(
        id: .alertPushWithoutContent, severity: .warning, category: .headers,
        summary: "An alert push has nothing to show, play or badge (an empty alert shows nothing).",
        rationale: "Use the alert push type for notifications that display an alert, play a sound or badge the app's icon (Apple's \(AppleDocument.sendingNotificationRequests)). An alert that is an empty string, or a dictionary with no title, subtitle or body (nor their loc-keys), has nothing to display. A silent update is a background push.",
        triggering: [
            LintExample.headers(#"{"aps":{"content-available":1}}"#, pushType: "alert"), LintExample.headers(#"{"aps":{"category":"X"}}"#, pushType: "alert"),
            LintExample.headers(#"{"aps":{"alert":""}}"#, pushType: "alert"), LintExample.headers(#"{"aps":{"alert":"","mutable-content":1}}"#, pushType: "alert"),
        ],
        nonTriggering: [
            LintExample.headers(#"{"aps":{"badge":1}}"#, pushType: "alert"), LintExample.headers(#"{"aps":{"alert":{"loc-key":"GAME_INVITE"}}}"#, pushType: "alert"),
        ])

    static let mutableContentWithoutAlert = LintRule(
        id: .mutableContentWithoutAlert, severity: .warning, category: .headers,
        summary: "mutable-content is 1 but there is no alert to display, so the notification service extension does not run.",
        rationale: "The system runs a notification service extension only when mutable-content is 1 and the notification displays an alert (Apple's \(AppleDocument.modifyingNotificationContent)); a sound or a badge alone, or an empty alert, does not start it, and whatever it would have added (an image, decrypted text) never appears.",
        triggering: [
            LintExample.headers(#"{"aps":{"sound":"default","mutable-content":1}}"#, pushType: "alert"),
            LintExample(#"{"aps":{"alert":{"title":""},"badge":2,"mutable-content":1}}"#),
        ],
        nonTriggering: [
            LintExample.headers(#"{"aps":{"alert":{"title":"Photo from Ann"},"mutable-content":1}}"#, pushType: "alert"),
            LintExample.headers(#"{"aps":{"alert":{"loc-key":"ENCRYPTED"},"mutable-content":1}}"#, pushType: "alert"),
        ])

    static let liveActivityIncomplete = LintRule(
        id: .liveActivityIncomplete, severity: .error, category: .headers,
        summary: "A Live Activity push lacks event or timestamp, or an update lacks content-state (also: Live Activity keys with no event and no push type).",
        rationale: "Every Live Activity push carries event and timestamp; an update carries the new content-state (\(AppleDocument.generatingARemoteNotification), Table 1; \(AppleDocument.liveActivityPushes)). A payload with Live Activity keys but no event, linted without headers, is such a push missing its event.",
        triggering: [
            LintExample.headers(#"{"aps":{"event":"update","timestamp":1700000000}}"#, pushType: "liveactivity"),
            LintExample.headers(#"{"aps":{"content-state":{}}}"#, pushType: "liveactivity"),
            LintExample(#"{"aps":{"dismissal-date":1700003600}}"#),
        ],
        nonTriggering: [LintExample.headers(#"{"aps":{"event":"update","timestamp":1700000000,"content-state":{"score":1}}}"#, pushType: "liveactivity")])

    static let liveActivityStartIncomplete = LintRule(
        id: .liveActivityStartIncomplete, severity: .error, category: .headers,
        summary: "A Live Activity start lacks attributes-type, attributes or alert.",
        rationale: "Starting a Live Activity remotely needs attributes-type (the ActivityAttributes type name), attributes, and an alert (\(AppleDocument.liveActivityPushes)).",
        triggering: [LintExample.headers(#"{"aps":{"event":"start","timestamp":1700000000,"content-state":{}}}"#, pushType: "liveactivity")],
        nonTriggering: [LintExample.headers(#"{"aps":{"event":"start","timestamp":1700000000,"content-state":{},"attributes-type":"GameAttributes","attributes":{"home":"A"},"alert":{"title":"Kick-off"}}}"#, pushType: "liveactivity")])

    static let liveActivityStartKeysLater = LintRule(
        id: .liveActivityStartKeysLater, severity: .warning, category: .headers,
        summary: "A Live Activity update or end carries keys only a start uses: attributes-type, attributes, input-push-token, input-push-channel.",
        rationale: "attributes-type and attributes describe the activity being started, input-push-token asks the started activity for its update token, and input-push-channel subscribes it to a broadcast channel; an update or end cannot change any of them and they are ignored (\(AppleDocument.liveActivityPushes); \(AppleDocument.broadcastPushes)). Sending them costs bytes and suggests a start payload reused by mistake.",
        triggering: [
            LintExample.headers(#"{"aps":{"event":"update","timestamp":1700000000,"content-state":{},"attributes-type":"GameAttributes","attributes":{"home":"A"}}}"#, pushType: "liveactivity"),
            LintExample.headers(#"{"aps":{"event":"update","timestamp":1700000000,"content-state":{},"input-push-channel":"dHVlc2RheQ=="}}"#, pushType: "liveactivity"),
        ],
        nonTriggering: [LintExample.headers(#"{"aps":{"event":"start","timestamp":1700000000,"content-state":{},"attributes-type":"GameAttributes","attributes":{"home":"A"},"alert":{"title":"Kick-off"}}}"#, pushType: "liveactivity")])

    static let liveActivityKeysOnOtherPushType = LintRule(
        id: .liveActivityKeysOnOtherPushType, severity: .warning, category: .headers,
        summary: "Live Activity keys are sent with a push type other than liveactivity.",
        rationale: "event, timestamp, content-state and the other Live Activity keys only reach an activity through push type \(PushType.liveactivity) and the \(PushType.liveactivity.topicSuffix ?? "") topic (\(AppleDocument.liveActivityPushes)).",
        triggering: [LintExample.headers(#"{"aps":{"alert":"Goal!","event":"update","timestamp":1,"content-state":{}}}"#, pushType: "alert")],
        nonTriggering: [LintExample.headers(#"{"aps":{"event":"update","timestamp":1,"content-state":{}}}"#, pushType: "liveactivity")])

    static let liveActivityAPSKeyIgnored = LintRule(
        id: .liveActivityAPSKeyIgnored, severity: .warning, category: .headers,
        summary: "A Live Activity push carries badge, sound, category, thread-id or another notification key directly in aps, where the activity ignores it.",
        rationale: "A Live Activity push reads the activity's keys and an optional alert whose title, body and sound are inside the alert dictionary (Apple's \(AppleDocument.liveActivityPushes)); badge, sound, category, thread-id, mutable-content and the other notification keys directly in aps do nothing. To play a sound, put it inside alert; an activity cannot badge the app's icon.",
        triggering: [
            LintExample.headers(#"{"aps":{"event":"update","timestamp":1700000000,"content-state":{"score":1},"badge":1,"sound":"default"}}"#, pushType: "liveactivity"),
        ],
        nonTriggering: [
            LintExample.headers(#"{"aps":{"event":"update","timestamp":1700000000,"content-state":{"score":1},"alert":{"title":"Goal","body":"1-0","sound":"default"}}}"#, pushType: "liveactivity"),
        ])

    static let dismissalDateOutsideEnd = LintRule(
        id: .dismissalDateOutsideEnd, severity: .warning, category: .headers,
        summary: "A Live Activity start or update carries dismissal-date, which only an end uses.",
        rationale: "dismissal-date says when an ended Live Activity leaves the Lock Screen; it is read with event end (\(AppleDocument.liveActivityPushes)). On a start or an update it is ignored: the activity stays until an end arrives. To end it, send event end with the dismissal-date.",
        triggering: [LintExample.headers(#"{"aps":{"event":"update","timestamp":1700000000,"content-state":{},"dismissal-date":1700003600}}"#, pushType: "liveactivity")],
        nonTriggering: [LintExample.headers(#"{"aps":{"event":"end","timestamp":1700000000,"content-state":{},"dismissal-date":1700003600}}"#, pushType: "liveactivity")])

    static let broadcastCannotStart = LintRule(
        id: .broadcastCannotStart, severity: .error, category: .headers,
        summary: "A broadcast push tries to start a Live Activity.",
        rationale: "Broadcast channels carry update and end only; they cannot start a Live Activity (\(AppleDocument.liveActivityPushes); \(AppleDocument.broadcastPushes)).",
        triggering: [LintExample.headers(#"{"aps":{"event":"start","timestamp":1,"content-state":{},"attributes-type":"A","attributes":{},"alert":{"title":"x"}}}"#, pushType: "liveactivity", endpoint: .broadcast)],
        nonTriggering: [LintExample.headers(#"{"aps":{"event":"update","timestamp":1,"content-state":{}}}"#, pushType: "liveactivity", endpoint: .broadcast)])

    static let contentChangedMissing = LintRule(
        id: .contentChangedMissing, severity: .error, category: .headers,
        summary: "A widgets or controls push lacks \"content-changed\": true.",
        rationale: "The widget and control reload payload is {\"aps\":{\"\(APSKey.contentChanged)\":true}} (\(AppleDocument.widgetPushes); \(AppleDocument.controlPushes)).",
        triggering: [LintExample.headers(#"{"aps":{}}"#, pushType: "widgets")],
        nonTriggering: [LintExample.headers(#"{"aps":{"content-changed":true}}"#, pushType: "controls")])
}

extension LintPass {
    /// The header rules that need no body.
    mutating func checkHeaders() {
        if let value = context.pushType, PushType(rawValue: value) == nil {
            let suggestion = KeySuggester.suggestion(for: value.lowercased(), among: KeySuggester.pushTypes)
                .map { "; did you mean \"\($0)\"?" } ?? ""
            report(.pushTypeInvalid, "apns-push-type \"\(value)\" is not a push type\(suggestion) (expected one of \(PushType.allCases.map(\.rawValue).joined(separator: ", ")))", at: .header(APNsHeader.pushType))
        }
        if let value = context.priority, PushPriority(headerValue: value) == nil {
            report(.priorityInvalid, "\(APNsHeader.priority) \"\(value)\" is not \(PushPriority.validValues)", at: .header(APNsHeader.priority))
        }
        if let value = context.collapseID, case .tooLong(let size)? = Result(catching: { () throws(CollapseIDError) in try CollapseID(value) }).failure {
            report(.collapseIDTooLong, "apns-collapse-id is \(size) bytes, over the \(CollapseID.maximumByteCount)-byte limit", at: .header(APNsHeader.collapseID))
        }
        if let value = context.apnsID {
            do throws(APNsIDError) {
                let id = try APNsID(parsing: value)
                if id.uuidString != value {
                    report(.apnsIDNotLowercase, "apns-id \"\(value)\" has uppercase digits; send \"\(id.uuidString)\"", at: .header(APNsHeader.id))
                }
            } catch {
                report(.apnsIDInvalid, "\(error)", at: .header(APNsHeader.id))
            }
        }
        if let value = context.expiration {
            do throws(ExpirationError) {
                let expiration = try Expiration(headerValue: value)
                if expiration.looksLikeMilliseconds {
                    report(.expirationInMilliseconds, "apns-expiration \(value) is in the year \(Self.year(ofEpochSeconds: Double(expiration.epochSeconds))) as seconds; it looks like milliseconds (divide by 1000)", at: .header(APNsHeader.expiration))
                }
            } catch {
                report(.expirationInvalid, "\(error)", at: .header(APNsHeader.expiration))
            }
        }
        if let value = context.deviceToken {
            if let problem = DeviceToken.problem(with: value) {
                report(.deviceTokenInvalid, "\(problem)", at: .header("device-token"))
            } else if value.utf8.count != DeviceToken.conventionalByteCount * 2 {
                report(.deviceTokenUnusualLength, "the device token is \(value.utf8.count / 2) bytes; tokens so far are \(DeviceToken.conventionalByteCount)", at: .header("device-token"))
            }
        }
        if let topic = context.topic, let pushType {
            checkTopic(topic, for: pushType)
        }
        if context.isRequest {
            if context.topic == nil {
                report(.topicMissing, "the request has no \(APNsHeader.topic); token authentication requires it (\(APNsReason.missingTopic.statusAndReason))", at: .header(APNsHeader.topic))
            }
        }
    }

    mutating func checkTopic(_ topic: String, for pushType: PushType) {
        guard let suffix = pushType.topicSuffix else { return }
        let implied = PushType.implied(byTopic: topic)
        if suffix.isEmpty {
            if let implied {
                report(.topicMismatch, "apns-topic \"\(topic)\" is a \(implied.rawValue) topic, but the push type is \(pushType.rawValue); \(pushType.rawValue) pushes go to the bare bundle ID", at: .header(APNsHeader.topic))
            }
        } else if !topic.hasSuffix(suffix) || topic.utf8.count <= suffix.utf8.count || (implied != nil && implied != pushType) {
            report(.topicMismatch, "apns-topic \"\(topic)\" does not end with \"\(suffix)\", which \(pushType.rawValue) pushes need (for example \"com.example.app\(suffix)\")", at: .header(APNsHeader.topic))
        }
    }

    /// Rules that compare the push type (or its absence) with the payload.
    mutating func checkPushTypeAgainstPayload() {
        if context.isRequest, context.pushType == nil {
            let inferred = inferredPushType
            report(.pushTypeMissing, "the request has no apns-push-type; this payload looks like a \(inferred.rawValue) push", at: .header(APNsHeader.pushType))
        }
        if context.pushType == nil, let aps, !apsValues.has(.event) {
            // Live Activity keys with nothing saying which event they are for.
            let keys = APSKey.keys.filter { $0.isLiveActivityKey && apsValues.has($0) }
            if !keys.isEmpty {
                let names = keys.map { "\"\($0)\"" }.joined(separator: ", ")
                report(.liveActivityIncomplete, "\(names) \(keys.count == 1 ? "is a Live Activity key" : "are Live Activity keys"), but aps has no \"event\" (start, update or end) and the push type is not liveactivity", at: aps)
            }
        }
        if pushType == nil || pushType == .alert, let node = apsValues[.mutableContent], node.number?.integralValue == 1, !displaysAlert,
           apsValues.has(.sound) || apsValues.has(.badge) || (pushType == nil && apsValues.has(.alert)) {
            // (With nothing at all to show, alert-push-without-content speaks.)
            report(.mutableContentWithoutAlert, "\"mutable-content\" is 1 but no alert title, subtitle or body is displayed, so the notification service extension does not run", at: node)
        }
        guard let pushType, let aps else { return }
        switch pushType {
        case .alert:
            if !hasVisibleContent {
                let hint = wakesApp ? "; a silent update is a background push (priority 5)" : ""
                report(.alertPushWithoutContent, "an alert push with no alert, sound or badge shows nothing\(hint)", at: aps)
            } else if !displaysAlert && !apsValues.has(.sound) && !apsValues.has(.badge), let alert = apsValues[.alert] {
                report(.alertPushWithoutContent, "the alert has no title, subtitle or body, and there is no sound or badge: the push shows nothing", at: alert)
            }
        case .liveactivity:
            let ignored = APSKey.keys.filter { !$0.isLiveActivityKey && !Self.liveActivityReads.contains($0) && apsValues.has($0) }
            if let first = ignored.first, let node = apsValues[first] {
                let names = ignored.map { "\"\($0)\"" }.joined(separator: ", ")
                let sound = ignored.contains(.sound) ? "; put \"sound\" inside \"alert\" to play it" : ""
                report(.liveActivityAPSKeyIgnored, "\(names) directly in aps \(ignored.count == 1 ? "does" : "do") nothing on a Live Activity push\(sound)", at: node)
            }
            var missing: [String] = []
            if !apsValues.has(.event) { missing.append("\"event\"") }
            if !apsValues.has(.timestamp) { missing.append("\"timestamp\"") }
            let event = apsValues[.event]?.stringValue
            if event == LiveActivityEvent.update.rawValue, !apsValues.has(.contentState) { missing.append("\"content-state\"") }
            if !missing.isEmpty {
                report(.liveActivityIncomplete, "a Live Activity push needs \(missing.joined(separator: " and ")) in aps", at: aps)
            }
            if let event, event != LiveActivityEvent.start.rawValue {
                let startOnly = [APSKey.attributesType, .attributes, .inputPushToken, .inputPushChannel].filter { apsValues.has($0) }
                if let first = startOnly.first, let node = apsValues[first] {
                    let names = startOnly.map { "\"\($0)\"" }.joined(separator: " and ")
                    report(.liveActivityStartKeysLater, "\(names) only \(startOnly.count == 1 ? "applies" : "apply") to event start; on \(event) \(startOnly.count == 1 ? "it is" : "they are") ignored", at: node)
                }
            }
            if let event, event != LiveActivityEvent.end.rawValue, let node = apsValues[.dismissalDate] {
                report(.dismissalDateOutsideEnd, "\"dismissal-date\" applies to event end; on \(event) it is ignored", at: node)
            }
            if event == LiveActivityEvent.start.rawValue {
                let needed: [(APSKey, String)] = [(.attributesType, "\"attributes-type\""), (.attributes, "\"attributes\""), (.alert, "\"alert\"")]
                let absent = needed.filter { !apsValues.has($0.0) }.map(\.1)
                if !absent.isEmpty {
                    report(.liveActivityStartIncomplete, "starting a Live Activity needs \(absent.joined(separator: ", ")) in aps", at: aps)
                }
                if context.endpoint == .broadcast, let node = apsValues[.event] {
                    report(.broadcastCannotStart, "broadcast channels carry update and end only; start the activity with a push-to-start token", at: node)
                }
            }
        case .widgets, .controls:
            if apsValues[.contentChanged]?.boolValue != true {
                report(.contentChangedMissing, "a \(pushType.rawValue) push needs \"content-changed\": true in aps", at: aps)
            }
        default:
            break
        }
        guard pushType != .liveactivity else { return }
        let liveActivityKeys = APSKey.keys.filter { $0.isLiveActivityKey && apsValues.has($0) }
        if let first = liveActivityKeys.first, let node = apsValues[first] {
            let names = liveActivityKeys.map { "\"\($0)\"" }.joined(separator: ", ")
            report(.liveActivityKeysOnOtherPushType, "\(names) only \(liveActivityKeys.count == 1 ? "reaches" : "reach") a Live Activity with push type liveactivity, not \(pushType.rawValue)", at: node)
        }
    }

    /// The aps keys a Live Activity push reads besides its own (``APSKey/isLiveActivityKey``).
    static let liveActivityReads: Set<APSKey> = [.alert, .relevanceScore, .contentAvailable]

    /// Whether the alert has something to display: a non-empty string, or a dictionary with a
    /// title, subtitle or body (or their loc-keys).
    var displaysAlert: Bool {
        guard let alert = apsValues[.alert] else { return false }
        if let text = alert.stringValue { return !text.isEmpty }
        guard alert.kind == .object else { return false }
        return alertValues.has(.title) && alertValues[.title]?.stringValue != ""
            || alertValues.has(.subtitle) && alertValues[.subtitle]?.stringValue != ""
            || alertValues.has(.body) && alertValues[.body]?.stringValue != ""
            || alertValues.has(.locKey) || alertValues.has(.titleLocKey) || alertValues.has(.subtitleLocKey)
    }

    /// The push type the payload looks like, for suggestions.
    var inferredPushType: PushType {
        if apsValues.has(.event) || apsValues.has(.contentState) { return .liveactivity }
        if apsValues.has(.contentChanged) { return .widgets }
        if wakesApp && !hasVisibleContent { return .background }
        return .alert
    }
}

extension Result {
    /// The error, if this is a failure.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
