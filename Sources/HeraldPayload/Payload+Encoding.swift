import HeraldJSON

/// Why a payload cannot be encoded: JSON has no NaN or infinity.
public struct PayloadEncodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The value that is not a finite number, such as `/aps/relevance-score`.
    public var pointer: JSONPointer

    /// A sentence naming the value.
    public var description: String { "\(pointer) is not a finite number; JSON cannot represent NaN or infinity" }
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
    ///
    /// - Precondition: every `Double` in the payload is finite.
    public func write<Output: JSONOutput>(to writer: inout JSONWriter<Output>) {
        writer.beginObject()
        if hasAPS {
            writer.key(PayloadKey.aps)
            storedAPS.write(to: &writer)
        }
        for member in custom.members {
            writer.key(member.key)
            writer.value(member.value)
        }
        writer.endObject()
    }

    /// The pointer to the first `Double` that JSON cannot hold. Runs on every encode, so it
    /// allocates nothing unless it finds one.
    func firstNonFiniteNumber() -> JSONPointer? {
        func bad(_ value: Double?) -> Bool { value.map { !$0.isFinite } ?? false }
        func pointer(_ tokens: String...) -> JSONPointer { JSONPointer(tokens: [PayloadKey.aps.description] + tokens) }
        guard hasAPS else { return nil }
        if bad(storedAPS.relevanceScore) { return pointer(APSKey.relevanceScore.description) }
        if bad(storedAPS.timestamp) { return pointer(APSKey.timestamp.description) }
        if bad(storedAPS.staleDate) { return pointer(APSKey.staleDate.description) }
        if bad(storedAPS.dismissalDate) { return pointer(APSKey.dismissalDate.description) }
        if bad(storedAPS.sound?.criticalVolume) { return pointer(APSKey.sound.description, SoundKey.volume.description) }
        if bad(storedAPS.alert?.contentSound?.criticalVolume) {
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
        if let badge {
            writer.key(APSKey.badge.name)
            writer.integer(badge)
        }
        if case .some = sound { writer.key(APSKey.sound.name) }
        sound?.write(to: &writer)
        writeString(threadID, .threadID, &writer)
        writeString(category, .category, &writer)
        writeInteger(contentAvailable, .contentAvailable, &writer)
        writeInteger(mutableContent, .mutableContent, &writer)
        writeString(targetContentID, .targetContentID, &writer)
        writeString(interruptionLevel?.rawValue, .interruptionLevel, &writer)
        writeDouble(relevanceScore, .relevanceScore, &writer)
        writeString(filterCriteria, .filterCriteria, &writer)
        writeDouble(timestamp, .timestamp, &writer)
        writeString(event?.rawValue, .event, &writer)
        writeObject(contentState, .contentState, &writer)
        writeDouble(staleDate, .staleDate, &writer)
        writeDouble(dismissalDate, .dismissalDate, &writer)
        writeString(attributesType, .attributesType, &writer)
        writeObject(attributes, .attributes, &writer)
        writeInteger(inputPushToken, .inputPushToken, &writer)
        writeString(inputPushChannel, .inputPushChannel, &writer)
        if let contentChanged {
            writer.key(APSKey.contentChanged.name)
            writer.bool(contentChanged)
        }
        for member in otherKeys.members {
            writer.key(member.key)
            writer.value(member.value)
        }
        writer.endObject()
    }

    private func writeString<Output>(_ value: String?, _ key: APSKey, _ writer: inout JSONWriter<Output>) {
        guard let value else { return }
        writer.key(key.name)
        writer.string(value)
    }

    private func writeInteger<Output>(_ value: Int?, _ key: APSKey, _ writer: inout JSONWriter<Output>) {
        guard let value else { return }
        writer.key(key.name)
        writer.integer(value)
    }

    private func writeDouble<Output>(_ value: Double?, _ key: APSKey, _ writer: inout JSONWriter<Output>) {
        guard let value else { return }
        writer.key(key.name)
        writer.double(value)
    }

    private func writeObject<Output>(_ value: JSONObject?, _ key: APSKey, _ writer: inout JSONWriter<Output>) {
        guard let value else { return }
        writer.key(key.name)
        writer.value(.object(value))
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
        writeString(launchImage, .launchImage, &writer)
        if let titleLocKey {
            writer.key(AlertKey.titleLocKey.name)
            titleLocKey.write(to: &writer) { $1.string($0) }
        }
        if let titleLocArgs {
            writer.key(AlertKey.titleLocArgs.name)
            titleLocArgs.write(to: &writer) { Self.writeStrings($0, &$1) }
        }
        writeString(subtitleLocKey, .subtitleLocKey, &writer)
        writeStrings(subtitleLocArgs, .subtitleLocArgs, &writer)
        writeString(locKey, .locKey, &writer)
        writeStrings(locArgs, .locArgs, &writer)
        if let actionLocKey {
            writer.key(AlertKey.actionLocKey.name)
            actionLocKey.write(to: &writer) { $1.string($0) }
        }
        writeString(action, .action, &writer)
        writeString(summaryArg, .summaryArg, &writer)
        if let summaryArgCount {
            writer.key(AlertKey.summaryArgCount.name)
            writer.integer(summaryArgCount)
        }
        if case .some = sound { writer.key(AlertKey.sound.name) }
        sound?.write(to: &writer)
        for member in otherKeys.members {
            writer.key(member.key)
            writer.value(member.value)
        }
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
            writer.key(AlertKey.locKey.name)
            writer.string(locKey)
            if let arguments {
                writer.key(AlertKey.locArgs.name)
                Self.writeStrings(arguments, &writer)
            }
            writer.endObject()
        }
    }

    private func writeString<Output>(_ value: String?, _ key: AlertKey, _ writer: inout JSONWriter<Output>) {
        guard let value else { return }
        writer.key(key.name)
        writer.string(value)
    }

    private func writeStrings<Output>(_ value: [String]?, _ key: AlertKey, _ writer: inout JSONWriter<Output>) {
        guard let value else { return }
        writer.key(key.name)
        Self.writeStrings(value, &writer)
    }

    static func writeStrings<Output>(_ values: [String], _ writer: inout JSONWriter<Output>) {
        writer.beginArray()
        for value in values { writer.string(value) }
        writer.endArray()
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
            if let critical = sound.critical {
                writer.key(SoundKey.critical.name)
                writer.integer(critical)
            }
            if let name = sound.name {
                writer.key(SoundKey.name.name)
                writer.string(name)
            }
            if let volume = sound.volume {
                writer.key(SoundKey.volume.name)
                writer.double(volume)
            }
            for member in sound.otherKeys.members {
                writer.key(member.key)
                writer.value(member.value)
            }
            writer.endObject()
        }
    }
}
