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
    /// A copy of the source and the tape, owned behind one reference, so copying a document or a
    /// ``Node`` costs one retain and reading them costs none.
    ///
    /// `@unchecked Sendable` is sound: both buffers are written once in `init` and never again,
    /// and they are freed only in `deinit`, when no reference remains.
    @usableFromInline
    final class Storage: @unchecked Sendable {
        @usableFromInline let source: UnsafeMutableBufferPointer<UInt8>
        @usableFromInline let entries: UnsafeMutableBufferPointer<JSONTapeEntry>
        /// Set by the parser: no whitespace between tokens and no escapes, so the source is its own
        /// compact canonical form. `false` when unknown.
        @usableFromInline let knownCompact: Bool

        /// Copies the source; takes ownership of `entries` (allocated with `allocate`).
        @usableFromInline
        init(bytes: UnsafeRawBufferPointer, entries: UnsafeMutableBufferPointer<JSONTapeEntry>, knownCompact: Bool) {
            source = .allocate(capacity: bytes.count)
            _ = source.initialize(from: bytes)
            self.entries = entries
            self.knownCompact = knownCompact
        }

        deinit {
            source.deallocate()
            entries.deallocate()
        }
    }

    @usableFromInline
    let storage: Storage

    /// The source bytes, valid while this document (or any copy or node of it) is alive. Code in
    /// this module reads through them without retaining anything.
    @inlinable
    var source: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(storage.source) }

    /// One entry per value, in document order (a pre-order walk). Object members contribute two
    /// entries each: the key (a string entry) followed by the value's subtree. Valid while the
    /// document is alive.
    @inlinable
    var tape: UnsafeBufferPointer<JSONTapeEntry> { UnsafeBufferPointer(storage.entries) }

    /// The source text as parsed (a copy; ``withUnsafeBytes(_:)`` reads it in place).
    public var bytes: [UInt8] { Array(source) }

    /// The number of bytes of the source text.
    @inlinable
    public var byteCount: Int { storage.source.count }

    /// Calls `body` with the source text, without copying it.
    @inlinable
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withExtendedLifetime(storage) { try body(UnsafeRawBufferPointer(storage.source)) }
    }

    /// A document over a copy of `bytes` that takes ownership of the parser's tape.
    @usableFromInline
    init(bytes: UnsafeRawBufferPointer, taking entries: UnsafeMutableBufferPointer<JSONTapeEntry>, isCompact: Bool) {
        self.storage = Storage(bytes: bytes, entries: entries, knownCompact: isCompact)
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
