extension JSONValue {
    /// The JSON value of any `Encodable`, as a JSON encoder would write it: structs and
    /// dictionaries become objects (members in the order they are encoded), arrays become arrays,
    /// `nil` optionals are left out by synthesized conformances.
    ///
    /// ```swift
    /// struct Match: Encodable { var id: Int; var teams: [String] }
    /// let value = try JSONValue(encoding: Match(id: 7, teams: ["A", "B"]))
    /// // {"id":7,"teams":["A","B"]}
    /// ```
    ///
    /// - Throws: `EncodingError.invalidValue` for a NaN or infinite number (JSON has neither),
    ///   with the coding path; any error the value's own `encode(to:)` throws.
    public init(encoding value: some Encodable) throws {
        let root = ValueEncoder.Slot()
        try value.encode(to: ValueEncoder(slot: root, codingPath: []))
        self = root.value
    }
}

/// The `Encoder` behind ``JSONValue/init(encoding:)``: every value encoded goes into a slot of
/// a tree of slots, read out as a `JSONValue` when encoding is done.
///
/// Slots are classes because containers handed out by an `Encoder` outlive the call that made
/// them and write into their parent after it returned. They never leave one `init(encoding:)`.
private struct ValueEncoder: Encoder {
    final class Slot {
        enum Content {
            case empty
            case value(JSONValue)
            case object([(String, Slot)])
            case array([Slot])
        }

        var content = Content.empty

        var value: JSONValue {
            switch content {
            case .empty: return .object([:])
            case .value(let value): return value
            case .object(let members): return .object(JSONObject(members: members.map { JSONObject.Member(key: $0.0, value: $0.1.value) }))
            case .array(let elements): return .array(elements.map(\.value))
            }
        }

        func child(forKey key: String) -> Slot {
            let slot = Slot()
            if case .object(var members) = content {
                members.removeAll { $0.0 == key }
                members.append((key, slot))
                content = .object(members)
            } else {
                content = .object([(key, slot)])
            }
            return slot
        }

        func appendChild() -> Slot {
            let slot = Slot()
            if case .array(var elements) = content {
                elements.append(slot)
                content = .array(elements)
            } else {
                content = .array([slot])
            }
            return slot
        }
    }

    let slot: Slot
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(slot: Slot, codingPath: [any CodingKey]) {
        self.slot = slot
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = slot.content {} else { slot.content = .object([]) }
        return KeyedEncodingContainer(Keyed<Key>(slot: slot, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = slot.content {} else { slot.content = .array([]) }
        return Unkeyed(slot: slot, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        Single(slot: slot, codingPath: codingPath)
    }

    static func number(_ value: Double, at path: [any CodingKey]) throws -> JSONValue {
        guard let number = JSONNumber(value) else {
            throw EncodingError.invalidValue(value, EncodingError.Context(codingPath: path, debugDescription: "JSON cannot represent \(value)"))
        }
        return .number(number)
    }

    /// Encodes `value` into `slot`: primitives directly, anything else through its `encode(to:)`.
    static func encode(_ value: some Encodable, into slot: Slot, at path: [any CodingKey]) throws {
        switch value {
        case let json as JSONValue: slot.content = .value(json)
        case let string as String: slot.content = .value(.string(string))
        case let flag as Bool: slot.content = .value(.bool(flag))
        case let double as Double: slot.content = .value(try number(double, at: path))
        case let float as Float: slot.content = .value(try number(Double(float), at: path))
        default: try value.encode(to: ValueEncoder(slot: slot, codingPath: path))
        }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let slot: Slot
        var codingPath: [any CodingKey]

        mutating func encodeNil(forKey key: Key) throws { slot.child(forKey: key.stringValue).content = .value(.null) }

        mutating func encode(_ value: some Encodable, forKey key: Key) throws {
            try ValueEncoder.encode(value, into: slot.child(forKey: key.stringValue), at: codingPath + [key])
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            ValueEncoder(slot: slot.child(forKey: key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            ValueEncoder(slot: slot.child(forKey: key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            ValueEncoder(slot: slot.child(forKey: "super"), codingPath: codingPath + [AnyCodingKey("super")])
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            ValueEncoder(slot: slot.child(forKey: key.stringValue), codingPath: codingPath + [key])
        }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let slot: Slot
        var codingPath: [any CodingKey]
        var count: Int {
            if case .array(let elements) = slot.content { return elements.count }
            return 0
        }

        private var nextPath: [any CodingKey] { codingPath + [AnyCodingKey(String(count))] }

        mutating func encodeNil() throws { slot.appendChild().content = .value(.null) }

        mutating func encode(_ value: some Encodable) throws {
            let path = nextPath
            try ValueEncoder.encode(value, into: slot.appendChild(), at: path)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let path = nextPath
            return ValueEncoder(slot: slot.appendChild(), codingPath: path).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let path = nextPath
            return ValueEncoder(slot: slot.appendChild(), codingPath: path).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            let path = nextPath
            return ValueEncoder(slot: slot.appendChild(), codingPath: path)
        }
    }

    struct Single: SingleValueEncodingContainer {
        let slot: Slot
        var codingPath: [any CodingKey]

        mutating func encodeNil() throws { slot.content = .value(.null) }
        mutating func encode(_ value: Bool) throws { slot.content = .value(.bool(value)) }
        mutating func encode(_ value: String) throws { slot.content = .value(.string(value)) }
        mutating func encode(_ value: Double) throws { slot.content = .value(try ValueEncoder.number(value, at: codingPath)) }
        mutating func encode(_ value: Float) throws { slot.content = .value(try ValueEncoder.number(Double(value), at: codingPath)) }
        mutating func encode(_ value: Int) throws { slot.content = .value(.number(JSONNumber(value))) }
        mutating func encode(_ value: Int8) throws { slot.content = .value(.number(JSONNumber(value))) }
        mutating func encode(_ value: Int16) throws { slot.content = .value(.number(JSONNumber(value))) }
        mutating func encode(_ value: Int32) throws { slot.content = .value(.number(JSONNumber(value))) }
        mutating func encode(_ value: Int64) throws { slot.content = .value(.number(JSONNumber(value))) }
        mutating func encode(_ value: UInt) throws { slot.content = .value(.number(JSONNumber(value))) }
        mutating func encode(_ value: UInt8) throws { slot.content = .value(.number(JSONNumber(value))) }
        mutating func encode(_ value: UInt16) throws { slot.content = .value(.number(JSONNumber(value))) }
        mutating func encode(_ value: UInt32) throws { slot.content = .value(.number(JSONNumber(value))) }
        mutating func encode(_ value: UInt64) throws { slot.content = .value(.number(JSONNumber(value))) }
        mutating func encode(_ value: some Encodable) throws { try ValueEncoder.encode(value, into: slot, at: codingPath) }
    }
}
