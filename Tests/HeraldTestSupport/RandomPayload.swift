import HeraldJSON
import HeraldPayload

extension RandomJSON {
    /// A random typed payload: every modelled key present or not, unknown keys inside `aps`,
    /// `alert` and `sound`, and custom keys beside `aps`.
    public mutating func payload() -> Payload {
        var aps = APS()
        if chance(60) { aps.alert = alert() }
        if chance(40) { aps.badge = Int.random(in: 0...999, using: &rng) }
        if chance(40) { aps.sound = sound() }
        if chance(30) { aps.threadID = string() }
        if chance(30) { aps.category = string() }
        if chance(20) { aps.contentAvailable = 1 }
        if chance(20) { aps.mutableContent = 1 }
        if chance(15) { aps.targetContentID = string() }
        if chance(20) { aps.interruptionLevel = InterruptionLevel.known.randomElement(using: &rng)! }
        if chance(20) { aps.relevanceScore = [0, 0.25, 1, Double.random(in: 0...1, using: &rng), 75].randomElement(using: &rng)! }
        if chance(15) { aps.filterCriteria = string() }
        if chance(20) { aps.timestamp = Double(Int.random(in: 1_600_000_000...1_900_000_000, using: &rng)) }
        if chance(20) { aps.event = LiveActivityEvent.known.randomElement(using: &rng)! }
        if chance(20) { aps.contentState = object() }
        if chance(10) { aps.staleDate = Double(Int.random(in: 1_600_000_000...1_900_000_000, using: &rng)) }
        if chance(10) { aps.dismissalDate = Double.random(in: 1_600_000_000...1_900_000_000, using: &rng) }
        if chance(10) { aps.attributesType = string() }
        if chance(10) { aps.attributes = object() }
        if chance(10) { aps.inputPushToken = 1 }
        if chance(10) { aps.inputPushChannel = string() }
        if chance(10) { aps.contentChanged = chance(50) }
        if chance(15) { aps.otherKeys = unknownKeys { APSKey($0) == nil } }
        var custom: [JSONObject.Member] = []
        for _ in 0..<Int.random(in: 0...3, using: &rng) {
            let key = string(maxLength: 6)
            guard key != "aps", !custom.contains(where: { $0.key == key }) else { continue }
            custom.append(JSONObject.Member(key: key, value: value(depth: 2)))
        }
        return Payload(aps: chance(95) ? aps : nil, custom: JSONObject(members: custom))
    }

    mutating func alert() -> Alert {
        if chance(30) { return .body(string()) }
        var content = AlertContent()
        if chance(60) { content.title = text() }
        if chance(30) { content.subtitle = text() }
        if chance(60) { content.body = text() }
        if chance(10) { content.launchImage = string() }
        if chance(20) { content.titleLocKey = chance(20) ? .null : .value(string()) }
        if chance(20) { content.titleLocArgs = chance(20) ? .null : .value(strings()) }
        if chance(15) { content.subtitleLocKey = string() }
        if chance(15) { content.subtitleLocArgs = strings() }
        if chance(25) { content.locKey = string() }
        if chance(25) { content.locArgs = strings() }
        if chance(15) { content.actionLocKey = chance(30) ? .null : .value(string()) }
        if chance(10) { content.action = string() }
        if chance(10) { content.summaryArg = string() }
        if chance(10) { content.summaryArgCount = Int.random(in: 0...10, using: &rng) }
        if chance(10) { content.sound = sound() }
        if chance(10) { content.otherKeys = unknownKeys { AlertKey($0) == nil } }
        return .content(content)
    }

    mutating func text() -> AlertText {
        chance(80) ? .text(string()) : .localized(key: string(), arguments: chance(70) ? strings() : nil)
    }

    mutating func sound() -> Sound {
        if chance(60) { return .named(chance(30) ? "default" : string()) }
        var sound = CriticalSound(critical: chance(80) ? 1 : nil)
        if chance(70) { sound.name = string() }
        if chance(70) { sound.volume = [0, 0.5, 1, Double.random(in: 0...1, using: &rng)].randomElement(using: &rng)! }
        if chance(10) { sound.otherKeys = unknownKeys { SoundKey($0) == nil } }
        return .critical(sound)
    }

    mutating func strings() -> [String] {
        (0..<Int.random(in: 0...3, using: &rng)).map { _ in string() }
    }

    mutating func object() -> JSONObject {
        if case .object(let object) = value(depth: 3) { return object }
        return ["value": value(depth: 3)]
    }

    /// Keys for which `isUnknown` holds, with random values.
    mutating func unknownKeys(_ isUnknown: (String) -> Bool) -> JSONObject {
        var members: [JSONObject.Member] = []
        for _ in 0..<Int.random(in: 1...2, using: &rng) {
            let key = "x-" + string(maxLength: 5)
            if isUnknown(key) { members.append(JSONObject.Member(key: key, value: value(depth: 3))) }
        }
        return JSONObject(members: members)
    }
}
