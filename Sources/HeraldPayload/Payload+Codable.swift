import HeraldJSON

// `Codable` conformance for programs that embed payloads in their own models or prefer
// Foundation's coders. Herald's own ``Payload/encode()`` is the fast, byte-exact path; these
// conformances produce the same keys and values, in whatever order the coder chooses.

extension Payload: Codable {
    /// Decodes a payload: `aps` into ``aps``, every other key into ``custom``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        var aps: APS?
        var custom: [JSONObject.Member] = []
        for key in container.allKeys {
            if key.stringValue == PayloadKey.aps.description {
                aps = try container.decode(APS.self, forKey: key)
            } else {
                custom.append(JSONObject.Member(key: key.stringValue, value: try container.decode(JSONValue.self, forKey: key)))
            }
        }
        self.init(aps: aps, custom: JSONObject(members: custom))
    }

    /// Encodes `aps` and the custom keys.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        if let aps { try container.encode(aps, forKey: AnyCodingKey(PayloadKey.aps.description)) }
        try container.encode(members: custom)
    }
}

extension APS: Codable {
    /// Decodes the `aps` dictionary; unknown keys go to ``otherKeys``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        self.init()
        let others = try container.decodeMembers(as: APSKey.self) { key, codingKey in
            switch key {
            case .alert: alert = try container.decode(Alert.self, forKey: codingKey)
            case .badge: badge = try container.decode(Int.self, forKey: codingKey)
            case .sound: sound = try container.decode(Sound.self, forKey: codingKey)
            case .threadID: threadID = try container.decode(String.self, forKey: codingKey)
            case .category: category = try container.decode(String.self, forKey: codingKey)
            case .contentAvailable: contentAvailable = try container.decode(Int.self, forKey: codingKey)
            case .mutableContent: mutableContent = try container.decode(Int.self, forKey: codingKey)
            case .targetContentID: targetContentID = try container.decode(String.self, forKey: codingKey)
            case .interruptionLevel: interruptionLevel = InterruptionLevel(rawValue: try container.decode(String.self, forKey: codingKey))
            case .relevanceScore: relevanceScore = try container.decode(Double.self, forKey: codingKey)
            case .filterCriteria: filterCriteria = try container.decode(String.self, forKey: codingKey)
            case .timestamp: timestamp = try container.decode(Double.self, forKey: codingKey)
            case .event: event = LiveActivityEvent(rawValue: try container.decode(String.self, forKey: codingKey))
            case .contentState: contentState = try Self.decodeObject(container, codingKey)
            case .staleDate: staleDate = try container.decode(Double.self, forKey: codingKey)
            case .dismissalDate: dismissalDate = try container.decode(Double.self, forKey: codingKey)
            case .attributesType: attributesType = try container.decode(String.self, forKey: codingKey)
            case .attributes: attributes = try Self.decodeObject(container, codingKey)
            case .inputPushToken: inputPushToken = try container.decode(Int.self, forKey: codingKey)
            case .inputPushChannel: inputPushChannel = try container.decode(String.self, forKey: codingKey)
            case .contentChanged: contentChanged = try container.decode(Bool.self, forKey: codingKey)
            case .urlArgs: urlArgs = try container.decode([String].self, forKey: codingKey)
            }
        }
        otherKeys = JSONObject(members: others)
    }

    /// A dictionary value; anything else is a type mismatch, as ``Payload/init(decoding:options:)``
    /// reports it.
    static func decodeObject(_ container: KeyedDecodingContainer<AnyCodingKey>, _ key: AnyCodingKey) throws -> JSONObject {
        guard case .object(let object) = try container.decode(JSONValue.self, forKey: key) else {
            throw DecodingError.typeMismatch(JSONObject.self, DecodingError.Context(
                codingPath: container.codingPath + [key], debugDescription: "\"\(key.stringValue)\" must be a dictionary"))
        }
        return object
    }

    /// Encodes the keys that are set, then ``otherKeys``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        func key(_ key: APSKey) -> AnyCodingKey { AnyCodingKey(key.description) }
        try container.encodeIfPresent(alert, forKey: key(.alert))
        try container.encodeIfPresent(badge, forKey: key(.badge))
        try container.encodeIfPresent(sound, forKey: key(.sound))
        try container.encodeIfPresent(threadID, forKey: key(.threadID))
        try container.encodeIfPresent(category, forKey: key(.category))
        try container.encodeIfPresent(contentAvailable, forKey: key(.contentAvailable))
        try container.encodeIfPresent(mutableContent, forKey: key(.mutableContent))
        try container.encodeIfPresent(targetContentID, forKey: key(.targetContentID))
        try container.encodeIfPresent(interruptionLevel?.rawValue, forKey: key(.interruptionLevel))
        try container.encodeIfPresent(relevanceScore, forKey: key(.relevanceScore))
        try container.encodeIfPresent(filterCriteria, forKey: key(.filterCriteria))
        try container.encodeIfPresent(timestamp, forKey: key(.timestamp))
        try container.encodeIfPresent(event?.rawValue, forKey: key(.event))
        try container.encodeIfPresent(contentState.map(JSONValue.object), forKey: key(.contentState))
        try container.encodeIfPresent(staleDate, forKey: key(.staleDate))
        try container.encodeIfPresent(dismissalDate, forKey: key(.dismissalDate))
        try container.encodeIfPresent(attributesType, forKey: key(.attributesType))
        try container.encodeIfPresent(attributes.map(JSONValue.object), forKey: key(.attributes))
        try container.encodeIfPresent(inputPushToken, forKey: key(.inputPushToken))
        try container.encodeIfPresent(inputPushChannel, forKey: key(.inputPushChannel))
        try container.encodeIfPresent(contentChanged, forKey: key(.contentChanged))
        try container.encodeIfPresent(urlArgs, forKey: key(.urlArgs))
        try container.encode(members: otherKeys)
    }
}

extension Alert: Codable {
    /// Decodes a string or a dictionary.
    public init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            self = .body(text)
        } else {
            self = .content(try AlertContent(from: decoder))
        }
    }

    /// Encodes a string or a dictionary.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .body(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        case .content(let content):
            try content.encode(to: encoder)
        }
    }
}

extension AlertContent: Codable {
    /// Decodes the alert dictionary; unknown keys go to ``otherKeys``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        self.init()
        let others = try container.decodeMembers(as: AlertKey.self) { key, codingKey in
            switch key {
            case .title: title = try container.decode(AlertText.self, forKey: codingKey)
            case .subtitle: subtitle = try container.decode(AlertText.self, forKey: codingKey)
            case .body: body = try container.decode(AlertText.self, forKey: codingKey)
            case .launchImage: launchImage = try container.decode(String.self, forKey: codingKey)
            case .titleLocKey: titleLocKey = try container.decode(Nullable<String>.self, forKey: codingKey)
            case .titleLocArgs: titleLocArgs = try container.decode(Nullable<[String]>.self, forKey: codingKey)
            case .subtitleLocKey: subtitleLocKey = try container.decode(String.self, forKey: codingKey)
            case .subtitleLocArgs: subtitleLocArgs = try container.decode([String].self, forKey: codingKey)
            case .locKey: locKey = try container.decode(String.self, forKey: codingKey)
            case .locArgs: locArgs = try container.decode([String].self, forKey: codingKey)
            case .actionLocKey: actionLocKey = try container.decode(Nullable<String>.self, forKey: codingKey)
            case .action: action = try container.decode(String.self, forKey: codingKey)
            case .summaryArg: summaryArg = try container.decode(String.self, forKey: codingKey)
            case .summaryArgCount: summaryArgCount = try container.decode(Int.self, forKey: codingKey)
            case .sound: sound = try container.decode(Sound.self, forKey: codingKey)
            }
        }
        otherKeys = JSONObject(members: others)
    }

    /// Encodes the keys that are set, then ``otherKeys``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        func key(_ key: AlertKey) -> AnyCodingKey { AnyCodingKey(key.description) }
        try container.encodeIfPresent(title, forKey: key(.title))
        try container.encodeIfPresent(subtitle, forKey: key(.subtitle))
        try container.encodeIfPresent(body, forKey: key(.body))
        try container.encodeIfPresent(launchImage, forKey: key(.launchImage))
        try container.encodeIfPresent(titleLocKey, forKey: key(.titleLocKey))
        try container.encodeIfPresent(titleLocArgs, forKey: key(.titleLocArgs))
        try container.encodeIfPresent(subtitleLocKey, forKey: key(.subtitleLocKey))
        try container.encodeIfPresent(subtitleLocArgs, forKey: key(.subtitleLocArgs))
        try container.encodeIfPresent(locKey, forKey: key(.locKey))
        try container.encodeIfPresent(locArgs, forKey: key(.locArgs))
        try container.encodeIfPresent(actionLocKey, forKey: key(.actionLocKey))
        try container.encodeIfPresent(action, forKey: key(.action))
        try container.encodeIfPresent(summaryArg, forKey: key(.summaryArg))
        try container.encodeIfPresent(summaryArgCount, forKey: key(.summaryArgCount))
        try container.encodeIfPresent(sound, forKey: key(.sound))
        try container.encode(members: otherKeys)
    }
}

extension AlertText: Codable {
    /// Decodes a string or a `{"loc-key", "loc-args"}` dictionary.
    public init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            self = .text(text)
            return
        }
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        let key = try container.decode(String.self, forKey: AnyCodingKey(AlertKey.locKey.description))
        let arguments = try container.decodeIfPresent([String].self, forKey: AnyCodingKey(AlertKey.locArgs.description))
        self = .localized(key: key, arguments: arguments)
    }

    /// Encodes a string or a dictionary.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .text(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        case .localized(let key, let arguments):
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            try container.encode(key, forKey: AnyCodingKey(AlertKey.locKey.description))
            try container.encodeIfPresent(arguments, forKey: AnyCodingKey(AlertKey.locArgs.description))
        }
    }
}

extension Nullable: Codable where Wrapped: Codable {
    /// Decodes `null` or a value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self = container.decodeNil() ? .null : .value(try container.decode(Wrapped.self))
    }

    /// Encodes `null` or the value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .value(let value): try container.encode(value)
        }
    }
}

extension Sound: Codable {
    /// Decodes a name or a critical-alert dictionary.
    public init(from decoder: any Decoder) throws {
        if let name = try? decoder.singleValueContainer().decode(String.self) {
            self = .named(name)
            return
        }
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        var sound = CriticalSound(critical: nil)
        let others = try container.decodeMembers(as: SoundKey.self) { key, codingKey in
            switch key {
            case .critical: sound.critical = try container.decode(Int.self, forKey: codingKey)
            case .name: sound.name = try container.decode(String.self, forKey: codingKey)
            case .volume: sound.volume = try container.decode(Double.self, forKey: codingKey)
            }
        }
        sound.otherKeys = JSONObject(members: others)
        self = .critical(sound)
    }

    /// Encodes a name or a dictionary.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .named(let name):
            var container = encoder.singleValueContainer()
            try container.encode(name)
        case .critical(let sound):
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            try container.encodeIfPresent(sound.critical, forKey: AnyCodingKey(SoundKey.critical.description))
            try container.encodeIfPresent(sound.name, forKey: AnyCodingKey(SoundKey.name.description))
            try container.encodeIfPresent(sound.volume, forKey: AnyCodingKey(SoundKey.volume.description))
            try container.encode(members: sound.otherKeys)
        }
    }
}

extension KeyedDecodingContainer<AnyCodingKey> {
    /// Calls `body` with each key that is a `Key`, and returns the other members, for
    /// `otherKeys`.
    func decodeMembers<Key: KnownKey>(as _: Key.Type, _ body: (Key, AnyCodingKey) throws -> Void) throws -> [JSONObject.Member] {
        var others: [JSONObject.Member] = []
        for codingKey in allKeys {
            if let key = Key(codingKey.stringValue) {
                try body(key, codingKey)
            } else {
                others.append(JSONObject.Member(key: codingKey.stringValue, value: try decode(JSONValue.self, forKey: codingKey)))
            }
        }
        return others
    }
}

extension KeyedEncodingContainer<AnyCodingKey> {
    /// Encodes an object's members, in order, into the object being encoded.
    mutating func encode(members object: JSONObject) throws {
        for member in object.members {
            try encode(member.value, forKey: AnyCodingKey(member.key))
        }
    }
}
