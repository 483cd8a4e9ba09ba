#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension JSONDocument {
    /// One value in a ``JSONDocument``: a cheap view (the document and a tape index).
    ///
    /// Accessors that do not apply to the node's kind return `nil` (``stringValue`` of a number)
    /// or nothing (``elements`` of an object).
    public struct Node: Sendable {
        /// The document that holds this value.
        public let document: JSONDocument
        /// The value's position in the document's tape; stable for the life of the document.
        public let index: Int

        @inlinable
        init(document: JSONDocument, index: Int) {
            self.document = document
            self.index = index
        }

        @inlinable
        var entry: JSONTapeEntry { document.tape[index] }

        /// The kind of value.
        @inlinable
        public var kind: JSONKind { entry.kind }

        /// The bytes of the value's source text (including quotes and brackets).
        @inlinable
        public var byteRange: Range<Int> { Int(entry.start)..<Int(entry.end) }

        /// Where the value starts in the source: its first byte. Scans the text up to the value;
        /// for many lookups in one document use ``SourceLocator``.
        public var location: SourceLocation {
            SourceLocation.scan(document.source, upTo: Int(entry.start))
        }

        /// The value's source text, exactly as written.
        public var sourceText: String {
            String(decoding: document.source[byteRange], as: UTF8.self)
        }

        // MARK: Scalars

        /// `true` if the value is `null`.
        @inlinable
        public var isNull: Bool { entry.kind == .null }

        /// The value of a boolean.
        @inlinable
        public var boolValue: Bool? { entry.kind == .bool ? entry.flag : nil }

        /// The decoded value of a string (escapes resolved).
        public var stringValue: String? {
            guard entry.kind == .string else { return nil }
            return document.decodeString(entry)
        }

        /// `true` for a string whose source uses a backslash escape.
        @inlinable
        public var stringHasEscapes: Bool { entry.kind == .string && entry.flag }

        /// The bytes between a string's quotes, as written (escapes not resolved).
        @inlinable
        public var rawStringBytes: Range<Int> { Int(entry.start) + 1..<Int(entry.end) - 1 }

        /// `true` if this is a string equal to `text`, compared without allocating when the source
        /// has no escapes.
        public func stringEquals(_ text: String) -> Bool {
            let entry = self.entry
            guard entry.kind == .string else { return false }
            if entry.flag { return document.decodeString(entry) == text }
            let range = rawStringBytes
            // Lengths first: most keys asked about ("aps") differ in length from the key.
            guard text.utf8.count == range.count else { return false }
            guard range.count > 0 else { return true }
            let source = document.source.baseAddress! + range.lowerBound
            // Keys asked about are short: compared in place, with no call to `memcmp`.
            return text.utf8.withContiguousStorageIfAvailable { utf8 in
                if utf8.count <= 16 {
                    for offset in 0..<utf8.count where utf8[offset] != source[offset] { return false }
                    return true
                }
                return memcmp(utf8.baseAddress!, source, range.count) == 0
            } ?? text.utf8.elementsEqual(UnsafeBufferPointer(start: source, count: range.count))
        }

        /// Calls `body` with a string's UTF-8, decoded: the source bytes themselves when the string
        /// has no escapes (no allocation), a decoded copy otherwise. `nil` if this is not a string.
        @inlinable
        public func withUTF8<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result? {
            try document.withStringUTF8(atTapeIndex: index, body)
        }

        /// `true` if both are strings with the same decoded value (compared without allocating
        /// when neither has escapes). Works for object keys too.
        public func hasSameString(as other: Node) -> Bool {
            let lhs = entry
            let rhs = other.entry
            guard lhs.kind == .string, rhs.kind == .string else { return false }
            if lhs.flag || rhs.flag { return document.decodeString(lhs) == other.document.decodeString(rhs) }
            let leftRange = Int(lhs.start) + 1..<Int(lhs.end) - 1
            let rightRange = Int(rhs.start) + 1..<Int(rhs.end) - 1
            guard leftRange.count == rightRange.count else { return false }
            return document.source[leftRange].elementsEqual(other.document.source[rightRange])
        }

        /// The number, with its source text.
        public var number: JSONNumber? {
            guard entry.kind == .number else { return nil }
            return JSONNumber(validatedText: String(decoding: document.source[byteRange], as: UTF8.self))
        }

        /// `true` for a number written with a fraction or an exponent (`1.0`, `1e3`).
        @inlinable
        public var numberHasFractionOrExponent: Bool { entry.kind == .number && entry.flag }

        /// The value of a number written as an integer (no fraction, no exponent) that fits in 64
        /// bits.
        public var int64Value: Int64? {
            let entry = self.entry
            guard entry.kind == .number, !entry.flag else { return nil }
            return JSONNumber.parseInteger(UnsafeBufferPointer(rebasing: document.source[Int(entry.start)..<Int(entry.end)]))
        }

        /// The value of a number as a `Double` (the nearest; `±infinity` when out of range).
        public var doubleValue: Double? {
            guard entry.kind == .number else { return nil }
            if let integer = int64Value, integer.magnitude <= 1 << 53 { return Double(integer) }
            return Double(String(decoding: document.source[byteRange], as: UTF8.self))
        }

        // MARK: Containers

        /// The number of elements of an array or members of an object; 0 for scalars.
        @inlinable
        public var count: Int { Int(entry.count) }

        /// The elements of an array, in order.
        @inlinable
        public var elements: Elements { Elements(document: document, parent: index) }

        /// The members of an object, in source order, duplicates included.
        @inlinable
        public var members: Members { Members(document: document, parent: index) }

        /// The tape indices of the elements, when this is an array (see ``ChildIndices``).
        package var elementIndices: ChildIndices { ChildIndices(document: document, parent: index, kind: .array) }

        /// The tape indices of the keys, when this is an object (see ``ChildIndices``).
        package var memberKeyIndices: ChildIndices { ChildIndices(document: document, parent: index, kind: .object) }

        /// The value of the **last** member named `key` (as most JSON readers resolve duplicates),
        /// or `nil` if this is not an object or has no such member.
        public subscript(key: String) -> Node? {
            var found: Node?
            for member in members where member.keyNode.stringEquals(key) {
                found = member.value
            }
            return found
        }

        /// The element at `position` of an array.
        public subscript(position: Int) -> Node? {
            guard entry.kind == .array, position >= 0, position < count else { return nil }
            var iterator = elements.makeIterator()
            for _ in 0..<position { _ = iterator.next() }
            return iterator.next()
        }

        /// The value as an owned tree.
        public var value: JSONValue { document.value(at: index) }
    }

    /// An object member: the key (its node, for the key's location) and the value.
    public struct Member: Sendable {
        /// The key's node (a string).
        public let keyNode: Node
        /// The value.
        public let value: Node

        @inlinable
        init(keyNode: Node, value: Node) {
            self.keyNode = keyNode
            self.value = value
        }

        /// The decoded key.
        public var key: String { keyNode.stringValue ?? "" }
    }

    /// Walks one container's children on the tape. Each child's last entry says where the
    /// next sibling starts, so a step costs one read however deep the child is.
    @usableFromInline
    struct Children: Sendable {
        @usableFromInline let document: JSONDocument
        @usableFromInline var cursor: Int
        @usableFromInline var remaining: Int

        /// The children of the node at `parent` when it is a `kind`; none otherwise.
        @inlinable
        init(document: JSONDocument, parent: Int, kind: JSONKind) {
            let entry = document.tape[parent]
            self.document = document
            self.cursor = parent + 1
            self.remaining = entry.kind == kind ? Int(entry.count) : 0
        }

        /// The tape index of the next child, and a step past it; a child spans `width` entries
        /// at its top level (an object member: 2, the key and the value).
        @inlinable
        mutating func next(width: Int) -> Int? {
            guard remaining > 0 else { return nil }
            remaining -= 1
            let index = cursor
            cursor = Int(document.tape[index + width - 1].next)
            return index
        }
    }

    /// The elements of an array (none for another kind). Each copy iterates on its own.
    public struct Elements: Sequence, IteratorProtocol, Sendable {
        @usableFromInline var children: Children

        @inlinable
        init(document: JSONDocument, parent: Int) {
            children = Children(document: document, parent: parent, kind: .array)
        }

        /// The next element.
        @inlinable
        public mutating func next() -> Node? {
            guard let index = children.next(width: 1) else { return nil }
            return Node(document: children.document, index: index)
        }

        /// The number of elements left.
        public var underestimatedCount: Int { children.remaining }
    }

    /// The tape indices of an array's elements, or of an object's keys (each member's value at
    /// its key's index + 1); none for another kind. A walk that makes a node or a member
    /// (``JSONDocument/member(atKey:)``) only for the children it looks at closer, so a child
    /// passed over costs no reference count.
    package struct ChildIndices: Sequence, IteratorProtocol {
        @usableFromInline var children: Children
        /// Entries per child at its top level: 1 for an element, 2 for a member.
        @usableFromInline let width: Int

        @inlinable
        init(document: JSONDocument, parent: Int, kind: JSONKind) {
            children = Children(document: document, parent: parent, kind: kind)
            width = kind == .object ? 2 : 1
        }

        /// The next element's or key's tape index.
        @inlinable
        package mutating func next() -> Int? { children.next(width: width) }
    }

    /// The members of an object (none for another kind). Each copy iterates on its own.
    public struct Members: Sequence, IteratorProtocol, Sendable {
        @usableFromInline var children: Children

        @inlinable
        init(document: JSONDocument, parent: Int) {
            children = Children(document: document, parent: parent, kind: .object)
        }

        /// The next member.
        @inlinable
        public mutating func next() -> Member? {
            guard let index = children.next(width: 2) else { return nil }
            return Member(keyNode: Node(document: children.document, index: index),
                          value: Node(document: children.document, index: index + 1))
        }

        /// The number of members left.
        public var underestimatedCount: Int { children.remaining }
    }
}

extension JSONDocument {
    /// The tape indices, for walking every value with ``node(at:)`` (which returns `nil` at the
    /// indices of object keys).
    public var nodeIndices: Range<Int> { 0..<tape.count }

    /// The member whose key is at a tape index (from ``Node/memberKeyIndices``).
    @inlinable
    package func member(atKey index: Int) -> Member {
        Member(keyNode: Node(document: self, index: index), value: Node(document: self, index: index + 1))
    }

    /// Calls `body` with the UTF-8 of the string (a key or a value) at a tape index, decoded: the
    /// source bytes themselves when it has no escapes (no allocation), a decoded copy otherwise.
    /// `nil` if there is no string there.
    @inlinable
    package func withStringUTF8<Result>(atTapeIndex index: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result? {
        let entry = tape[index]
        guard entry.kind == .string else { return nil }
        if entry.flag {
            var decoded = decodeString(entry)
            return try decoded.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
        }
        // `self` holds the storage for the call, so the source outlives it (no retain, as
        // `withUnsafeBytes` would take: this runs for every key lint and the device look up).
        return try body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(source)[(Int(entry.start) + 1)..<(Int(entry.end) - 1)]))
    }

    /// The line and column of a byte offset in the source (a scan from the start; for many
    /// lookups use ``SourceLocator``).
    public func location(ofOffset offset: Int) -> SourceLocation {
        SourceLocation.scan(source, upTo: offset)
    }

    /// The kind of the value at a tape index (as found in ``Node/index``), without making a node.
    @inlinable
    package func kind(at index: Int) -> JSONKind { tape[index].kind }

    /// The node at a tape index (as found in ``Node/index``).
    public func node(at index: Int) -> Node? {
        guard index >= 0, index < tape.count, tape[index].role == .value else { return nil }
        return Node(document: self, index: index)
    }

    /// Decodes a string entry, resolving escapes.
    @usableFromInline
    func decodeString(_ entry: JSONTapeEntry) -> String {
        let range = Int(entry.start) + 1..<Int(entry.end) - 1
        if !entry.flag {
            return String(decoding: source[range], as: UTF8.self)
        }
        return JSONStringUnescaper.unescape(UnsafeBufferPointer(rebasing: source[range]))
    }

    /// Materializes the value at a tape index as an owned tree.
    func value(at index: Int) -> JSONValue {
        let entry = tape[index]
        switch entry.kind {
        case .null:
            return .null
        case .bool:
            return .bool(entry.flag)
        case .number:
            return .number(JSONNumber(validatedText: String(decoding: source[Int(entry.start)..<Int(entry.end)], as: UTF8.self)))
        case .string:
            return .string(decodeString(entry))
        case .array:
            var elements: [JSONValue] = []
            elements.reserveCapacity(Int(entry.count))
            var cursor = index + 1
            for _ in 0..<entry.count {
                elements.append(value(at: cursor))
                cursor = Int(tape[cursor].next)
            }
            return .array(elements)
        case .object:
            var members: [JSONObject.Member] = []
            members.reserveCapacity(Int(entry.count))
            var cursor = index + 1
            for _ in 0..<entry.count {
                let key = decodeString(tape[cursor])
                members.append(JSONObject.Member(key: key, value: value(at: cursor + 1)))
                cursor = Int(tape[cursor + 1].next)
            }
            return .object(JSONObject(members: members))
        }
    }
}

/// Resolves the escapes of a JSON string body that the parser has already validated.
enum JSONStringUnescaper {
    /// Decodes a string body with escapes. Runs between backslashes are copied whole, straight
    /// into the string's storage; the result is never longer than the body (every escape
    /// shrinks or keeps its length).
    static func unescape(_ body: UnsafeBufferPointer<UInt8>) -> String {
        let count = body.count
        guard let source = body.baseAddress, count > 0 else { return "" }
        return String(unsafeUninitializedCapacity: count) { output in
            let target = output.baseAddress!
            var written = 0
            var index = 0
            while index < count {
                // Copy up to the next backslash in one go.
                let rest = UnsafeRawPointer(source + index)
                let found = memchr(rest, Int32(UInt8(ascii: "\\")), count - index)
                let runEnd = found.map { index + (UnsafeRawPointer($0) - rest) } ?? count
                if runEnd > index {
                    (target + written).update(from: source + index, count: runEnd - index)
                    written += runEnd - index
                    index = runEnd
                }
                guard index < count else { break }
                let escape = source[index + 1]
                index += 2
                switch escape {
                case UInt8(ascii: "b"): target[written] = 0x08; written += 1
                case UInt8(ascii: "f"): target[written] = 0x0C; written += 1
                case UInt8(ascii: "n"): target[written] = 0x0A; written += 1
                case UInt8(ascii: "r"): target[written] = 0x0D; written += 1
                case UInt8(ascii: "t"): target[written] = 0x09; written += 1
                case UInt8(ascii: "u"):
                    var scalar = UInt32(hex4(body, index))
                    index += 4
                    if scalar >= 0xD800 && scalar <= 0xDBFF {
                        // The parser guarantees a low surrogate escape follows.
                        let low = UInt32(hex4(body, index + 2))
                        index += 6
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    written += writeUTF8(scalar, to: target + written)
                default:
                    target[written] = escape // \" \\ \/
                    written += 1
                }
            }
            return written
        }
    }

    /// Writes a scalar's UTF-8 at `target`; returns the byte count.
    private static func writeUTF8(_ scalar: UInt32, to target: UnsafeMutablePointer<UInt8>) -> Int {
        switch scalar {
        case 0..<0x80:
            target[0] = UInt8(scalar)
            return 1
        case 0x80..<0x800:
            target[0] = UInt8(0xC0 | scalar >> 6)
            target[1] = UInt8(0x80 | scalar & 0x3F)
            return 2
        case 0x800..<0x10000:
            target[0] = UInt8(0xE0 | scalar >> 12)
            target[1] = UInt8(0x80 | scalar >> 6 & 0x3F)
            target[2] = UInt8(0x80 | scalar & 0x3F)
            return 3
        default:
            target[0] = UInt8(0xF0 | scalar >> 18)
            target[1] = UInt8(0x80 | scalar >> 12 & 0x3F)
            target[2] = UInt8(0x80 | scalar >> 6 & 0x3F)
            target[3] = UInt8(0x80 | scalar & 0x3F)
            return 4
        }
    }

    private static func hex4(_ body: UnsafeBufferPointer<UInt8>, _ start: Int) -> UInt16 {
        var value: UInt16 = 0
        for offset in 0..<4 {
            let byte = body[start + offset]
            let digit: UInt8 = switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            default: byte - UInt8(ascii: "A") + 10
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

}
