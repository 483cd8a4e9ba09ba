import HeraldJSON

/// Why a payload cannot be encoded: JSON has no NaN or infinity.
public struct PayloadEncodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The value that is not a finite number, such as `/aps/relevance-score`.
    public var pointer: JSONPointer

    /// A sentence naming the value.
    public var description: String { "\(pointer) is not a finite number; JSON cannot represent NaN or infinity" }
}

/// Why a custom key cannot be added to a payload.
public struct PayloadBuildError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The key.
    public var key: String
    /// What is wrong.
    public var problem: String

    /// `custom key "…": problem`.
    public var description: String { "custom key \"\(key)\": \(problem)" }
}

extension Payload {
    /// The compact JSON bytes, exactly as Herald sends them and APNs measures them.
    ///
    /// `aps` comes first, its keys in the order of Apple's tables, then custom keys in order.
    public func encode() throws(PayloadEncodingError) -> [UInt8] {
        if let pointer = firstNonFiniteNumber() { throw PayloadEncodingError(pointer: pointer) }
        // Most payloads are a few hundred bytes; larger ones take a second, exact-size pass.
        return [UInt8](writingJSON: 512) { output in
            // A fixed-buffer output is two words; copying it into the writer costs nothing.
            var writer = JSONWriter(output: output)
            write(to: &writer)
            output = writer.output
        }
    }

    /// Appends the compact JSON to any output (an array, a byte counter, a network buffer).
    public func encode<Output: JSONOutput>(into output: inout Output) throws(PayloadEncodingError) {
        // Check before writing, so a failure leaves `output` untouched.
        if let pointer = firstNonFiniteNumber() { throw PayloadEncodingError(pointer: pointer) }
        var writer = JSONWriter(output: consume output)
        write(to: &writer)
        output = writer.output
    }

    /// Appends the compact JSON to a byte array.
    public func encode(into bytes: inout [UInt8]) throws(PayloadEncodingError) {
        var output = JSONBytes(consume bytes)
        defer { bytes = output.bytes }
        try encode(into: &output)
    }

    /// The exact size of the encoded payload in bytes, without building it.
    public func encodedSize() throws(PayloadEncodingError) -> Int {
        var counter = JSONByteCounter()
        try encode(into: &counter)
        return counter.count
    }

    /// The compact JSON as a string.
    public func encodedString() throws(PayloadEncodingError) -> String {
        String(decoding: try encode(), as: UTF8.self)
    }

    /// Writes the payload as the next value of a writer (for embedding it in a larger document).
    /// A non-finite `Double` is written as `null`; ``encode()`` refuses it instead.
    public func write<Output: JSONOutput>(to writer: inout JSONWriter<Output>) {
        writer.beginObject()
        if hasAPS {
            writer.key(PayloadKey.aps)
            writeStoredAPS(to: &writer)
        }
        switch customStorage {
        case .values(let object):
            object.members.withUnsafeBufferPointer { members in
                for index in members.indices {
                    writer.key(members[index].key)
                    writer.value(members[index].value)
                }
            }
        case .source(let document):
            // A decoded payload's custom data is written from the source, span by span.
            for member in document.root.members where !member.keyNode.stringEquals(PayloadReader.apsKey) {
                writer.member(member)
            }
        }
        writer.endObject()
    }

    /// The pointer to the first `Double` that JSON cannot hold. Runs on every encode, so it
    /// allocates nothing unless it finds one.
    func firstNonFiniteNumber() -> JSONPointer? {
        hasAPS ? firstNonFiniteAPSNumber() : nil
    }
}

extension APS {
    /// ``firstNonFiniteNumber()`` of an `aps` in place (not changed; `inout` passes its address).
    static func firstNonFiniteNumber(in aps: inout APS) -> JSONPointer? {
        aps.firstNonFiniteNumber()
    }

    /// ``write(to:)`` of an `aps` in place (not changed; `inout` passes its address).
    static func write<Output: JSONOutput>(_ aps: inout APS, to writer: inout JSONWriter<Output>) {
        aps.write(to: &writer)
    }

    /// The pointer to the first `Double` of `aps` that JSON cannot hold.
    func firstNonFiniteNumber() -> JSONPointer? {
        func bad(_ value: Double?) -> Bool { value.map { !$0.isFinite } ?? false }
        func pointer(_ tokens: String...) -> JSONPointer { JSONPointer(tokens: [PayloadKey.aps.description] + tokens) }
        if bad(relevanceScore) { return pointer(APSKey.relevanceScore.description) }
        if bad(timestamp) { return pointer(APSKey.timestamp.description) }
        if bad(staleDate) { return pointer(APSKey.staleDate.description) }
        if bad(dismissalDate) { return pointer(APSKey.dismissalDate.description) }
        if bad(sound?.criticalVolume) { return pointer(APSKey.sound.description, SoundKey.volume.description) }
        if bad(alert?.contentSound?.criticalVolume) {
            return pointer(APSKey.alert.description, AlertKey.sound.description, SoundKey.volume.description)
        }
        return nil
    }
}

extension APS {
    func write<Output: JSONOutput>(to writer: inout JSONWriter<Output>) {
        writer.beginObject()
        if case .some = alert { writer.key(APSKey.alert.name) }
        alert?.write(to: &writer)
        writer.member(APSKey.badge.name, badge)
        if case .some = sound { writer.key(APSKey.sound.name) }
        sound?.write(to: &writer)
        writer.member(APSKey.threadID.name, threadID)
        writer.member(APSKey.category.name, category)
        writer.member(APSKey.contentAvailable.name, contentAvailable)
        writer.member(APSKey.mutableContent.name, mutableContent)
        writer.member(APSKey.targetContentID.name, targetContentID)
        writer.member(APSKey.interruptionLevel.name, interruptionLevel?.rawValue)
        writer.member(APSKey.relevanceScore.name, relevanceScore)
        writer.member(APSKey.filterCriteria.name, filterCriteria)
        writer.member(APSKey.timestamp.name, timestamp)
        writer.member(APSKey.event.name, event?.rawValue)
        writer.member(APSKey.contentState.name, contentStateStorage)
        writer.member(APSKey.staleDate.name, staleDate)
        writer.member(APSKey.dismissalDate.name, dismissalDate)
        writer.member(APSKey.attributesType.name, attributesType)
        writer.member(APSKey.attributes.name, attributes)
        writer.member(APSKey.inputPushToken.name, inputPushToken)
        writer.member(APSKey.inputPushChannel.name, inputPushChannel)
        writer.member(APSKey.contentChanged.name, contentChanged)
        writer.member(APSKey.urlArgs.name, urlArgs)
        writer.members(otherKeys)
        writer.endObject()
    }
}

extension Alert {
    func write<Output: JSONOutput>(to writer: inout JSONWriter<Output>) {
        switch self {
        case .body(let text):
            writer.string(text)
        case .content(let content):
            content.write(to: &writer)
        }
    }

    /// The sound inside an alert dictionary (Live Activity alerts).
    var contentSound: Sound? {
        if case .content(let content) = self { return content.sound }
        return nil
    }
}

extension AlertContent {
    func write<Output: JSONOutput>(to writer: inout JSONWriter<Output>) {
        writer.beginObject()
        writeText(title, .title, &writer)
        writeText(subtitle, .subtitle, &writer)
        writeText(body, .body, &writer)
        writer.member(AlertKey.launchImage.name, launchImage)
        writer.member(AlertKey.titleLocKey.name, titleLocKey)
        writer.member(AlertKey.titleLocArgs.name, titleLocArgs)
        writer.member(AlertKey.subtitleLocKey.name, subtitleLocKey)
        writer.member(AlertKey.subtitleLocArgs.name, subtitleLocArgs)
        writer.member(AlertKey.locKey.name, locKey)
        writer.member(AlertKey.locArgs.name, locArgs)
        writer.member(AlertKey.actionLocKey.name, actionLocKey)
        writer.member(AlertKey.action.name, action)
        writer.member(AlertKey.summaryArg.name, summaryArg)
        writer.member(AlertKey.summaryArgCount.name, summaryArgCount)
        if case .some = sound { writer.key(AlertKey.sound.name) }
        sound?.write(to: &writer)
        writer.members(otherKeys)
        writer.endObject()
    }

    private func writeText<Output>(_ value: AlertText?, _ key: AlertKey, _ writer: inout JSONWriter<Output>) {
        guard let value else { return }
        writer.key(key.name)
        switch value {
        case .text(let text):
            writer.string(text)
        case .localized(let locKey, let arguments):
            writer.beginObject()
            writer.member(AlertKey.locKey.name, locKey)
            writer.member(AlertKey.locArgs.name, arguments)
            writer.endObject()
        }
    }
}

extension Nullable {
    func write<Output>(to writer: inout JSONWriter<Output>, value: (Wrapped, inout JSONWriter<Output>) -> Void) {
        switch self {
        case .null: writer.null()
        case .value(let wrapped): value(wrapped, &writer)
        }
    }
}

extension Sound {
    /// The volume of a critical sound.
    var criticalVolume: Double? {
        if case .critical(let sound) = self { return sound.volume }
        return nil
    }

    func write<Output: JSONOutput>(to writer: inout JSONWriter<Output>) {
        switch self {
        case .named(let name):
            writer.string(name)
        case .critical(let sound):
            writer.beginObject()
            writer.member(SoundKey.critical.name, sound.critical)
            writer.member(SoundKey.name.name, sound.name)
            writer.member(SoundKey.volume.name, sound.volume)
            writer.members(sound.otherKeys)
            writer.endObject()
        }
    }
}

/// One line per optional member: the key and value are written only when the value is present.
extension JSONWriter {
    mutating func member(_ key: StaticString, _ value: String?) { member(key, value) { $0.string($1) } }
    mutating func member(_ key: StaticString, _ value: Int?) { member(key, value) { $0.integer($1) } }
    mutating func member(_ key: StaticString, _ value: Double?) { member(key, value) { $0.double($1) } }
    mutating func member(_ key: StaticString, _ value: Bool?) { member(key, value) { $0.bool($1) } }
    mutating func member(_ key: StaticString, _ value: [String]?) { member(key, value) { $0.strings($1) } }
    mutating func member(_ key: StaticString, _ value: JSONObject?) { member(key, value) { $0.value(.object($1)) } }
    /// A decoded object is written from its document, without building it.
    mutating func member(_ key: StaticString, _ value: DeferredJSONObject?) {
        member(key, value) { writer, value in
            switch value {
            case .value(let object): writer.value(.object(object))
            case .node(let node): writer.value(node)
            }
        }
    }
    mutating func member(_ key: StaticString, _ value: Nullable<String>?) { member(key, value) { $1.write(to: &$0) { $1.string($0) } } }
    mutating func member(_ key: StaticString, _ value: Nullable<[String]>?) { member(key, value) { $1.write(to: &$0) { $1.strings($0) } } }

    /// Writes the key and, through `write`, the value, when there is a value.
    @inline(__always)
    private mutating func member<Value>(_ key: StaticString, _ value: Value?, _ write: (inout JSONWriter, Value) -> Void) {
        guard let value else { return }
        self.key(key)
        write(&self, value)
    }

    /// Writes every member of an object into the object being written.
    mutating func members(_ object: JSONObject) {
        for member in object.members {
            key(member.key)
            value(member.value)
        }
    }

    mutating func strings(_ values: [String]) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }
}
