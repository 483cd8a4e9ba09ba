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

    func fail(_ kind: PayloadDecodingError.Kind, at node: JSONDocument.Node, _ pointer: JSONPointer) -> PayloadDecodingError {
        PayloadDecodingError(kind: kind, pointer: pointer, location: node.location)
    }

    func payload() throws(PayloadDecodingError) -> Payload {
        let root = document.root
        guard root.kind == .object else {
            throw fail(.typeMismatch(expected: "an object (a payload is a JSON dictionary)", found: root.kind), at: root, .root)
        }
        var payload = Payload(aps: nil)
        var custom: [JSONObject.Member] = []
        for member in root.members {
            let key = member.key
            if key == PayloadKey.aps.description {
                guard !payload.hasAPS else {
                    throw fail(.duplicateKey(key), at: member.keyNode, JSONPointer(tokens: [key]))
                }
                payload.aps = try aps(member.value, JSONPointer(tokens: [key]))
            } else {
                custom.append(JSONObject.Member(key: key, value: member.value.value))
            }
        }
        payload.custom = JSONObject(members: custom)
        return payload
    }

    // MARK: aps

    func aps(_ node: JSONDocument.Node, _ pointer: JSONPointer) throws(PayloadDecodingError) -> APS {
        try requireObject(node, pointer, "an object (the aps dictionary)")
        var aps = APS()
        var seen = Set<APSKey>()
        var others: [JSONObject.Member] = []
        for member in node.members {
            let name = member.key
            let here = pointer.appending(name)
            guard let key = APSKey(name) else {
                others.append(JSONObject.Member(key: name, value: member.value.value))
                continue
            }
            guard seen.insert(key).inserted else { throw fail(.duplicateKey(name), at: member.keyNode, here) }
            let value = member.value
            switch key {
            case .alert: aps.alert = try alert(value, here)
            case .badge: aps.badge = try integer(value, here)
            case .sound: aps.sound = try sound(value, here)
            case .threadID: aps.threadID = try string(value, here)
            case .category: aps.category = try string(value, here)
            case .contentAvailable: aps.contentAvailable = try integer(value, here)
            case .mutableContent: aps.mutableContent = try integer(value, here)
            case .targetContentID: aps.targetContentID = try string(value, here)
            case .interruptionLevel: aps.interruptionLevel = InterruptionLevel(rawValue: try string(value, here))
            case .relevanceScore: aps.relevanceScore = try double(value, here)
            case .filterCriteria: aps.filterCriteria = try string(value, here)
            case .timestamp: aps.timestamp = try double(value, here)
            case .event: aps.event = LiveActivityEvent(rawValue: try string(value, here))
            case .contentState: aps.contentState = try object(value, here)
            case .staleDate: aps.staleDate = try double(value, here)
            case .dismissalDate: aps.dismissalDate = try double(value, here)
            case .attributesType: aps.attributesType = try string(value, here)
            case .attributes: aps.attributes = try object(value, here)
            case .inputPushToken: aps.inputPushToken = try integer(value, here)
            case .inputPushChannel: aps.inputPushChannel = try string(value, here)
            case .contentChanged: aps.contentChanged = try bool(value, here)
            case .urlArgs: aps.urlArgs = try strings(value, here)
            }
        }
        aps.otherKeys = JSONObject(members: others)
        return aps
    }

    // MARK: alert

    func alert(_ node: JSONDocument.Node, _ pointer: JSONPointer) throws(PayloadDecodingError) -> Alert {
        switch node.kind {
        case .string:
            return .body(node.stringValue ?? "")
        case .object:
            return .content(try alertContent(node, pointer))
        default:
            throw fail(.typeMismatch(expected: "a string or a dictionary", found: node.kind), at: node, pointer)
        }
    }

    func alertContent(_ node: JSONDocument.Node, _ pointer: JSONPointer) throws(PayloadDecodingError) -> AlertContent {
        var content = AlertContent()
        var seen = Set<AlertKey>()
        var others: [JSONObject.Member] = []
        for member in node.members {
            let name = member.key
            let here = pointer.appending(name)
            guard let key = AlertKey(name) else {
                others.append(JSONObject.Member(key: name, value: member.value.value))
                continue
            }
            guard seen.insert(key).inserted else { throw fail(.duplicateKey(name), at: member.keyNode, here) }
            let value = member.value
            switch key {
            case .title: content.title = try alertText(value, here)
            case .subtitle: content.subtitle = try alertText(value, here)
            case .body: content.body = try alertText(value, here)
            case .launchImage: content.launchImage = try string(value, here)
            case .titleLocKey: content.titleLocKey = try nullable(value) { () throws(PayloadDecodingError) in try string(value, here) }
            case .titleLocArgs: content.titleLocArgs = try nullable(value) { () throws(PayloadDecodingError) in try strings(value, here) }
            case .subtitleLocKey: content.subtitleLocKey = try string(value, here)
            case .subtitleLocArgs: content.subtitleLocArgs = try strings(value, here)
            case .locKey: content.locKey = try string(value, here)
            case .locArgs: content.locArgs = try strings(value, here)
            case .actionLocKey: content.actionLocKey = try nullable(value) { () throws(PayloadDecodingError) in try string(value, here) }
            case .action: content.action = try string(value, here)
            case .summaryArg: content.summaryArg = try string(value, here)
            case .summaryArgCount: content.summaryArgCount = try integer(value, here)
            case .sound: content.sound = try sound(value, here)
            }
        }
        content.otherKeys = JSONObject(members: others)
        return content
    }

    func alertText(_ node: JSONDocument.Node, _ pointer: JSONPointer) throws(PayloadDecodingError) -> AlertText {
        switch node.kind {
        case .string:
            return .text(node.stringValue ?? "")
        case .object:
            var key: String?
            var arguments: [String]?
            for member in node.members {
                let here = pointer.appending(member.key)
                switch AlertKey(member.key) {
                case .locKey?:
                    guard key == nil else { throw fail(.duplicateKey(member.key), at: member.keyNode, here) }
                    key = try string(member.value, here)
                case .locArgs?:
                    guard arguments == nil else { throw fail(.duplicateKey(member.key), at: member.keyNode, here) }
                    arguments = try strings(member.value, here)
                default:
                    throw fail(.unexpectedKey(member.key, expected: "\"loc-key\" and \"loc-args\" in a localized text"), at: member.keyNode, here)
                }
            }
            guard let key else {
                throw fail(.invalidValue(expected: "a dictionary with \"loc-key\"", found: "none"), at: node, pointer)
            }
            return .localized(key: key, arguments: arguments)
        default:
            throw fail(.typeMismatch(expected: "a string or a {\"loc-key\", \"loc-args\"} dictionary", found: node.kind), at: node, pointer)
        }
    }

    // MARK: sound

    func sound(_ node: JSONDocument.Node, _ pointer: JSONPointer) throws(PayloadDecodingError) -> Sound {
        switch node.kind {
        case .string:
            return .named(node.stringValue ?? "")
        case .object:
            var sound = CriticalSound(critical: nil)
            var seen = Set<SoundKey>()
            var others: [JSONObject.Member] = []
            for member in node.members {
                let here = pointer.appending(member.key)
                guard let key = SoundKey(member.key) else {
                    others.append(JSONObject.Member(key: member.key, value: member.value.value))
                    continue
                }
                guard seen.insert(key).inserted else { throw fail(.duplicateKey(member.key), at: member.keyNode, here) }
                switch key {
                case .critical: sound.critical = try integer(member.value, here)
                case .name: sound.name = try string(member.value, here)
                case .volume: sound.volume = try double(member.value, here)
                }
            }
            sound.otherKeys = JSONObject(members: others)
            return .critical(sound)
        default:
            throw fail(.typeMismatch(expected: "a sound name or a critical-alert dictionary", found: node.kind), at: node, pointer)
        }
    }

    // MARK: Scalars

    func requireObject(_ node: JSONDocument.Node, _ pointer: JSONPointer, _ expected: String) throws(PayloadDecodingError) {
        guard node.kind == .object else { throw fail(.typeMismatch(expected: expected, found: node.kind), at: node, pointer) }
    }

    func string(_ node: JSONDocument.Node, _ pointer: JSONPointer) throws(PayloadDecodingError) -> String {
        guard let value = node.stringValue else {
            throw fail(.typeMismatch(expected: "a string", found: node.kind), at: node, pointer)
        }
        return value
    }

    func integer(_ node: JSONDocument.Node, _ pointer: JSONPointer) throws(PayloadDecodingError) -> Int {
        guard let number = node.number else {
            throw fail(.typeMismatch(expected: "a whole number", found: node.kind), at: node, pointer)
        }
        guard let value = number.integralValue, let integer = Int(exactly: value) else {
            throw fail(.invalidValue(expected: "a whole number", found: number.text), at: node, pointer)
        }
        return integer
    }

    func double(_ node: JSONDocument.Node, _ pointer: JSONPointer) throws(PayloadDecodingError) -> Double {
        guard let value = node.doubleValue else {
            throw fail(.typeMismatch(expected: "a number", found: node.kind), at: node, pointer)
        }
        guard value.isFinite else {
            throw fail(.invalidValue(expected: "a number within the range of a Double", found: node.sourceText), at: node, pointer)
        }
        return value
    }

    func bool(_ node: JSONDocument.Node, _ pointer: JSONPointer) throws(PayloadDecodingError) -> Bool {
        guard let value = node.boolValue else {
            throw fail(.typeMismatch(expected: "true or false", found: node.kind), at: node, pointer)
        }
        return value
    }

    func object(_ node: JSONDocument.Node, _ pointer: JSONPointer) throws(PayloadDecodingError) -> JSONObject {
        guard case .object(let object) = node.value else {
            throw fail(.typeMismatch(expected: "an object", found: node.kind), at: node, pointer)
        }
        return object
    }

    func strings(_ node: JSONDocument.Node, _ pointer: JSONPointer) throws(PayloadDecodingError) -> [String] {
        guard node.kind == .array else {
            throw fail(.typeMismatch(expected: "an array of strings", found: node.kind), at: node, pointer)
        }
        var result: [String] = []
        result.reserveCapacity(node.count)
        for (index, element) in node.elements.enumerated() {
            guard let value = element.stringValue else {
                throw fail(.typeMismatch(expected: "a string (format arguments are strings)", found: element.kind), at: element, pointer.appending(index))
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
