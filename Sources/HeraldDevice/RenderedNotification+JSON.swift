import HeraldJSON
import HeraldLocalization

extension RenderedNotification {
    /// The notification as JSON, the form `herald preview --format json` prints:
    ///
    /// `presentation`, `language`, `title`, `subtitle`, `body`, `actionTitle`, `launchImage`,
    /// `sound` (`{name, critical, volume, playsDefault}` or `null`), `badge`, `threadIdentifier`,
    /// `categoryIdentifier`, `targetContentIdentifier`, `interruptionLevel`, `relevanceScore`,
    /// `filterCriteria`, then `appName`, `hidesActionButton`, `summaryArgument`,
    /// `summaryArgumentCount`, `serviceExtensionWillRun`, `wakesApp`, `activity`, `userInfo`
    /// and `diagnostics` (`{severity, message, rule, file, line, column}`). Absent values are `null`.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        func add(_ key: String, _ value: JSONValue) { object.members.append(.init(key: key, value: value)) }
        add("presentation", .string(presentation.rawValue))
        add("language", .string(language))
        add("title", title.json)
        add("subtitle", subtitle.json)
        add("body", body.json)
        add("actionTitle", actionTitle.json)
        add("launchImage", launchImage.json)
        if let sound {
            add("sound", [
                "name": .string(sound.name), "critical": .bool(sound.critical), "volume": sound.volume.json,
                "playsDefault": .bool(sound.playsDefault),
            ])
        } else {
            add("sound", .null)
        }
        add("badge", badge.map { .number(JSONNumber($0)) } ?? .null)
        add("threadIdentifier", threadIdentifier.json)
        add("categoryIdentifier", categoryIdentifier.json)
        add("targetContentIdentifier", targetContentIdentifier.json)
        add("interruptionLevel", interruptionLevel.json)
        add("relevanceScore", relevanceScore.json)
        add("filterCriteria", filterCriteria.json)
        add("appName", appName.json)
        add("hidesActionButton", .bool(hidesActionButton))
        add("summaryArgument", summaryArgument.json)
        add("summaryArgumentCount", summaryArgumentCount.map { .number(JSONNumber($0)) } ?? .null)
        add("serviceExtensionWillRun", .bool(serviceExtensionWillRun))
        add("wakesApp", .bool(wakesApp))
        if let activity {
            add("activity", [
                "event": activity.event.json, "timestamp": activity.timestamp.json,
                "contentState": activity.contentState.map { .object($0) } ?? .null,
                "staleDate": activity.staleDate.json, "dismissalDate": activity.dismissalDate.json,
                "attributesType": activity.attributesType.json, "attributes": activity.attributes.map { .object($0) } ?? .null,
            ])
        } else {
            add("activity", .null)
        }
        add("userInfo", .object(userInfo))
        add("diagnostics", .array(diagnostics.map(\.jsonValue)))
        return .object(object)
    }
}

extension LocalizationDiagnostic {
    /// `{"severity", "message", "rule", "file", "line", "column"}`, with `null` for what is
    /// unknown (`rule` names the lint rule a diagnostic is a finding of).
    public var jsonValue: JSONValue {
        [
            "severity": .string(severity.rawValue), "message": .string(message), "rule": rule.json, "file": path.json,
            "line": location.map { .number(JSONNumber($0.line)) } ?? .null,
            "column": location.map { .number(JSONNumber($0.column)) } ?? .null,
        ]
    }
}

extension Optional where Wrapped == String {
    fileprivate var json: JSONValue { map { .string($0) } ?? .null }
}

extension Optional where Wrapped == Double {
    fileprivate var json: JSONValue { flatMap { JSONNumber($0) }.map { .number($0) } ?? .null }
}
