/// An owned JSON value: the custom data of a payload, a Live Activity's `content-state`, or any
/// value a program builds.
///
/// Objects keep member order and duplicate keys, numbers keep their text, so writing a value
/// read from a document reproduces it.
///
/// ```swift
/// let custom: JSONValue = ["gameID": "12345678", "scores": [3, 4.5], "final": false]
/// ```
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, with its text.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, with members in order.
    case object(JSONObject)

    /// The kind of value.
    public var kind: JSONKind {
        switch self {
        case .null: .null
        case .bool: .bool
        case .number: .number
        case .string: .string
        case .array: .array
        case .object: .object
        }
    }

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, if this is one.
    public var numberValue: JSONNumber? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The boolean, if this is one.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The object, if this is one.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The value of the last member named `key`, if this is an object.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// Whether two values mean the same JSON: numbers compared by value, objects compared without
    /// regard to member order (members with the same key are compared in order, since the last
    /// one wins), arrays in order.
    public func isEquivalent(to other: JSONValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.bool(let lhs), .bool(let rhs)): return lhs == rhs
        case (.string(let lhs), .string(let rhs)): return lhs == rhs
        case (.number(let lhs), .number(let rhs)): return lhs.isNumericallyEqual(to: rhs)
        case (.array(let lhs), .array(let rhs)):
            return lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { $0.isEquivalent(to: $1) }
        case (.object(let lhs), .object(let rhs)):
            return lhs.isEquivalent(to: rhs)
        default: return false
        }
    }
}

/// A JSON object: members in order, duplicate keys allowed.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One member.
    public struct Member: Sendable, Hashable {
        /// The key.
        public var key: String
        /// The value.
        public var value: JSONValue

        /// Creates a member.
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The members, in order.
    public var members: [Member]

    /// Creates an object from members (kept as given, duplicates included).
    public init(members: [Member] = []) {
        self.members = members
    }

    /// Creates an object from a literal, keeping the order written.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.members = elements.map { Member(key: $0.0, value: $0.1) }
    }

    /// The number of members.
    public var count: Int { members.count }

    /// `true` when the object has no members.
    public var isEmpty: Bool { members.isEmpty }

    /// The keys, in order.
    public var keys: [String] { members.map(\.key) }

    /// Iterates the members in order.
    public func makeIterator() -> IndexingIterator<[Member]> { members.makeIterator() }

    /// The value of the last member named `key`. Setting replaces every member with that key by
    /// one member at the first one's place (or appends it); setting `nil` removes them all.
    public subscript(key: String) -> JSONValue? {
        get { members.last { $0.key == key }?.value }
        set {
            guard let newValue else {
                members.removeAll { $0.key == key }
                return
            }
            if let first = members.firstIndex(where: { $0.key == key }) {
                members[first].value = newValue
                var index = members.count - 1
                while index > first {
                    if members[index].key == key { members.remove(at: index) }
                    index -= 1
                }
            } else {
                members.append(Member(key: key, value: newValue))
            }
        }
    }

    /// Keys that occur more than once, in order of their second occurrence.
    public var duplicateKeys: [String] {
        var seen = Set<String>()
        var duplicates: [String] = []
        for member in members where !seen.insert(member.key).inserted && !duplicates.contains(member.key) {
            duplicates.append(member.key)
        }
        return duplicates
    }

    /// See ``JSONValue/isEquivalent(to:)``.
    public func isEquivalent(to other: JSONObject) -> Bool {
        guard count == other.count else { return false }
        var lhs: [String: [JSONValue]] = [:]
        var rhs: [String: [JSONValue]] = [:]
        for member in members { lhs[member.key, default: []].append(member.value) }
        for member in other.members { rhs[member.key, default: []].append(member.value) }
        guard lhs.count == rhs.count else { return false }
        for (key, values) in lhs {
            guard let others = rhs[key], others.count == values.count,
                  zip(values, others).allSatisfy({ $0.isEquivalent(to: $1) }) else { return false }
        }
        return true
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByStringInterpolation,
    ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
    /// A boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer.
    public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }
    /// A finite floating-point number.
    public init(floatLiteral value: Double) { self = .number(JSONNumber(floatLiteral: value)) }
    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object, keeping the order written.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(members: elements.map { JSONObject.Member(key: $0.0, value: $0.1) }))
    }
}
