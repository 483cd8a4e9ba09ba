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

    /// Decodes a payload the way a device reads one, in one pass: a value that cannot be read
    /// is left out (or, for a number or Boolean format argument, read as its text; for a key
    /// given twice, the last value is used) and reported, in document order, instead of
    /// failing the whole payload.
    ///
    /// - Throws: only when the root is not a JSON object.
    package static func decodingLeniently(
        document: JSONDocument
    ) throws(PayloadDecodingError) -> (payload: Payload, recovered: [(error: PayloadDecodingError, action: PayloadRecovery)]) {
        let log = PayloadReader.RecoveryLog(document)
        let payload = try PayloadReader(document: document, recovery: log).payload()
        return (payload, log.entries)
    }
}

/// What a lenient decode (``Payload/decodingLeniently(document:)``) did with a value it could
/// not read.
package enum PayloadRecovery: Sendable, Hashable {
    /// The value was left out.
    case dropped
    /// A number or Boolean format argument was read as its source text (`%@` prints a
    /// number's description).
    case readAsText(String)
    /// A key given twice: the last value is the one used.
    case lastDuplicateUsed
}

/// Walks a document into the typed model. Errors carry the pointer of the offending value.
struct PayloadReader {
    let document: JSONDocument
    /// Where a lenient decode notes what it left out; `nil` for a strict decode, which throws
    /// at the first problem instead.
    var recovery: RecoveryLog? = nil

    /// The values a lenient decode could not read, in document order.
    final class RecoveryLog {
        var entries: [(error: PayloadDecodingError, action: PayloadRecovery)] = []
        /// Pointers and locations for the errors, each without a walk from the root (a payload
        /// may hold thousands of unreadable values).
        var locator: NodeLocator

        init(_ document: JSONDocument) {
            locator = NodeLocator(document)
        }
    }

    /// `read()`, or in a lenient decode `nil` with its error noted (the value left out).
    @inline(__always)
    func lenient<Value>(_ read: () throws(PayloadDecodingError) -> Value) throws(PayloadDecodingError) -> Value? {
        do {
            return try read()
        } catch {
            guard let recovery else { throw error }
            recovery.entries.append((error, .dropped))
            return nil
        }
    }

    /// `read(node)`, or in a lenient decode `nil` with its error noted.
    @inline(__always)
    func lenient<Value>(
        _ node: JSONDocument.Node, _ read: (JSONDocument.Node) throws(PayloadDecodingError) -> Value
    ) throws(PayloadDecodingError) -> Value? {
        try lenient { () throws(PayloadDecodingError) in try read(node) }
    }

    /// Whether a key seen before may be read again: never in a strict decode (it throws); in a
    /// lenient one, noted, and the later value replaces the earlier.
    @inline(__always)
    func duplicate(_ member: JSONDocument.Member) throws(PayloadDecodingError) {
        let error = fail(.duplicateKey(member.key), atKeyOf: member)
        guard let recovery else { throw error }
        recovery.entries.append((error, .lastDuplicateUsed))
    }

    static let apsKey = PayloadKey.aps.description

    /// Whether a key's UTF-8 is `aps`.
    @inline(__always)
    static func spellsAPS(_ key: UnsafeRawBufferPointer) -> Bool {
        key.count == 3 && key[0] == UInt8(ascii: "a") && key[1] == UInt8(ascii: "p") && key[2] == UInt8(ascii: "s")
    }

    // Pointers are computed only when something fails: a successful decode builds none.

    /// An error about a value: its pointer and position.
    func fail(_ kind: PayloadDecodingError.Kind, at node: JSONDocument.Node) -> PayloadDecodingError {
        if let recovery {
            return PayloadDecodingError(
                kind: kind, pointer: recovery.locator.pointer(to: node), location: recovery.locator.location(ofOffset: node.byteRange.lowerBound))
        }
        return PayloadDecodingError(kind: kind, pointer: document.pointer(to: node), location: node.location)
    }

    /// An error about a member's key: the member's pointer, the key's position.
    func fail(_ kind: PayloadDecodingError.Kind, atKeyOf member: JSONDocument.Member) -> PayloadDecodingError {
        if let recovery {
            return PayloadDecodingError(
                kind: kind, pointer: recovery.locator.pointer(to: member.value),
                location: recovery.locator.location(ofOffset: member.keyNode.byteRange.lowerBound))
        }
        return PayloadDecodingError(kind: kind, pointer: document.pointer(to: member.value), location: member.keyNode.location)
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

    /// Calls `read` with each member of `node` whose key is a `Key`, in source order (a repeated
    /// key is a ``duplicate(_:)``), and returns the other members, for `otherKeys`.
    @inline(__always)
    func readMembers<Key: KnownKey>(
        of node: JSONDocument.Node, as _: Key.Type, _ read: (Key, JSONDocument.Node) throws(PayloadDecodingError) -> Void
    ) throws(PayloadDecodingError) -> [JSONObject.Member] {
        var seen: UInt64 = 0
        var others: [JSONObject.Member] = []
        for member in node.members {
            guard let key = knownKey(member, as: Key.self) else {
                others.append(JSONObject.Member(key: member.key, value: member.value.value))
                continue
            }
            if !firstSighting(key, in: &seen) { try duplicate(member) }
            try read(key, member.value)
        }
        return others
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
        // The keys are read in place: a member is made only for `aps` (custom data may be a
        // hundred keys, and each member made holds the document twice).
        for keyIndex in root.memberKeyIndices {
            if document.withStringUTF8(atTapeIndex: keyIndex, Self.spellsAPS) == true {
                let member = document.member(atKey: keyIndex)
                let again = payload.hasAPS
                if again { try duplicate(member) }
                // Read in place in a lenient decode too (a value returned and stored would be
                // copied twice); one it cannot read is left out whole.
                let read = try payload.modifyAPS { (aps) throws(PayloadDecodingError) -> Bool in
                    if again { aps = APS.empty }  // the later value replaces the earlier
                    return try lenient { () throws(PayloadDecodingError) in try readAPS(member.value, into: &aps) } != nil
                }
                if !read { payload.aps = nil }
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
        let others = try readMembers(of: node, as: APSKey.self) { (key, value) throws(PayloadDecodingError) in
            switch key {
            case .alert:
                if recovery == nil { try readAlert(value, into: &aps.alert) } else {
                    aps.alert = nil
                    _ = try lenient { () throws(PayloadDecodingError) in try readAlert(value, into: &aps.alert) }
                }
            case .badge: aps.badge = try lenient(value, integer)
            case .sound: aps.sound = try lenient(value, sound)
            case .threadID: aps.threadID = try lenient(value, string)
            case .category: aps.category = try lenient(value, string)
            case .contentAvailable: aps.contentAvailable = try lenient(value, integer)
            case .mutableContent: aps.mutableContent = try lenient(value, integer)
            case .targetContentID: aps.targetContentID = try lenient(value, string)
            case .interruptionLevel:
                aps.interruptionLevel = try lenient(value, string).map(InterruptionLevel.init(rawValue:))
            case .relevanceScore: aps.relevanceScore = try lenient(value, double)
            case .filterCriteria: aps.filterCriteria = try lenient(value, string)
            case .timestamp: aps.timestamp = try lenient(value, double)
            case .event: aps.event = try lenient(value, string).map(LiveActivityEvent.init(rawValue:))
            // Kept in the document until read (a Live Activity's device keeps its last states).
            case .contentState: aps.contentStateStorage = try lenient(value, deferredObject)
            case .staleDate: aps.staleDate = try lenient(value, double)
            case .dismissalDate: aps.dismissalDate = try lenient(value, double)
            case .attributesType: aps.attributesType = try lenient(value, string)
            case .attributes: aps.attributes = try lenient(value, object)
            case .inputPushToken: aps.inputPushToken = try lenient(value, integer)
            case .inputPushChannel: aps.inputPushChannel = try lenient(value, string)
            case .contentChanged: aps.contentChanged = try lenient(value, bool)
            case .urlArgs: aps.urlArgs = try lenient { () throws(PayloadDecodingError) in try strings(value, numbersAsText: false) }
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
            var content = AlertContent.empty
            try readAlertContent(node, into: &content)
            alert = .content(consume content)
        default:
            throw fail(.typeMismatch(expected: "a string or a dictionary", found: node.kind), at: node)
        }
    }

    func readAlertContent(_ node: JSONDocument.Node, into content: inout AlertContent) throws(PayloadDecodingError) {
        let others = try readMembers(of: node, as: AlertKey.self) { (key, value) throws(PayloadDecodingError) in
            switch key {
            case .title: content.title = try lenient(value, alertText)
            case .subtitle: content.subtitle = try lenient(value, alertText)
            case .body: content.body = try lenient(value, alertText)
            case .launchImage: content.launchImage = try lenient(value, string)
            case .titleLocKey:
                content.titleLocKey = try lenient { () throws(PayloadDecodingError) in
                    try nullable(value) { () throws(PayloadDecodingError) in try string(value) }
                }
            case .titleLocArgs:
                content.titleLocArgs = try lenient { () throws(PayloadDecodingError) in
                    try nullable(value) { () throws(PayloadDecodingError) in try strings(value, numbersAsText: true) }
                }
            case .subtitleLocKey: content.subtitleLocKey = try lenient(value, string)
            case .subtitleLocArgs: content.subtitleLocArgs = try lenient { () throws(PayloadDecodingError) in try strings(value, numbersAsText: true) }
            case .locKey: content.locKey = try lenient(value, string)
            case .locArgs: content.locArgs = try lenient { () throws(PayloadDecodingError) in try strings(value, numbersAsText: true) }
            case .actionLocKey:
                content.actionLocKey = try lenient { () throws(PayloadDecodingError) in
                    try nullable(value) { () throws(PayloadDecodingError) in try string(value) }
                }
            case .action: content.action = try lenient(value, string)
            case .summaryArg: content.summaryArg = try lenient(value, string)
            case .summaryArgCount: content.summaryArgCount = try lenient(value, integer)
            case .sound: content.sound = try lenient(value, sound)
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
                    if key != nil { try duplicate(member) }
                    key = try lenient(member.value, string)
                case .locArgs?:
                    if arguments != nil { try duplicate(member) }
                    arguments = try lenient { () throws(PayloadDecodingError) in try strings(member.value, numbersAsText: true) }
                default:
                    let error = fail(.unexpectedKey(member.key, expected: "\"loc-key\" and \"loc-args\" in a localized text"), atKeyOf: member)
                    guard let recovery else { throw error }
                    recovery.entries.append((error, .dropped))
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
            let others = try readMembers(of: node, as: SoundKey.self) { (key, value) throws(PayloadDecodingError) in
                switch key {
                case .critical: sound.critical = try lenient(value, integer)
                case .name: sound.name = try lenient(value, string)
                case .volume: sound.volume = try lenient(value, double)
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

    /// An object left in the document, built when read.
    func deferredObject(_ node: JSONDocument.Node) throws(PayloadDecodingError) -> DeferredJSONObject {
        guard node.kind == .object else {
            throw fail(.typeMismatch(expected: "an object", found: node.kind), at: node)
        }
        return .node(node)
    }

    /// An array of strings. In a lenient decode an element of another type is left out, or,
    /// with `numbersAsText` (format arguments), a number or Boolean is read as its source text.
    func strings(_ node: JSONDocument.Node, numbersAsText: Bool) throws(PayloadDecodingError) -> [String] {
        guard node.kind == .array else {
            throw fail(.typeMismatch(expected: "an array of strings", found: node.kind), at: node)
        }
        var result: [String] = []
        result.reserveCapacity(node.count)
        for element in node.elements {
            guard let value = element.stringValue else {
                let error = fail(.typeMismatch(expected: "a string (format arguments are strings)", found: element.kind), at: element)
                guard let recovery else { throw error }
                if numbersAsText, element.kind == .number || element.kind == .bool {
                    recovery.entries.append((error, .readAsText(element.sourceText)))
                    result.append(element.sourceText)
                } else {
                    recovery.entries.append((error, .dropped))
                }
                continue
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
