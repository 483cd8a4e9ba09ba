/// A property-list value, as the old-style text, XML and binary formats all describe it.
public enum PropertyListValue: Sendable, Hashable {
    /// `<string>`, or a quoted or unquoted old-style string.
    case string(String)
    /// `<integer>` (binary 128-bit integers keep their low 64 bits).
    case integer(Int64)
    /// `<real>`.
    case real(Double)
    /// `<true/>` or `<false/>`.
    case boolean(Bool)
    /// `<date>`, as seconds since 2001-01-01 00:00:00 UTC (Apple's reference date).
    case date(Double)
    /// `<data>`, or old-style `<hex>`.
    case data([UInt8])
    /// `<array>`, or old-style `( … )`.
    case array([PropertyListValue])
    /// `<dict>`, or old-style `{ … }`.
    case dictionary(PropertyListDictionary)

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The dictionary, if this is one.
    public var dictionaryValue: PropertyListDictionary? {
        if case .dictionary(let value) = self { return value }
        return nil
    }

    /// A short name for the kind of value, for messages ("a dictionary", "an array").
    public var kindDescription: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .real: "a real number"
        case .boolean: "a Boolean"
        case .date: "a date"
        case .data: "data"
        case .array: "an array"
        case .dictionary: "a dictionary"
        }
    }
}

/// A property-list dictionary: string keys in file order, where a repeated key replaces the
/// earlier value (as `CFDictionarySetValue` does) but keeps its first position.
public struct PropertyListDictionary: Sendable, Hashable, Sequence {
    /// The keys, in the order they first appeared.
    public private(set) var keys: [String] = []
    private var values: [String: PropertyListValue] = [:]

    /// An empty dictionary.
    public init() {}

    /// The number of distinct keys.
    public var count: Int { keys.count }

    /// The value for `key`.
    public subscript(key: String) -> PropertyListValue? {
        values[key]
    }

    /// Sets `key`; returns `true` when it replaced an earlier value.
    @discardableResult
    public mutating func set(_ value: PropertyListValue, forKey key: String) -> Bool {
        if values.updateValue(value, forKey: key) == nil {
            keys.append(key)
            return false
        }
        return true
    }

    /// The entries in key order.
    public func makeIterator() -> some IteratorProtocol<(key: String, value: PropertyListValue)> {
        keys.lazy.map { (key: $0, value: values[$0]!) }.makeIterator()
    }
}
