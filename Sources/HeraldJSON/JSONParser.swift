/// A strict RFC 8259 JSON parser that produces a ``JSONDocument``.
///
/// Rejected, each with a message that says what was expected: comments, trailing commas, `NaN`
/// and `Infinity`, single quotes, leading zeros, unescaped control characters, malformed UTF-8,
/// lone surrogates in `\u` escapes, a byte order mark, and anything after the top-level value.
/// Duplicate keys are accepted and kept (the linter reports them).
///
/// Against hostile input the parser limits nesting depth and input size
/// (``Options/maximumDepth``, ``Options/maximumInputSize``); it never recurses deeper than the
/// depth limit and never allocates more than a small multiple of the input size.
public struct JSONParser: Sendable {
    /// Limits against hostile input.
    public struct Options: Sendable, Hashable {
        /// The deepest nesting of arrays and objects accepted. Default 512.
        public var maximumDepth: Int
        /// The largest input accepted, in bytes. Default 64 MiB; values above 4 GiB - 2 are
        /// lowered to that, because offsets are 32-bit.
        public var maximumInputSize: Int

        /// Creates options; the defaults suit any APNs payload and most configuration files.
        public init(maximumDepth: Int = 512, maximumInputSize: Int = 64 * 1024 * 1024) {
            self.maximumDepth = max(1, maximumDepth)
            self.maximumInputSize = max(0, min(maximumInputSize, Int(UInt32.max) - 1))
        }
    }

    /// The limits this parser enforces.
    public var options: Options

    /// Creates a parser.
    public init(options: Options = .init()) {
        self.options = options
    }

    /// Every syntax error in `bytes` that can be found in one pass, in order; empty for valid
    /// JSON. See ``parseRecovering(_:)-([UInt8])``.
    public func diagnose(_ bytes: [UInt8]) -> [JSONParseError] {
        parseRecovering(bytes).errors
    }

    /// Parses, carrying on past the mistakes people make when typing JSON by hand, and returns
    /// every error found in one pass.
    ///
    /// Three mistakes are recovered from: a missing comma between members or elements (parsing
    /// continues as if it were there), a trailing comma before `}` or `]` (continues as if it were
    /// not), and a string opened with a typographic quote (`“`, `”`,
    /// `„`; the string runs to the next straight or typographic closing quote). Any other error
    /// ends the pass. When every error was recovered from, `document` holds the values read, so a
    /// linter can still check them; such a document is for reading only, and its locations may be
    /// off by a column inside a recovered string.
    public func parseRecovering(_ bytes: [UInt8]) -> (document: JSONDocument?, errors: [JSONParseError]) {
        bytes.withUnsafeBytes { parseRecovering($0) }
    }

    /// ``parseRecovering(_:)-([UInt8])`` over borrowed bytes (the document keeps its own copy).
    public func parseRecovering(_ bytes: UnsafeRawBufferPointer) -> (document: JSONDocument?, errors: [JSONParseError]) {
        let result = parseRecovering(bytes, describingAtMost: .max)
        let text = bytes.assumingMemoryBound(to: UInt8.self)
        var errors = result.recovered.map { $0.error(in: text) }
        if let failure = result.failure { errors.append(failure) }
        return (result.document, errors)
    }

    /// ``parseRecovering(_:)-(UnsafeRawBufferPointer)`` keeping at most `limit` of the errors
    /// recovered from, located but not yet worded; `undescribed` counts the others. `failure` is
    /// the error that ended the pass, if one did (and then there is no document).
    package func parseRecovering(
        _ bytes: UnsafeRawBufferPointer, describingAtMost limit: Int
    ) -> (document: JSONDocument?, recovered: [RecoveredError], failure: JSONParseError?, undescribed: Int) {
        if bytes.count > options.maximumInputSize {
            return (nil, [], JSONParseError(
                reason: .tooLarge(size: bytes.count, limit: options.maximumInputSize),
                location: SourceLocation(offset: 0, line: 1, column: 1)), 0)
        }
        var scanner = Scanner(buffer: bytes.assumingMemoryBound(to: UInt8.self), maximumDepth: options.maximumDepth)
        scanner.recovering = true
        scanner.describedLimit = limit
        // Room for the errors a body of missing commas holds (one a member, up to 4,096),
        // allocated once: growing the array through ever larger blocks touched fresh pages on
        // every parse (62 page faults a parse of 2,048 such errors).
        scanner.recovered.reserveCapacity(min(limit, bytes.count / 8 + 1, 4_096))
        do throws(JSONParseError) {
            try scanner.parseDocument()
            let recovered = scanner.recovered
            let undescribed = scanner.undescribed
            return (JSONDocument(bytes: bytes, taking: scanner.takeTape(), isCompact: false), recovered, nil, undescribed)
        } catch {
            return (nil, scanner.recovered, error, scanner.undescribed)
        }
    }

    /// Parses one JSON text.
    public func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONDocument {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) in try parse(buffer) }
        }
        return try result.get()
    }

    /// Parses one JSON text from borrowed bytes; the document keeps its own copy.
    public func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONDocument {
        if bytes.count > options.maximumInputSize {
            throw JSONParseError(
                reason: .tooLarge(size: bytes.count, limit: options.maximumInputSize),
                location: SourceLocation(offset: 0, line: 1, column: 1))
        }
        var scanner = Scanner(buffer: bytes.assumingMemoryBound(to: UInt8.self), maximumDepth: options.maximumDepth)
        try scanner.parseDocument()
        let compact = !scanner.sawWhitespaceOrEscape
        return JSONDocument(bytes: bytes, taking: scanner.takeTape(), isCompact: compact)
    }
}

// MARK: - Scanner

private let quote = UInt8(ascii: "\"")
private let backslash = UInt8(ascii: "\\")

private struct Scanner: ~Copyable {
    let buffer: UnsafeBufferPointer<UInt8>
    let maximumDepth: Int
    var position = 0
    var depth = 0
    var tape: TapeBuffer
    /// In ``JSONParser/diagnose(_:)``: record a missing comma and continue.
    var recovering = false
    var recovered: [RecoveredError] = []
    /// How many recovered errors are described (located and worded); past it they are only
    /// counted in ``undescribed``, so a body of a thousand mistakes costs a reader who lists a
    /// hundred no more than the hundred.
    var describedLimit = Int.max
    var undescribed = 0
    /// The offset of the last comma between members or elements: a trailing comma is reported
    /// there, where the fix is.
    var lastComma = 0
    /// Whether whitespace or a string escape was seen: if neither, the text is compact canonical.
    var sawWhitespaceOrEscape = false
    /// Errors are located walking forward from the last one: many errors cost one pass.
    var cursor = SourceCursor()

    init(buffer: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.buffer = buffer
        self.maximumDepth = maximumDepth
        // An entry per key and per value: alerts of long strings need one per six bytes or
        // fewer, custom data of short members (`"k1":1,`) one per four or five. Growing copies
        // the whole tape, so this errs on the side of the second.
        tape = TapeBuffer(capacity: buffer.count / 4 + 4)
    }

    /// The finished tape, for the document to own.
    consuming func takeTape() -> UnsafeMutableBufferPointer<JSONTapeEntry> {
        tape.take()
    }

    mutating func parseDocument() throws(JSONParseError) {
        try checkByteOrderMark()
        skipWhitespace()
        try parseValue(role: .value)
        skipWhitespace()
        if position < buffer.count {
            throw error(.trailingData(found: describeFound()))
        }
    }

    private mutating func checkByteOrderMark() throws(JSONParseError) {
        let count = buffer.count
        if count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF {
            throw error(.byteOrderMark(encoding: "UTF-8"), at: 0)
        }
        if count >= 2, buffer[0] == 0xFE, buffer[1] == 0xFF {
            throw error(.byteOrderMark(encoding: "UTF-16 big-endian"), at: 0)
        }
        if count >= 2, buffer[0] == 0xFF, buffer[1] == 0xFE {
            throw error(.byteOrderMark(encoding: "UTF-16 little-endian"), at: 0)
        }
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while position < buffer.count {
            switch buffer[position] {
            case 0x20, 0x0A, 0x0D, 0x09:
                position += 1
                sawWhitespaceOrEscape = true
            default: return
            }
        }
    }

    mutating func parseValue(role: JSONTapeEntry.Role) throws(JSONParseError) {
        guard position < buffer.count else {
            throw error(.unexpectedEndOfInput(expected: "a JSON value"))
        }
        switch buffer[position] {
        case UInt8(ascii: "{"): try parseObject(role: role)
        case UInt8(ascii: "["): try parseArray(role: role)
        case quote: try parseString(role: role)
        case UInt8(ascii: "t"): try parseLiteral("true", kind: .bool, flag: true, role: role)
        case UInt8(ascii: "f"): try parseLiteral("false", kind: .bool, flag: false, role: role)
        case UInt8(ascii: "n"): try parseLiteral("null", kind: .null, flag: false, role: role)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try parseNumber(role: role)
        default:
            guard recovering, typographicQuoteLength(at: position) > 0 else { throw unexpected(expected: "a JSON value") }
            recover(.typographicValue, at: position)
            try parseTypographicString(role: role)
        }
    }

    /// The byte length of a typographic double quote (U+201C, U+201D, U+201E) at `index`, or 0.
    func typographicQuoteLength(at index: Int) -> Int {
        guard index + 2 < buffer.count, buffer[index] == 0xE2, buffer[index + 1] == 0x80,
              buffer[index + 2] == 0x9C || buffer[index + 2] == 0x9D || buffer[index + 2] == 0x9E else { return 0 }
        return 3
    }

    /// Recovery: a string opened with a typographic quote runs to the next straight or
    /// typographic closing quote. The entry is marked as escaped so readers decode its content
    /// (between `start + 1` and `end - 1`) instead of copying the source span.
    private mutating func parseTypographicString(role: JSONTapeEntry.Role) throws(JSONParseError) {
        let opening = position
        position += 3
        let contentStart = position
        while position < buffer.count {
            let byte = buffer[position]
            if byte == quote {
                tape.append(JSONTapeEntry(
                    kind: .string, role: role, flag: true, start: UInt32(contentStart - 1), end: UInt32(position + 1),
                    next: UInt32(tape.count + 1), count: 0))
                position += 1
                return
            }
            if typographicQuoteLength(at: position) > 0 {
                tape.append(JSONTapeEntry(
                    kind: .string, role: role, flag: true, start: UInt32(contentStart - 1), end: UInt32(position + 1),
                    next: UInt32(tape.count + 1), count: 0))
                position += 3
                return
            }
            if byte < 0x20 || byte == backslash { break }
            position += max(1, utf8SequenceLength(at: position))
        }
        throw error(.unexpectedEndOfInput(expected: "a closing quote for the string that starts at \(locate(opening))"))
    }

    // MARK: Containers

    private mutating func openContainer(kind: JSONKind, role: JSONTapeEntry.Role) throws(JSONParseError) -> Int {
        depth += 1
        if depth > maximumDepth {
            throw error(.tooDeep(limit: maximumDepth))
        }
        let index = tape.count
        tape.append(JSONTapeEntry(
            kind: kind, role: role, flag: false, start: UInt32(position), end: 0, next: 0, count: 0))
        position += 1
        return index
    }

    private mutating func closeContainer(at index: Int, count: Int) {
        position += 1
        tape[index].end = UInt32(position)
        tape[index].next = UInt32(tape.count)
        tape[index].count = UInt32(count)
        depth -= 1
    }

    mutating func parseObject(role: JSONTapeEntry.Role) throws(JSONParseError) {
        let index = try openContainer(kind: .object, role: role)
        skipWhitespace()
        var count = 0
        if position < buffer.count, buffer[position] == UInt8(ascii: "}") {
            closeContainer(at: index, count: 0)
            return
        }
        while true {
            guard position < buffer.count else {
                throw error(.unexpectedEndOfInput(expected: count == 0 ? "a string key or '}'" : "a string key"))
            }
            if buffer[position] == quote {
                try parseString(role: .key)
            } else {
                if count > 0, buffer[position] == UInt8(ascii: "}") {
                    guard recovering else { throw error(.trailingComma(closing: "}"), at: lastComma) }
                    recover(.trailingCommaInObject, at: lastComma)
                    closeContainer(at: index, count: count)
                    return
                }
                let expected = count == 0 ? "a string key or '}'" : "a string key"
                guard recovering, typographicQuoteLength(at: position) > 0 else { throw unexpected(expected: expected) }
                recover(count == 0 ? .typographicFirstKey : .typographicKey, at: position)
                try parseTypographicString(role: .key)
            }
            skipWhitespace()
            guard position < buffer.count else {
                throw error(.unexpectedEndOfInput(expected: "':' after an object key"))
            }
            guard buffer[position] == UInt8(ascii: ":") else {
                throw unexpected(expected: "':' after an object key")
            }
            position += 1
            skipWhitespace()
            try parseValue(role: .value)
            count += 1
            skipWhitespace()
            guard position < buffer.count else {
                throw error(.unexpectedEndOfInput(expected: "',' or '}' after an object member"))
            }
            switch buffer[position] {
            case UInt8(ascii: ","):
                lastComma = position
                position += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                closeContainer(at: index, count: count)
                return
            case quote,
                 0xE2 where typographicQuoteLength(at: position) > 0:
                // The next key follows without a comma (perhaps opened with a typographic quote).
                guard recovering else { throw unexpected(expected: "',' or '}' after an object member", hint: "is a ',' missing before this key?") }
                recover(.missingMemberComma, at: position)
            default:
                throw unexpected(expected: "',' or '}' after an object member")
            }
        }
    }

    // The object and array loops end alike but stay two: one shared function for what follows
    // an item measured 6 to 7% slower parsing (Benchmarks: payload, parse rows).
    mutating func parseArray(role: JSONTapeEntry.Role) throws(JSONParseError) {
        let index = try openContainer(kind: .array, role: role)
        skipWhitespace()
        var count = 0
        if position < buffer.count, buffer[position] == UInt8(ascii: "]") {
            closeContainer(at: index, count: 0)
            return
        }
        while true {
            if position < buffer.count, buffer[position] == UInt8(ascii: "]"), count > 0 {
                guard recovering else { throw error(.trailingComma(closing: "]"), at: lastComma) }
                recover(.trailingCommaInArray, at: lastComma)
                closeContainer(at: index, count: count)
                return
            }
            try parseValue(role: .value)
            count += 1
            skipWhitespace()
            guard position < buffer.count else {
                throw error(.unexpectedEndOfInput(expected: "',' or ']' after an array element"))
            }
            switch buffer[position] {
            case UInt8(ascii: ","):
                lastComma = position
                position += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                closeContainer(at: index, count: count)
                return
            case quote, UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                // The next element follows without a comma.
                guard recovering else { throw unexpected(expected: "',' or ']' after an array element", hint: "is a ',' missing before this element?") }
                recover(.missingElementComma, at: position)
            default:
                throw unexpected(expected: "',' or ']' after an array element")
            }
        }
    }

    // MARK: Scalars

    private mutating func parseLiteral(
        _ literal: StaticString, kind: JSONKind, flag: Bool, role: JSONTapeEntry.Role
    ) throws(JSONParseError) {
        let start = position
        let length = literal.utf8CodeUnitCount
        let text = literal.utf8Start
        for offset in 0..<length {
            guard position < buffer.count else {
                throw error(.unexpectedEndOfInput(expected: "'\(literal)'"))
            }
            guard buffer[position] == text[offset] else {
                position = start
                throw unexpected(expected: "a JSON value")
            }
            position += 1
        }
        tape.append(JSONTapeEntry(
            kind: kind, role: role, flag: flag, start: UInt32(start), end: UInt32(position),
            next: UInt32(tape.count + 1), count: 0))
    }

    @inline(__always)
    mutating func parseNumber(role: JSONTapeEntry.Role) throws(JSONParseError) {
        let start = position
        var isInteger = true
        if buffer[position] == UInt8(ascii: "-") {
            position += 1
        }
        guard position < buffer.count else {
            throw error(.unexpectedEndOfInput(expected: "a digit after '-'"))
        }
        switch buffer[position] {
        case UInt8(ascii: "0"):
            position += 1
            if position < buffer.count, isDigit(buffer[position]) {
                throw error(.leadingZero, at: position - 1)
            }
        case UInt8(ascii: "1")...UInt8(ascii: "9"):
            position += 1
            skipDigits()
        default:
            throw unexpected(expected: "a digit after '-'")
        }
        if position < buffer.count, buffer[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            try requireDigit(after: "'.'")
            skipDigits()
        }
        if position < buffer.count, buffer[position] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            if position < buffer.count, buffer[position] == UInt8(ascii: "+") || buffer[position] == UInt8(ascii: "-") {
                position += 1
            }
            try requireDigit(after: "the exponent mark")
            skipDigits()
        }
        tape.append(JSONTapeEntry(
            kind: .number, role: role, flag: !isInteger, start: UInt32(start), end: UInt32(position),
            next: UInt32(tape.count + 1), count: 0))
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    @inline(__always)
    private mutating func skipDigits() {
        while position < buffer.count, isDigit(buffer[position]) { position += 1 }
    }

    private mutating func requireDigit(after what: String) throws(JSONParseError) {
        guard position < buffer.count else {
            throw error(.unexpectedEndOfInput(expected: "a digit after \(what)"))
        }
        guard isDigit(buffer[position]) else {
            throw unexpected(expected: "a digit after \(what)")
        }
    }

    @inline(__always)
    mutating func parseString(role: JSONTapeEntry.Role) throws(JSONParseError) {
        let start = position
        position += 1
        var hasEscape = false
        let count = buffer.count
        while true {
            // Fast path: printable ASCII other than the quote and backslash, a word at a time.
            position = ByteScan.firstSpecialInString(in: buffer, from: position)
            guard position < count else {
                throw error(.unexpectedEndOfInput(expected: "'\"' to close the string that starts at \(locate(start))"))
            }
            let byte = buffer[position]
            if byte == quote {
                position += 1
                break
            } else if byte == backslash {
                hasEscape = true
                sawWhitespaceOrEscape = true
                try scanEscape()
            } else if byte < 0x20 {
                throw error(.unescapedControlCharacter(byte))
            } else {
                // Non-ASCII text (Korean, emoji) comes in runs: validate the whole run here rather
                // than going back to the ASCII fast path after every character.
                repeat {
                    try scanUTF8Sequence()
                } while position < count && buffer[position] >= 0x80
            }
        }
        tape.append(JSONTapeEntry(
            kind: .string, role: role, flag: hasEscape, start: UInt32(start), end: UInt32(position),
            next: UInt32(tape.count + 1), count: 0))
    }

    private mutating func scanEscape() throws(JSONParseError) {
        let escapeStart = position
        position += 1
        guard position < buffer.count else {
            throw error(.unexpectedEndOfInput(expected: "an escape character after '\\'"))
        }
        switch buffer[position] {
        case quote, backslash, UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
             UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            position += 1
        case UInt8(ascii: "u"):
            position += 1
            let unit = try scanHex4(escapeStart: escapeStart)
            if unit >= 0xD800 && unit <= 0xDBFF {
                // A high surrogate must be followed by an escaped low surrogate.
                guard position + 1 < buffer.count, buffer[position] == backslash,
                      buffer[position + 1] == UInt8(ascii: "u") else {
                    throw error(.loneSurrogate(unit), at: escapeStart)
                }
                let lowStart = position
                position += 2
                let low = try scanHex4(escapeStart: lowStart)
                guard low >= 0xDC00 && low <= 0xDFFF else {
                    throw error(.loneSurrogate(unit), at: escapeStart)
                }
            } else if unit >= 0xDC00 && unit <= 0xDFFF {
                throw error(.loneSurrogate(unit), at: escapeStart)
            }
        default:
            let found = buffer.describeScalar(at: position)
            throw error(.invalidEscape(found.text), at: escapeStart)
        }
    }

    private mutating func scanHex4(escapeStart: Int) throws(JSONParseError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard position < buffer.count else {
                throw error(.unexpectedEndOfInput(expected: "four hexadecimal digits after '\\u'"))
            }
            let byte = buffer[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.invalidUnicodeEscape, at: escapeStart)
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }

    /// Validates one multi-byte UTF-8 sequence at `position` (Unicode 15, table 3-7) and steps
    /// over it.
    @inline(__always)
    private mutating func scanUTF8Sequence() throws(JSONParseError) {
        let length = utf8SequenceLength(at: position)
        guard length > 0 else { throw error(.invalidUTF8) }
        position += length
    }

    /// The length of the well-formed UTF-8 sequence at `index`, or 0 if it is malformed.
    @inline(__always)
    func utf8SequenceLength(at index: Int) -> Int {
        buffer.utf8SequenceLength(at: index)
    }

    // MARK: Errors

    mutating func locate(_ offset: Int) -> SourceLocation {
        cursor.location(ofOffset: offset, in: buffer)
    }

    /// Records an error recovered from, located, while under ``describedLimit``; its text is
    /// made when it is read (``RecoveredError``).
    mutating func recover(_ kind: RecoveredError.Kind, at offset: Int) {
        guard recovered.count < describedLimit else {
            undescribed += 1
            return
        }
        recovered.append(RecoveredError(kind: kind, offset: offset, location: locate(offset)))
    }

    mutating func error(_ reason: JSONParseError.Reason, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(reason: reason, location: locate(offset ?? position))
    }

    /// An "expected X, found Y" error at `position`, with a hint for the usual mistakes.
    mutating func unexpected(expected: String, hint: String? = nil) -> JSONParseError {
        error(buffer.unexpected(at: position, expected: expected, hint: hint))
    }

    private func describeFound() -> String {
        if buffer[position] >= 0x80 && utf8SequenceLength(at: position) == 0 {
            return "invalid UTF-8"
        }
        return buffer.describeScalar(at: position).display
    }
}

/// The tape as the parser builds it: a buffer grown by doubling, handed to the document without a
/// copy (``take()``) or freed if parsing fails.
struct TapeBuffer: ~Copyable {
    private(set) var base: UnsafeMutablePointer<JSONTapeEntry>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 4)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    @inline(__always)
    mutating func append(_ entry: JSONTapeEntry) {
        if count == capacity { grow() }
        (base + count).initialize(to: entry)
        count += 1
    }

    private mutating func grow() {
        let larger = UnsafeMutablePointer<JSONTapeEntry>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = larger
        capacity *= 2
    }

    subscript(index: Int) -> JSONTapeEntry {
        get { base[index] }
        set { base[index] = newValue }
    }

    /// Gives up the buffer: the caller owns `count` entries at the returned pointer.
    consuming func take() -> UnsafeMutableBufferPointer<JSONTapeEntry> {
        let result = UnsafeMutableBufferPointer(start: base, count: count)
        discard self // the buffer now belongs to the caller; skip deinit
        return result
    }
}
