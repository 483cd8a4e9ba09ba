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

    /// Writes the first value of each header ``APNsHeaderName`` names into `values` (all `nil`;
    /// a repeat counts once, as the subscript gives it), from one pass that reads the fields in
    /// place: a loop over the fields copies each one (a retain of its name and its value) only
    /// to look at the name, and the mock reads every request's fields this way twice
    /// (``APNsRequestHeaders`` and the linter). Written in place: a value returned from the
    /// pass's closure was copied out again.
    package func read(into values: inout KnownValues) {
        fields.withUnsafeBufferPointer { all in
            for index in all.indices {
                let known = all[index].name.utf8.withContiguousStorageIfAvailable { APNsHeaderName(lowercaseUTF8: $0) }
                    ?? APNsHeaderName(lowercase: all[index].name)
                guard let known else { continue }
                switch known {
                case .method: if values.method == nil { values.method = all[index].value }
                case .path: if values.path == nil { values.path = all[index].value }
                case .id: if values.id == nil { values.id = all[index].value }
                case .collapseID: if values.collapseID == nil { values.collapseID = all[index].value }
                case .priority: if values.priority == nil { values.priority = all[index].value }
                case .pushType: if values.pushType == nil { values.pushType = all[index].value }
                case .expiration: if values.expiration == nil { values.expiration = all[index].value }
                case .topic: if values.topic == nil { values.topic = all[index].value }
                case .channelID: if values.channelID == nil { values.channelID = all[index].value }
                case .authorization: if values.authorization == nil { values.authorization = all[index].value }
                }
            }
        }
    }

    /// The first value of each header ``APNsHeaderName`` names; `nil` where it was not sent.
    package struct KnownValues: Sendable {
        package init() {}

        package var method, path, id, collapseID, priority, pushType, expiration, topic, channelID, authorization: String?
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

    /// The name as HTTP/2 sends it, with no string made: compared byte for byte.
    private var spelling: StaticString {
        switch self {
        case .method: ":method"
        case .path: ":path"
        case .id: "apns-id"
        case .collapseID: "apns-collapse-id"
        case .priority: "apns-priority"
        case .pushType: "apns-push-type"
        case .expiration: "apns-expiration"
        case .topic: "apns-topic"
        case .channelID: "apns-channel-id"
        case .authorization: "authorization"
        }
    }

    /// The header a lowercase name is, or `nil` for any other name.
    package init?(lowercase name: String) {
        var name = name
        guard let known = name.withUTF8({ Self(lowercaseUTF8: $0) }) else { return nil }
        self = known
    }

    /// The header a lowercase name's UTF-8 is, read in place: told by its length, then compared
    /// with the one or two headers of that length.
    package init?(lowercaseUTF8 name: UnsafeBufferPointer<UInt8>) {
        let candidates: (APNsHeaderName, APNsHeaderName?)
        switch name.count {
        case 5: candidates = (.path, nil)
        case 7: candidates = (.method, .id)
        case 10: candidates = (.topic, nil)
        case 13: candidates = (.priority, .authorization)
        case 14: candidates = (.pushType, nil)
        case 15: candidates = (.expiration, .channelID)
        case 16: candidates = (.collapseID, nil)
        default: return nil
        }
        if candidates.0.isSpelled(by: name) {
            self = candidates.0
        } else if let second = candidates.1, second.isSpelled(by: name) {
            self = second
        } else {
            return nil
        }
    }

    /// Whether `name` (as long as this header's name) spells it.
    /// Eight bytes at a time: the names are 5 to 16 bytes, and each request's fields are read
    /// twice (`elementsEqual` compared byte by byte, 1% of the mock's time).
    @inline(__always)
    private func isSpelled(by name: UnsafeBufferPointer<UInt8>) -> Bool {
        let spelling = spelling
        let count = spelling.utf8CodeUnitCount
        guard name.count == count, let bytes = name.baseAddress else { return false }
        let expected = UnsafeRawPointer(spelling.utf8Start), given = UnsafeRawPointer(bytes)
        var offset = 0
        while offset + 8 <= count {
            guard expected.loadUnaligned(fromByteOffset: offset, as: UInt64.self) == given.loadUnaligned(fromByteOffset: offset, as: UInt64.self) else { return false }
            offset += 8
        }
        while offset < count {
            guard expected.load(fromByteOffset: offset, as: UInt8.self) == given.load(fromByteOffset: offset, as: UInt8.self) else { return false }
            offset += 1
        }
        return true
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
