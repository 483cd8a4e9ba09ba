/// An APNs request's header fields as they travel: names and values, in order, repeats kept.
///
/// This is the wire form that the client writes and the mock reads, and what the linter
/// reports on (an invalid value is kept as sent, so it can be named). ``APNsRequestHeaders`` is
/// the typed form; it parses from and writes to these fields. Names are stored in lowercase, as
/// HTTP/2 sends them.
///
/// ```swift
/// var fields = APNsHeaderFields()
/// fields[APNsHeader.priority] = "5"
/// fields.append(name: ":path", value: "/3/device/" + token)
/// ```
public struct APNsHeaderFields: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One header field.
    public struct Field: Sendable, Hashable {
        /// The name, in lowercase.
        public var name: String
        /// The value, as sent.
        public var value: String

        /// A field whose name is lowercase already (an HTTP/2 server's, checked as it read it).
        package init(lowercaseName name: String, value: String) {
            self.name = name
            self.value = value
        }

        /// A field; the name is lowercased.
        public init(name: String, value: String) {
            self.name = APNsHeaderFields.lowercase(name)
            self.value = value
        }
    }

    /// The fields, in order.
    public private(set) var fields: [Field]

    /// No fields.
    public init() {
        fields = []
    }

    /// The given fields, in order.
    public init(_ fields: some Sequence<Field>) {
        self.fields = Array(fields)
    }

    /// Fields from a literal: `[APNsHeader.pushType: "alert"]`.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// Appends a field (a repeat of a name is kept: APNs answers `DuplicateHeaders`).
    public mutating func append(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Appends a field whose name is lowercase already (the mock's HTTP/2 session checks names
    /// as it reads them).
    package mutating func append(lowercaseName name: String, value: String) {
        fields.append(Field(lowercaseName: name, value: value))
    }

    /// Makes room for `count` fields in all, so that appending a request's header block grows
    /// the list once, not at 1, 2, 4 and 8 fields.
    package mutating func reserveCapacity(_ count: Int) {
        fields.reserveCapacity(count)
    }

    /// The first value of a header, or `nil`. Setting replaces every field of that name by one
    /// (or removes them all when `nil`).
    public subscript(name: String) -> String? {
        get {
            let name = Self.lowercase(name)
            // Lengths first: most fields differ in length, and comparing those is a load.
            let length = name.utf8.count
            for index in fields.indices where fields[index].name.utf8.count == length && fields[index].name == name { return fields[index].value }
            return nil
        }
        set {
            let name = Self.lowercase(name)
            if let newValue {
                if let first = fields.firstIndex(where: { $0.name == name }) {
                    fields[first].value = newValue
                    fields = fields.enumerated().filter { $0.offset <= first || $0.element.name != name }.map(\.element)
                } else {
                    fields.append(Field(name: name, value: newValue))
                }
            } else {
                fields.removeAll { $0.name == name }
            }
        }
    }

    /// `name` in lowercase; names that already are (every constant of ``APNsHeader``) are
    /// returned as they are, without building a new string.
    @inline(__always)
    static func lowercase(_ name: String) -> String {
        var copy = name
        let hasUppercase = copy.withUTF8 { bytes in bytes.contains { $0 &- UInt8(ascii: "A") < 26 } }
        return hasUppercase ? name.lowercased() : name
    }

    /// Whether a header is present.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// The names that occur more than once, in order of their second occurrence.
    public var repeatedNames: [String] {
        // A request has a dozen fields: comparing each with those before it beats hashing, and
        // lengths first, since most names differ in length and comparing those is a load.
        var repeated: [String] = []
        for index in fields.indices {
            let name = fields[index].name
            let length = name.utf8.count
            if fields[..<index].contains(where: { $0.name.utf8.count == length && $0.name == name }), !repeated.contains(name) {
                repeated.append(name)
            }
        }
        return repeated
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }
}

/// The request headers that ``APNsRequestHeaders`` and the linter read, recognised from a
/// field's lowercase name.
///
/// Both read every request the mock answers, so a name is told by its length first, then
/// compared with the one or two headers of that length (comparing it with each name in turn
/// cost the mock about 1% of a request).
package enum APNsHeaderName: Sendable, Hashable, CaseIterable {
    case method, path, id, collapseID, priority, pushType, expiration, topic, channelID, authorization

    /// The name as HTTP/2 sends it.
    package var text: String {
        switch self {
        case .method: ":method"
        case .path: ":path"
        case .id: APNsHeader.id
        case .collapseID: APNsHeader.collapseID
        case .priority: APNsHeader.priority
        case .pushType: APNsHeader.pushType
        case .expiration: APNsHeader.expiration
        case .topic: APNsHeader.topic
        case .channelID: APNsHeader.channelID
        case .authorization: APNsHeader.authorization
        }
    }

    /// The header a lowercase name is, or `nil` for any other name.
    package init?(lowercase name: String) {
        let candidates: (APNsHeaderName, APNsHeaderName?)
        switch name.utf8.count {
        case 5: candidates = (.path, nil)
        case 7: candidates = (.method, .id)
        case 10: candidates = (.topic, nil)
        case 13: candidates = (.priority, .authorization)
        case 14: candidates = (.pushType, nil)
        case 15: candidates = (.expiration, .channelID)
        case 16: candidates = (.collapseID, nil)
        default: return nil
        }
        if name == candidates.0.text {
            self = candidates.0
        } else if let second = candidates.1, name == second.text {
            self = second
        } else {
            return nil
        }
    }
}

extension String {
    /// What follows `prefix` (ASCII, compared byte for byte), or `nil` when the string does not
    /// start with it. Unlike `dropFirst`, this walks no characters: a path's device token is
    /// taken this way for every request.
    package func suffix(afterASCIIPrefix prefix: String) -> String? {
        var text = self
        var prefix = prefix
        return text.withUTF8 { bytes in
            prefix.withUTF8 { head -> String? in
                guard bytes.count >= head.count, bytes.prefix(head.count).elementsEqual(head) else { return nil }
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[head.count...]), as: UTF8.self)
            }
        }
    }
}
