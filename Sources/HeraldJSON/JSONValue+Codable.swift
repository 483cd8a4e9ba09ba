extension JSONValue: Codable {
    /// Decodes any JSON value from a `Decoder` (for use inside `Codable` models).
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyCodingKey.self) {
            var members: [JSONObject.Member] = []
            for key in object.allKeys {
                members.append(JSONObject.Member(key: key.stringValue, value: try object.decode(JSONValue.self, forKey: key)))
            }
            self = .object(JSONObject(members: members))
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let flag = try? single.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? single.decode(Int64.self) {
            self = .number(JSONNumber(integer))
        } else if let double = try? single.decode(Double.self), let number = JSONNumber(double) {
            self = .number(number)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    /// Encodes the value into an `Encoder`. Number text is preserved only as far as the encoder
    /// allows: integers as `Int64`, others as `Double`.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let flag):
            var single = encoder.singleValueContainer()
            try single.encode(flag)
        case .number(let number):
            var single = encoder.singleValueContainer()
            if let integer = number.int64Value {
                try single.encode(integer)
            } else {
                try single.encode(number.doubleValue)
            }
        case .string(let text):
            var single = encoder.singleValueContainer()
            try single.encode(text)
        case .array(let elements):
            var array = encoder.unkeyedContainer()
            for element in elements { try array.encode(element) }
        case .object(let object):
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            for member in object.members {
                try container.encode(member.value, forKey: AnyCodingKey(member.key))
            }
        }
    }
}

/// A coding key for any string (custom payload keys, unknown `aps` keys).
public struct AnyCodingKey: CodingKey, Sendable, Hashable {
    /// The key.
    public var stringValue: String
    /// Always `nil`: payload keys are strings.
    public var intValue: Int? { nil }

    /// Creates a key.
    public init(_ string: String) { self.stringValue = string }
    /// Creates a key.
    public init?(stringValue: String) { self.stringValue = stringValue }
    /// Creates a key from an index, spelled in decimal.
    public init?(intValue: Int) { self.stringValue = String(intValue) }
}
