import HeraldJSON
import HeraldPayload
import HeraldProtocol

extension LintRule {
    static let keyType = LintRule(
        id: .keyType, severity: .error, category: .keys,
        summary: "An Apple key has a value of the wrong JSON type.",
        rationale: "Each key has one type in Apple's tables (\(AppleDocument.generatingARemoteNotification), Tables 1 to 3): alert is a string or dictionary, badge a number, sound a string or dictionary, content-state a dictionary, and so on. A value of another type is ignored or breaks decoding on the device.",
        triggering: [
            LintExample(#"{"aps":{"badge":"5"}}"#),
            LintExample(#"{"aps":{"alert":{"title":7}}}"#),
            LintExample(#"{"aps":{"sound":{"critical":1,"volume":"loud"}}}"#),
            LintExample(#"{"aps":{"content-state":[1,2]}}"#),
            LintExample(#"{"aps":{"alert":"x","url-args":"boarding"}}"#),
        ],
        nonTriggering: [
            LintExample(#"{"aps":{"badge":5,"sound":"default","alert":{"title":"t","body":"b"}}}"#),
            LintExample.headers(#"{"aps":{"event":"start","timestamp":1,"alert":{"title":{"loc-key":"%@ joined","loc-args":["Ann"]}}}}"#, pushType: "liveactivity"),
            LintExample(#"{"aps":{"mutable-content":false,"alert":"x"}}"#),
        ])

    static let badgeInvalid = LintRule(
        id: .badgeInvalid, severity: .error, category: .keys,
        summary: "badge is not a whole number from 0 up.",
        rationale: "badge is \"the number to display in a badge on your app's icon\"; 0 removes it (\(AppleDocument.generatingARemoteNotification), Table 1). Negative or fractional numbers have no badge to show.",
        triggering: [LintExample(#"{"aps":{"badge":-1}}"#), LintExample(#"{"aps":{"badge":2.5}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"badge":0}}"#), LintExample(#"{"aps":{"badge":99}}"#)])

    static let flagNotOne = LintRule(
        id: .flagNotOne, severity: .warning, category: .keys,
        summary: "content-available, mutable-content or input-push-token is not the number 1 (or content-changed is not true).",
        rationale: "These flags take effect with the value 1 (\(AppleDocument.generatingARemoteNotification), Table 1; \(AppleDocument.liveActivityPushes)); content-changed with true (\(AppleDocument.widgetPushes)). 0 and false do nothing: omit the key instead. true is read as 1 by the device, but Apple documents the number.",
        triggering: [
            LintExample(#"{"aps":{"content-available":0}}"#), LintExample(#"{"aps":{"mutable-content":2,"alert":"x"}}"#),
            LintExample(#"{"aps":{"content-changed":false}}"#), LintExample(#"{"aps":{"content-available":false}}"#),
            LintExample(#"{"aps":{"mutable-content":true,"alert":"x"}}"#),
        ],
        nonTriggering: [LintExample(#"{"aps":{"content-available":1}}"#), LintExample(#"{"aps":{"content-changed":true}}"#)])

    static let soundInvalid = LintRule(
        id: .soundInvalid, severity: .error, category: .keys,
        summary: "The sound is empty, or the critical-alert dictionary has critical other than 0 or 1 or a volume outside 0 to 1.",
        rationale: "sound names a file or \"\(Sound.defaultName)\"; the critical dictionary takes critical 1 and a volume between 0 (silent) and 1 (full volume) (\(AppleDocument.generatingARemoteNotification), Table 3).",
        triggering: [LintExample(#"{"aps":{"sound":""}}"#), LintExample(#"{"aps":{"sound":{"critical":1,"name":"a.caf","volume":1.5}}}"#), LintExample(#"{"aps":{"sound":{"critical":2,"name":"a.caf"}}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"sound":{"critical":1,"name":"default","volume":0.8}}}"#), LintExample(#"{"aps":{"sound":"chime.aiff"}}"#)])

    static let interruptionLevelInvalid = LintRule(
        id: .interruptionLevelInvalid, severity: .error, category: .keys,
        summary: "interruption-level is not passive, active, time-sensitive or critical.",
        rationale: "The four values correspond to UNNotificationInterruptionLevel (\(AppleDocument.generatingARemoteNotification), Table 1).",
        triggering: [LintExample(#"{"aps":{"alert":"x","interruption-level":"urgent"}}"#), LintExample(#"{"aps":{"alert":"x","interruption-level":"timeSensitive"}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":"x","interruption-level":"time-sensitive"}}"#)])

    static let relevanceScoreRange = LintRule(
        id: .relevanceScoreRange, severity: .warning, category: .keys,
        summary: "relevance-score is outside 0 to 1 on a notification that is not a Live Activity update.",
        rationale: "relevance-score is \"a number between 0 and 1\"; only Live Activity updates may use any number (\(AppleDocument.generatingARemoteNotification), Table 1).",
        triggering: [LintExample(#"{"aps":{"alert":"x","relevance-score":75}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":"x","relevance-score":0.75}}"#), LintExample.headers(#"{"aps":{"event":"update","timestamp":1700000000,"content-state":{},"relevance-score":75}}"#, pushType: "liveactivity")])

    static let liveActivityEventInvalid = LintRule(
        id: .liveActivityEventInvalid, severity: .error, category: .keys,
        summary: "event is not start, update or end.",
        rationale: "\"To start the Live Activity, use start. To update the Live Activity, use update. To end the Live Activity, use end\" (\(AppleDocument.generatingARemoteNotification), Table 1).",
        triggering: [LintExample(#"{"aps":{"event":"stop","timestamp":1700000000}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"event":"end","timestamp":1700000000}}"#)])

    static let dateInMilliseconds = LintRule(
        id: .dateInMilliseconds, severity: .warning, category: .keys,
        summary: "timestamp, stale-date or dismissal-date looks like milliseconds.",
        rationale: "These are UNIX times in seconds (\(AppleDocument.generatingARemoteNotification), Table 1; \(AppleDocument.liveActivityPushes)). A value above 10^11 is in the year 5138 as seconds, so it is almost certainly milliseconds.",
        triggering: [LintExample(#"{"aps":{"event":"update","timestamp":1700000000000,"content-state":{}}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"event":"update","timestamp":1700000000,"content-state":{}}}"#)])

    static let dateImplausible = LintRule(
        id: .dateImplausible, severity: .warning, category: .keys,
        summary: "A Live Activity timestamp or stale-date before Live Activities existed (0, or before 2022), or a date after 2100.",
        rationale: "ActivityKit ignores an update whose timestamp is older than the one it holds, so 0 or a date before Live Activities existed (iOS 16.1, 2022) makes every later real update look newer and this one lost; a stale-date that long past makes the activity stale at once (\(AppleDocument.liveActivityPushes)). A date after 2100 is a unit or arithmetic slip. A dismissal-date in the past is allowed: it removes the activity at once.",
        triggering: [
            LintExample(#"{"aps":{"event":"update","timestamp":0,"content-state":{}}}"#),
            LintExample(#"{"aps":{"event":"update","timestamp":1500000000,"content-state":{}}}"#),
            LintExample(#"{"aps":{"event":"update","timestamp":1700000000,"stale-date":17000000000,"content-state":{}}}"#),
        ],
        nonTriggering: [
            LintExample(#"{"aps":{"event":"update","timestamp":1700000000,"stale-date":1700003600,"content-state":{}}}"#),
            LintExample(#"{"aps":{"event":"end","timestamp":1700000000,"dismissal-date":0,"content-state":{}}}"#),
        ])

    static let unknownAPSKey = LintRule(
        id: .unknownAPSKey, severity: .warning, category: .keys,
        summary: "aps holds a key Apple does not define.",
        rationale: "\"Don't add your own custom keys to the aps dictionary\"; \"add your custom keys as peers of the aps dictionary\" (\(AppleDocument.generatingARemoteNotification)). A custom key inside aps still reaches the app, but a future Apple key of the same name would change what it means; a near miss of an Apple key (content_available, threadId) silently does nothing.",
        triggering: [LintExample(#"{"aps":{"content_available":1}}"#), LintExample(#"{"aps":{"alert":"x","gameID":"1"}}"#), LintExample(#"{"aps":{"alert":"x","apns-priority":5}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"content-available":1},"gameID":"1"}"#), LintExample.headers(#"{"aps":{"alert":{"title":"Boarding","body":"Gate 5","action":"View"},"url-args":["boarding","A5"]}}"#, topic: "web.com.example.airline")])

    static let unknownAlertKey = LintRule(
        id: .unknownAlertKey, severity: .warning, category: .keys,
        summary: "The alert dictionary holds a key Apple does not define.",
        rationale: "The alert dictionary has a fixed set of keys (\(AppleDocument.generatingARemoteNotification), Table 2; the legacy ones of the \(AppleDocument.legacyProgrammingGuide)); others are ignored.",
        triggering: [LintExample(#"{"aps":{"alert":{"titel":"Hi","body":"b"}}}"#), LintExample(#"{"aps":{"alert":{"body":"b","sound":"default"}}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":{"title":"Hi","subtitle":"s","body":"b"}}}"#)])

    static let unknownSoundKey = LintRule(
        id: .unknownSoundKey, severity: .warning, category: .keys,
        summary: "The critical-alert sound dictionary holds a key Apple does not define.",
        rationale: "The sound dictionary has three keys: \(SoundKey.keys.map(\.description).joined(separator: ", ")) (\(AppleDocument.generatingARemoteNotification), Table 3).",
        triggering: [LintExample(#"{"aps":{"sound":{"critical":1,"name":"a.caf","level":1}}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"sound":{"critical":1,"name":"a.caf","volume":1}}}"#)])

    static let legacyAlertKey = LintRule(
        id: .legacyAlertKey, severity: .info, category: .keys,
        summary: "The alert uses a legacy key: action-loc-key, action, summary-arg or summary-arg-count.",
        rationale: "These keys are in the \(AppleDocument.legacyProgrammingGuide) and libraries still send them, but \(AppleDocument.generatingARemoteNotification) no longer lists them: action buttons come from the notification's category, and the summary keys served the notification summaries of iOS 12 to 14. In a Safari website push (topic web.…) action is current: it labels the action button (\(AppleDocument.websitesProgrammingGuide)).",
        triggering: [
            LintExample(#"{"aps":{"alert":{"title":"Game Request","body":"Bob wants to play poker","action-loc-key":"PLAY"}}}"#),
            LintExample(#"{"aps":{"alert":{"body":"3 new photos","summary-arg":"Ann"}}}"#),
        ],
        nonTriggering: [
            LintExample(#"{"aps":{"alert":{"title":"Game Request","body":"Bob wants to play poker"},"category":"GAME_INVITATION"}}"#),
            LintExample.headers(#"{"aps":{"alert":{"title":"Boarding","body":"Gate 5","action":"View"},"url-args":["A5"]}}"#, topic: "web.com.example.airline"),
        ])

    static let customValueNull = LintRule(
        id: .customValueNull, severity: .warning, category: .keys,
        summary: "A custom key beside aps has the value null.",
        rationale: "\"Custom values must use the JSON structured and primitive types: dictionary (object), array, string, number, and Boolean\" (\(AppleDocument.legacyProgrammingGuide)). null is not among them; omit the key.",
        triggering: [LintExample(#"{"aps":{"alert":"x"},"gameID":null}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":"x"},"gameID":"12345678","tags":[null]}"#)])
}

extension LintPass {
    /// What JSON kinds each aps key takes, and how to say it (Apple's “Local and Remote Notification Programming Guide”, Table 5-1, and “Generating a remote notification”, Table 1).
    static func expectedKinds(_ key: APSKey) -> (kinds: [JSONKind], phrase: String) {
        switch key {
        case .alert: ([.string, .object], "a string or a dictionary")
        case .sound: ([.string, .object], "a sound name or a critical-alert dictionary")
        case .badge, .relevanceScore, .timestamp, .staleDate, .dismissalDate: ([.number], "a number")
        // A Boolean flag is read as 0 or 1 by the device: flag-not-one speaks, not key-type.
        case .contentAvailable, .mutableContent, .inputPushToken: ([.number, .bool], "the number 1")
        case .threadID, .category, .targetContentID, .interruptionLevel, .filterCriteria, .event, .attributesType,
             .inputPushChannel: ([.string], "a string")
        case .contentState, .attributes: ([.object], "a dictionary")
        case .contentChanged: ([.bool], "true")
        case .urlArgs: ([.array], "an array of strings")
        }
    }

    /// Whether the payload is a Live Activity push: by header, or by its keys when the push type
    /// is unknown.
    var isLiveActivity: Bool {
        if let pushType { return pushType == .liveactivity }
        return apsValues.has(.event) || apsValues.has(.contentState) || apsValues.has(.attributesType)
    }

    mutating func checkKeys(_ aps: Node) {
        for (position, member) in aps.members.enumerated() {
            guard let key = apsValues.key(ofMember: member, at: position) else {
                reportUnknown(member, rule: .unknownAPSKey, place: .aps, candidates: KeySuggester.apsKeys,
                              alsoCheck: KeySuggester.alertKeys, alsoPlace: "alert")
                continue
            }
            let value = member.value
            let expected = Self.expectedKinds(key)
            guard expected.kinds.contains(value.kind) else {
                report(.keyType, "\"\(key)\" must be \(expected.phrase), found \(value.kind)", at: value)
                continue
            }
            checkValue(of: key, value)
        }
        if let alert { checkAlertKeys(alert) }
        if case .some(let sound) = apsValues[.sound], sound.kind == .object { checkSoundDictionary(sound) }
    }

    mutating func checkValue(of key: APSKey, _ value: Node) {
        switch key {
        case .badge:
            if let number = value.number {
                if let integer = number.integralValue, integer >= 0, integer <= Int64(Int32.max) { break }
                report(.badgeInvalid, "badge \(number.text) is not a whole number from 0 up; 0 clears the badge", at: value)
            }
        case .contentAvailable, .mutableContent, .inputPushToken:
            if let number = value.number, number.integralValue != 1 {
                report(.flagNotOne, "\"\(key)\": \(number.text) has no effect; the value that works is 1 (omit the key otherwise)", at: value)
            } else if value.boolValue == false {
                report(.flagNotOne, "\"\(key)\": false has no effect, like 0; the value that works is 1 (omit the key otherwise)", at: value)
            } else if value.boolValue == true {
                report(.flagNotOne, "\"\(key)\": true is read as 1 by the device, but Apple documents the number: write 1", at: value)
            }
        case .contentChanged:
            if value.boolValue == false {
                report(.flagNotOne, "\"content-changed\": false asks for nothing; the value that works is true", at: value)
            }
        case .sound:
            if let name = value.stringValue, name.isEmpty {
                report(.soundInvalid, "sound is an empty string; name a sound file or \"default\"", at: value)
            }
        case .interruptionLevel:
            if let level = value.stringValue, !InterruptionLevel(rawValue: level).isKnown {
                let suggestion = KeySuggester.suggestion(for: level, among: KeySuggester.interruptionLevels).map { "; did you mean \"\($0)\"?" } ?? ""
                report(.interruptionLevelInvalid, "interruption-level \"\(level)\" is not passive, active, time-sensitive or critical\(suggestion)", at: value)
            }
        case .relevanceScore:
            if let score = value.doubleValue, !(0...1).contains(score), !isLiveActivity {
                report(.relevanceScoreRange, "relevance-score \(value.sourceText) is outside 0 to 1; only Live Activity updates may use other values", at: value)
            }
        case .event:
            if let event = value.stringValue, !LiveActivityEvent(rawValue: event).isKnown {
                report(.liveActivityEventInvalid, "event \"\(event)\" is not start, update or end", at: value)
            }
        case .timestamp, .staleDate, .dismissalDate:
            guard let seconds = value.doubleValue else { break }
            if seconds > Double(Expiration.millisecondsThreshold) {
                report(.dateInMilliseconds, "\"\(key)\": \(value.sourceText) is in \(Self.theYear(ofEpochSeconds: seconds)) as seconds; it looks like milliseconds (divide by 1000)", at: value)
            } else if seconds > Self.latestPlausibleDate {
                report(.dateImplausible, "\"\(key)\": \(value.sourceText) is in \(Self.theYear(ofEpochSeconds: seconds)); check the unit and the arithmetic (UNIX seconds)", at: value)
            } else if key != .dismissalDate, seconds < Self.liveActivitiesIntroduced {
                let when = seconds <= 0 ? "is \(value.sourceText)" : "is in \(Self.year(ofEpochSeconds: seconds))"
                let effect = key == .timestamp ? "every later update looks newer and this one is ignored" : "the activity is stale at once"
                report(.dateImplausible, "\"\(key)\" \(when), before Live Activities existed (2022): \(effect); send the current UNIX time in seconds", at: value)
            }
        default:
            break
        }
    }

    mutating func checkAlertKeys(_ alert: Node) {
        for (position, member) in alert.members.enumerated() {
            guard let key = alertValues.key(ofMember: member, at: position) else {
                reportUnknown(member, rule: .unknownAlertKey, place: .alert,
                              candidates: KeySuggester.alertKeys, alsoCheck: KeySuggester.apsKeys, alsoPlace: "aps")
                continue
            }
            let value = member.value
            if key.isLegacy, !(key == .action && isWebsitePush) {
                let why = key == .summaryArg || key == .summaryArgCount
                    ? "it served the notification summaries of iOS 12 to 14, which later systems do not show"
                    : "action buttons come from the notification's category now"
                report(.legacyAlertKey, "\"\(key)\" is a legacy key, not in Apple's current alert table: \(why)", atKeyOf: member)
            }
            switch key {
            case .title, .subtitle, .body:
                if value.kind == .string { continue }
                if value.kind == .object && isLiveActivity {
                    checkLocalizedText(value)
                } else {
                    let liveActivityNote = value.kind == .object ? " (a {loc-key, loc-args} dictionary is only for Live Activity alerts)" : ""
                    report(.keyType, "\"\(key)\" must be a string, found \(value.kind)\(liveActivityNote)", at: value)
                }
            case .launchImage, .subtitleLocKey, .locKey, .action, .summaryArg:
                if value.kind != .string { report(.keyType, "\"\(key)\" must be a string, found \(value.kind)", at: value) }
            case .titleLocKey, .actionLocKey:
                if value.kind != .string && !value.isNull {
                    report(.keyType, "\"\(key)\" must be a string or null, found \(value.kind)", at: value)
                }
            case .titleLocArgs:
                if value.kind != .array && !value.isNull {
                    report(.keyType, "\"\(key)\" must be an array of strings or null, found \(value.kind)", at: value)
                }
            case .subtitleLocArgs, .locArgs:
                if value.kind != .array { report(.keyType, "\"\(key)\" must be an array of strings, found \(value.kind)", at: value) }
            case .summaryArgCount:
                if value.kind != .number { report(.keyType, "\"\(key)\" must be a number, found \(value.kind)", at: value) }
            case .sound:
                if !isLiveActivity {
                    report(.unknownAlertKey, "\"sound\" belongs in aps, not in the alert dictionary (only Live Activity alerts carry it there)", atKeyOf: member)
                } else if value.kind != .string && value.kind != .object {
                    report(.keyType, "\"sound\" must be a sound name or a critical-alert dictionary, found \(value.kind)", at: value)
                } else if value.kind == .object {
                    checkSoundDictionary(value)
                }
            }
        }
    }

    /// A Live Activity alert's `{"loc-key": …, "loc-args": […]}` title or body.
    mutating func checkLocalizedText(_ text: Node) {
        guard let key = text["loc-key"] else {
            report(.keyType, "a localized text dictionary needs \"loc-key\"", at: text)
            return
        }
        if key.kind != .string { report(.keyType, "\"loc-key\" must be a string, found \(key.kind)", at: key) }
        if let arguments = text["loc-args"], arguments.kind != .array {
            report(.keyType, "\"loc-args\" must be an array of strings, found \(arguments.kind)", at: arguments)
        }
    }

    mutating func checkSoundDictionary(_ sound: Node) {
        for member in sound.members {
            let value = member.value
            switch member.keyNode.withUTF8({ SoundKey.lookUp($0) }) ?? nil {
            case .critical?:
                guard let number = value.number else {
                    report(.keyType, "\"critical\" must be a number, found \(value.kind)", at: value)
                    continue
                }
                if number.integralValue != 1 && number.integralValue != 0 {
                    report(.soundInvalid, "critical \(number.text) is not 1 (critical alert) or 0", at: value)
                }
            case .name?:
                if value.kind != .string {
                    report(.keyType, "\"name\" must be a string, found \(value.kind)", at: value)
                } else if value.stringValue?.isEmpty == true {
                    report(.soundInvalid, "the sound name is empty; name a sound file or \"default\"", at: value)
                }
            case .volume?:
                guard let volume = value.doubleValue else {
                    report(.keyType, "\"volume\" must be a number, found \(value.kind)", at: value)
                    continue
                }
                if !(0...1).contains(volume) {
                    report(.soundInvalid, "volume \(value.sourceText) is outside 0 (silent) to 1 (full volume)", at: value)
                }
            case nil:
                reportUnknown(member, rule: .unknownSoundKey, place: .sound, candidates: KeySuggester.soundKeys)
            }
        }
    }

    /// An unknown key, with the known key it most likely meant.
    mutating func reportUnknown(
        _ member: JSONDocument.Member, rule: RuleID, place: KeyPlace, candidates: KeySuggester.Candidates,
        alsoCheck others: KeySuggester.Candidates? = nil, alsoPlace: String = ""
    ) {
        guard isActive(rule), hasRoom(rule) else { return }
        // The key as bytes: a string is made only for the messages that quote it now.
        var query = KeySuggester.Query()
        let mayBeHeader = member.keyNode.withUTF8 { bytes in
            query = KeySuggester.Query(utf8: bytes)
            return bytes.count > 5 && bytes[0] | 0x20 == UInt8(ascii: "a") && bytes[1] | 0x20 == UInt8(ascii: "p")
                && bytes[2] | 0x20 == UInt8(ascii: "n") && bytes[3] | 0x20 == UInt8(ascii: "s")
        } ?? false
        if mayBeHeader, let header = APNsHeader.requestHeader(named: member.key) {
            report(rule, "\"\(member.key)\" is an HTTP/2 request header, not a payload key: send it as the \(header) header, not in the JSON", atKeyOf: member)
            return
        }
        let quoted = member.keyNode.index
        if let suggestion = KeySuggester.suggestion(for: &query, among: candidates) {
            report(rule, MessageText.quoting("\"", quoted, place.ignoredDidYouMean, suggestion, "\"?"), atKeyOf: member)
        } else if let others, let elsewhere = KeySuggester.suggestion(for: &query, among: others) {
            report(rule, "\"\(member.key)\" is not a key of \(place.name), so it is ignored; \"\(elsewhere)\" belongs in \(alsoPlace)", atKeyOf: member)
        } else if rule == .unknownAPSKey {
            report(rule, MessageText.quoting("\"", quoted, "\" is not an Apple key; it reaches the app inside aps, but a future Apple key of that name would change its meaning: move it beside aps"), atKeyOf: member)
        } else {
            report(rule, MessageText.quoting("\"", quoted, place.ignored), atKeyOf: member)
        }
    }

    /// Where an unknown key is, as its findings say it: literal text, so a message is made only
    /// when read.
    enum KeyPlace {
        case aps, alert, sound

        var name: StaticString {
            switch self {
            case .aps: "aps"
            case .alert: "the alert dictionary"
            case .sound: "the sound dictionary"
            }
        }

        /// After the key: `" is not a key of PLACE, so it is ignored`.
        var ignored: StaticString {
            switch self {
            case .aps: "\" is not a key of aps, so it is ignored"
            case .alert: "\" is not a key of the alert dictionary, so it is ignored"
            case .sound: "\" is not a key of the sound dictionary, so it is ignored"
            }
        }

        /// The same, before a suggestion.
        var ignoredDidYouMean: StaticString {
            switch self {
            case .aps: "\" is not a key of aps, so it is ignored; did you mean \""
            case .alert: "\" is not a key of the alert dictionary, so it is ignored; did you mean \""
            case .sound: "\" is not a key of the sound dictionary, so it is ignored; did you mean \""
            }
        }
    }

    /// Whether this is a Safari website push: by its topic, or by `url-args`, a key only
    /// website pushes carry.
    var isWebsitePush: Bool { context.isWebsitePush || apsValues.has(.urlArgs) }

    /// 2022-01-01T00:00:00Z: Live Activities arrived with iOS 16.1 in October 2022, so a Live
    /// Activity date before this year cannot be real.
    static let liveActivitiesIntroduced: Double = 1_640_995_200
    /// 2100-01-01T00:00:00Z: a later date is a unit or arithmetic slip.
    static let latestPlausibleDate: Double = 4_102_444_800

    /// The calendar year of a UNIX time (for messages only).
    static func year(ofEpochSeconds seconds: Double) -> Int {
        // A JSON number may have a hundred digits: the year is held within ±999,999,999 rather
        // than converted out of `Int`'s range (which traps).
        let year = 1970 + seconds / 31_556_952
        guard !year.isNaN else { return 1970 }
        return Int(max(-yearLimit, min(yearLimit, year)))
    }

    /// The largest year ``year(ofEpochSeconds:)`` gives.
    static let yearLimit: Double = 999_999_999

    /// "the year 5138", or "a year past 999,999,999" for a time no calendar reaches.
    static func theYear(ofEpochSeconds seconds: Double) -> String {
        let year = year(ofEpochSeconds: seconds)
        return Double(year) >= yearLimit ? "a year past 999,999,999" : "the year \(year)"
    }
}
