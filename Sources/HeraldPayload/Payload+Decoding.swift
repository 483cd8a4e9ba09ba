import HeraldJSON

extension Payload {
    /// Decodes a payload from JSON bytes.
    ///
    /// - Throws: ``PayloadDecodingError`` naming the JSON Pointer and line:column of the first
    ///   problem: a syntax error, a key of the wrong type (`"badge": "5"`), or a key Herald models
    ///   given twice. Keys Herald does not model are kept, never rejected.
    public init(decoding bytes: [UInt8], options: JSONParser.Options = .init()) throws(PayloadDecodingError) {
        let document: JSONDocument
        do {
            document = try JSONDocument(parsing: bytes, options: options)
        } catch {
            throw PayloadDecodingError(kind: .syntax(error), pointer: .root, location: error.location)
        }
        try self.init(document: document)
    }

    /// Decodes a payload from JSON text.
    public init(decoding text: String) throws(PayloadDecodingError) {
        try self.init(decoding: Array(text.utf8))
    }

    /// Decodes a payload from a parsed document.
    public init(document: JSONDocument) throws(PayloadDecodingError) {
        let reader = PayloadReader(document: document)
        self = try reader.payload()
    }
}

/// Walks a document into the typed model. Errors carry the pointer of the offending value.
struct PayloadReader {
    let document: JSONDocument

    static let apsKey = PayloadKey.aps.description

    // Pointers are computed only when something fails: a successful decode builds none.

    /// An error about a value: its pointer and position.
    func fail(_ kind: PayloadDecodingError.Kind, at node: JSONDocument.Node) -> PayloadDecodingError {
        PayloadDecodingError(kind: kind, pointer: document.pointer(to: node), location: node.location)
    }

    /// An error about a member's key: the member's pointer, the key's position.
    func fail(_ kind: PayloadDecodingError.Kind, atKeyOf member: JSONDocument.Member) -> PayloadDecodingError {
        PayloadDecodingError(kind: kind, pointer: document.pointer(to: member.value), location: member.keyNode.location)
    }

    /// The known key a member's key spells, without allocating a string.
    @inline(__always)
    func knownKey<Key: KnownKey>(_ member: JSONDocument.Member, as type: Key.Type) -> Key? {
        member.keyNode.withUTF8 { Key(utf8: $0) } ?? nil
    }

    /// Records `key` as seen; `false` when it was already (a duplicate). Keys are one-byte
    /// ordinals below 64.
    @inline(__always)
    func firstSighting<Key: KnownKey>(_ key: Key, in seen: inout UInt64) -> Bool {
        let bit: UInt64 = 1 << UInt64(key.ordinal)
        defer { seen |= bit }
        return seen & bit == 0
    }

    func payload() throws(PayloadDecodingError) -> Payload {
        let root = document.root
        guard root.kind == .object else {
            throw fail(.typeMismatch(expected: "an object (a payload is a JSON dictionary)", found: root.kind), at: root)
        }
        // The model is filled in place: an APS is hundreds of bytes, and every copy of it retains
        // each of its strings.
        // Custom data stays in the document until someone reads it (see `Payload.custom`).
        var payload = Payload(custom: .values([:]))
        var hasCustom = false
        for member in root.members {
            if member.keyNode.stringEquals(PayloadReader.apsKey) {
                guard !payload.hasAPS else {
                    throw fail(.duplicateKey(PayloadReader.apsKey), atKeyOf: member)
                }
                try payload.modifyAPS { (aps) throws(PayloadDecodingError) in try readAPS(member.value, into: &aps) }
            } else {
                hasCustom = true
            }
        }
        if hasCustom { payload.setCustom(.source(document)) }
        return payload
    }

    // MARK: aps

    func readAPS(_ node: JSONDocument.Node, into aps: inout APS) throws(PayloadDecodingError) {
        try requireObject(node, "an object (the aps dictionary)")
        var seen: UInt64 = 0
        var others: [JSONObject.Member] = []
        for member in node.members {
            guard let key = knownKey(member, as: APSKey.self) else {
                others.append(JSONObject.Member(key: member.key, value: member.value.value))
                continue
            }
            guard firstSighting(key, in: &seen) else { throw fail(.duplicateKey(member.key), atKeyOf: member) }
            let value = member.value
            switch key {
            case .alert: try readAlert(value, into: &aps.alert)
            case .badge: aps.badge = try integer(value)
            case .sound: aps.sound = try sound(value)
            case .threadID: aps.threadID = try string(value)
            case .category: aps.category = try string(value)
            case .contentAvailable: aps.contentAvailable = try integer(value)
            case .mutableContent: aps.mutableContent = try integer(value)
            case .targetContentID: aps.targetContentID = try string(value)
            case .interruptionLevel: aps.interruptionLevel = InterruptionLevel(rawValue: try string(value))
            case .relevanceScore: aps.relevanceScore = try double(value)
            case .filterCriteria: aps.filterCriteria = try string(value)
            case .timestamp: aps.timestamp = try double(value)
            case .event: aps.event = LiveActivityEvent(rawValue: try string(value))
            case .contentState: aps.contentState = try object(value)
            case .staleDate: aps.staleDate = try double(value)
            case .dismissalDate: aps.dismissalDate = try double(value)
            case .attributesType: aps.attributesType = try string(value)
            case .attributes: aps.attributes = try object(value)
            case .inputPushToken: aps.inputPushToken = try integer(value)
            case .inputPushChannel: aps.inputPushChannel = try string(value)
            case .contentChanged: aps.contentChanged = try bool(value)
            case .urlArgs: aps.urlArgs = try strings(value)
            }
        }
        if !others.isEmpty { aps.otherKeys = JSONObject(members: others) }
    }

    // MARK: alert

    /// Reads `alert` into its place (an alert dictionary is hundreds of bytes: it is built where
    /// it ends up, not copied there).
    func readAlert(_ node: JSONDocument.Node, into alert: inout Alert?) throws(PayloadDecodingError) {
        switch node.kind {
        case .string:
            alert = .body(node.stringValue ?? "")
        case .object:
            var content = AlertContent()
            try readAlertContent(node, into: &content)
            alert = .content(consume content)
        default:
            throw fail(.typeMismatch(expected: "a string or a dictionary", found: node.kind), at: node)
        }
    }

    func readAlertContent(_ node: JSONDocument.Node, into content: inout AlertContent) throws(PayloadDecodingError) {
        var seen: UInt64 = 0
        var others: [JSONObject.Member] = []
        for member in node.members {
            guard let key = knownKey(member, as: AlertKey.self) else {
                others.append(JSONObject.Member(key: member.key, value: member.value.value))
                continue
            }
            guard firstSighting(key, in: &seen) else { throw fail(.duplicateKey(member.key), atKeyOf: member) }
            let value = member.value
            switch key {
            case .title: content.title = try alertText(value)
            case .subtitle: content.subtitle = try alertText(value)
            case .body: content.body = try alertText(value)
            case .launchImage: content.launchImage = try string(value)
            case .titleLocKey: content.titleLocKey = try nullable(value) { () throws(PayloadDecodingError) in try string(value) }
            case .titleLocArgs: content.titleLocArgs = try nullable(value) { () throws(PayloadDecodingError) in try strings(value) }
            case .subtitleLocKey: content.subtitleLocKey = try string(value)
            case .subtitleLocArgs: content.subtitleLocArgs = try strings(value)
            case .locKey: content.locKey = try string(value)
            case .locArgs: content.locArgs = try strings(value)
            case .actionLocKey: content.actionLocKey = try nullable(value) { () throws(PayloadDecodingError) in try string(value) }
            case .action: content.action = try string(value)
            case .summaryArg: content.summaryArg = try string(value)
            case .summaryArgCount: content.summaryArgCount = try integer(value)
            case .sound: content.sound = try sound(value)
            }
        }
        if !others.isEmpty { content.otherKeys = JSONObject(members: others) }
    }

    func alertText(_ node: JSONDocument.Node) throws(PayloadDecodingError) -> AlertText {
        switch node.kind {
        case .string:
            return .text(node.stringValue ?? "")
        case .object:
            var key: String?
            var arguments: [String]?
            for member in node.members {
                switch knownKey(member, as: AlertKey.self) {
                case .locKey?:
                    guard key == nil else { throw fail(.duplicateKey(member.key), atKeyOf: member) }
                    key = try string(member.value)
                case .locArgs?:
                    guard arguments == nil else { throw fail(.duplicateKey(member.key), atKeyOf: member) }
                    arguments = try strings(member.value)
                default:
                    throw fail(.unexpectedKey(member.key, expected: "\"loc-key\" and \"loc-args\" in a localized text"), atKeyOf: member)
                }
            }
            guard let key else {
                throw fail(.invalidValue(expected: "a dictionary with \"loc-key\"", found: "none"), at: node)
            }
            return .localized(key: key, arguments: arguments)
        default:
            throw fail(.typeMismatch(expected: "a string or a {\"loc-key\", \"loc-args\"} dictionary", found: node.kind), at: node)
        }
    }

    // MARK: sound

    func sound(_ node: JSONDocument.Node) throws(PayloadDecodingError) -> Sound {
        switch node.kind {
        case .string:
            return .named(node.stringValue ?? "")
        case .object:
            var sound = CriticalSound(critical: nil)
            var seen: UInt64 = 0
            var others: [JSONObject.Member] = []
            for member in node.members {
                guard let key = knownKey(member, as: SoundKey.self) else {
                    others.append(JSONObject.Member(key: member.key, value: member.value.value))
                    continue
                }
                guard firstSighting(key, in: &seen) else { throw fail(.duplicateKey(member.key), atKeyOf: member) }
                switch key {
                case .critical: sound.critical = try integer(member.value)
                case .name: sound.name = try string(member.value)
                case .volume: sound.volume = try double(member.value)
                }
            }
            sound.otherKeys = JSONObject(members: others)
            return .critical(sound)
        default:
            throw fail(.typeMismatch(expected: "a sound name or a critical-alert dictionary", found: node.kind), at: node)
        }
    }

    // MARK: Scalars

    func requireObject(_ node: JSONDocument.Node, _ expected: String) throws(PayloadDecodingError) {
        guard node.kind == .object else { throw fail(.typeMismatch(expected: expected, found: node.kind), at: node) }
    }

    func string(_ node: JSONDocument.Node) throws(PayloadDecodingError) -> String {
        guard let value = node.stringValue else {
            throw fail(.typeMismatch(expected: "a string", found: node.kind), at: node)
        }
        return value
    }

    func integer(_ node: JSONDocument.Node) throws(PayloadDecodingError) -> Int {
        guard let number = node.number else {
            throw fail(.typeMismatch(expected: "a whole number", found: node.kind), at: node)
        }
        guard let value = number.integralValue, let integer = Int(exactly: value) else {
            throw fail(.invalidValue(expected: "a whole number", found: number.text), at: node)
        }
        return integer
    }

    func double(_ node: JSONDocument.Node) throws(PayloadDecodingError) -> Double {
        guard let value = node.doubleValue else {
            throw fail(.typeMismatch(expected: "a number", found: node.kind), at: node)
        }
        guard value.isFinite else {
            throw fail(.invalidValue(expected: "a number within the range of a Double", found: node.sourceText), at: node)
        }
        return value
    }

    func bool(_ node: JSONDocument.Node) throws(PayloadDecodingError) -> Bool {
        guard let value = node.boolValue else {
            throw fail(.typeMismatch(expected: "true or false", found: node.kind), at: node)
        }
        return value
    }

    func object(_ node: JSONDocument.Node) throws(PayloadDecodingError) -> JSONObject {
        guard case .object(let object) = node.value else {
            throw fail(.typeMismatch(expected: "an object", found: node.kind), at: node)
        }
        return object
    }

    func strings(_ node: JSONDocument.Node) throws(PayloadDecodingError) -> [String] {
        guard node.kind == .array else {
            throw fail(.typeMismatch(expected: "an array of strings", found: node.kind), at: node)
        }
        var result: [String] = []
        result.reserveCapacity(node.count)
        for element in node.elements {
            guard let value = element.stringValue else {
                throw fail(.typeMismatch(expected: "a string (format arguments are strings)", found: element.kind), at: element)
            }
            result.append(value)
        }
        return result
    }

    func nullable<Wrapped>(
        _ node: JSONDocument.Node, _ decode: () throws(PayloadDecodingError) -> Wrapped
    ) throws(PayloadDecodingError) -> Nullable<Wrapped> {
        node.isNull ? .null : .value(try decode())
    }
}
