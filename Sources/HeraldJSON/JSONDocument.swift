/// A parsed JSON text that keeps everything the source said.
///
/// `JSONDocument` is what Herald's linter, payload decoder and `herald fmt` read. Unlike Foundation's
/// `JSONSerialization`, it keeps:
/// - object members in source order, **including duplicate keys**;
/// - the source text of every number (`1.0`, `1e2` and `100` stay distinct), with integer and
///   floating-point views;
/// - the byte offset of every value, from which its line and column are derived on demand.
///
/// The document is a flat array of entries (a "tape") over a copy of the source bytes: parsing
/// allocates two arrays however large the input, and strings are decoded only when asked for.
///
/// ```swift
/// let document = try JSONDocument(parsing: Array(#"{"aps":{"badge":5}}"#.utf8))
/// let badge = document.root["aps"]?["badge"]
/// print(badge?.int64Value, badge?.location.column)   // Optional(5) Optional(17)
/// ```
public struct JSONDocument: Sendable {
    /// The source and the tape behind one reference, so copying a document or a ``Node`` costs
    /// one retain. Immutable (`let` only) and therefore `Sendable`.
    @usableFromInline
    final class Storage: Sendable {
        @usableFromInline let bytes: [UInt8]
        @usableFromInline let tape: [JSONTapeEntry]
        /// Set by the parser: no whitespace between tokens and no escapes, so the source is its own
        /// compact canonical form. `false` when unknown.
        @usableFromInline let knownCompact: Bool

        @usableFromInline
        init(bytes: [UInt8], tape: [JSONTapeEntry], knownCompact: Bool) {
            self.bytes = bytes
            self.tape = tape
            self.knownCompact = knownCompact
        }
    }

    @usableFromInline
    let storage: Storage

    /// The source text as parsed.
    @inlinable
    public var bytes: [UInt8] { storage.bytes }

    /// One entry per value, in document order (a pre-order walk). Object members contribute two
    /// entries each: the key (a string entry) followed by the value's subtree.
    @inlinable
    var tape: [JSONTapeEntry] { storage.tape }

    @usableFromInline
    init(bytes: [UInt8], tape: [JSONTapeEntry], isCompact: Bool = false) {
        self.storage = Storage(bytes: bytes, tape: tape, knownCompact: isCompact)
    }

    /// Parses `bytes` as one JSON text (RFC 8259), strictly.
    ///
    /// - Throws: ``JSONParseError`` naming what was expected and where (line and column).
    public init(parsing bytes: [UInt8], options: JSONParser.Options = .init()) throws(JSONParseError) {
        self = try JSONParser(options: options).parse(bytes)
    }

    /// Parses the UTF-8 form of `text` as one JSON text.
    public init(parsing text: String, options: JSONParser.Options = .init()) throws(JSONParseError) {
        try self.init(parsing: Array(text.utf8), options: options)
    }

    /// The top-level value.
    @inlinable
    public var root: Node { Node(document: self, index: 0) }

    /// The number of values in the document (object keys not counted).
    public var valueCount: Int {
        var count = 0
        for entry in tape where entry.role != .key { count += 1 }
        return count
    }
}

/// The kind of a JSON value.
public enum JSONKind: UInt8, Sendable, Hashable, CustomStringConvertible {
    case null
    case bool
    case number
    case string
    case array
    case object

    /// The kind in words, for messages: "a string", "an object", ….
    public var description: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// One entry of a document's tape.
///
/// Offsets are 32-bit: ``JSONParser/Options/maximumInputSize`` is capped below 4 GiB so they
/// always fit.
@usableFromInline
struct JSONTapeEntry: Sendable {
    @usableFromInline
    enum Role: UInt8, Sendable {
        case value
        case key
    }

    @usableFromInline var kind: JSONKind
    @usableFromInline var role: Role
    /// For strings: the source contains a backslash escape. For numbers: the text has a fraction
    /// or exponent. For `bool`: the value is `true`.
    @usableFromInline var flag: Bool
    /// Byte offset of the first byte of the value (the opening quote or bracket for strings and
    /// containers).
    @usableFromInline var start: UInt32
    /// Byte offset just past the value (past the closing quote or bracket).
    @usableFromInline var end: UInt32
    /// For containers: the tape index just past this value's subtree. For scalars: index + 1.
    @usableFromInline var next: UInt32
    /// For containers: the number of elements, or of members for objects.
    @usableFromInline var count: UInt32

    @inlinable
    init(kind: JSONKind, role: Role, flag: Bool, start: UInt32, end: UInt32, next: UInt32, count: UInt32) {
        self.kind = kind
        self.role = role
        self.flag = flag
        self.start = start
        self.end = end
        self.next = next
        self.count = count
    }
}
