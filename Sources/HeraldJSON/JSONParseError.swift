/// Why a text is not valid JSON, and where.
///
/// The ``description`` reads like a compiler message without the file name:
/// `4:5: expected ',' or '}' after an object member, found '"'`.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Hashable {
        /// The input ended while `expected` was still needed.
        case unexpectedEndOfInput(expected: String)
        /// A character that cannot appear here; `found` is printable (`'x'`, `'“' (U+201C)`).
        case unexpectedCharacter(found: String, expected: String, hint: String?)
        /// A byte sequence that is not well-formed UTF-8.
        case invalidUTF8
        /// A character below U+0020 inside a string; JSON requires it escaped.
        case unescapedControlCharacter(UInt8)
        /// A backslash escape JSON does not define (`\x`, `\U`, `\'`).
        case invalidEscape(String)
        /// A `\u` escape that is not four hex digits.
        case invalidUnicodeEscape
        /// A `\uD800`–`\uDFFF` escape that is not part of a high-low surrogate pair.
        case loneSurrogate(UInt16)
        /// A number such as `01` or `-00`.
        case leadingZero
        /// The input nests arrays and objects deeper than the limit.
        case tooDeep(limit: Int)
        /// The input is larger than the limit.
        case tooLarge(size: Int, limit: Int)
        /// A comma after the last member or element, before `closing` (`}` or `]`). The location is
        /// the comma's.
        case trailingComma(closing: String)
        /// More text after the top-level value.
        case trailingData(found: String)
        /// The input starts with a byte order mark (UTF-8, or UTF-16 which JSON does not allow).
        case byteOrderMark(encoding: String)
    }

    /// What went wrong.
    public var reason: Reason
    /// Where: the offending byte (or the end of the input).
    public var location: SourceLocation

    /// Creates an error.
    public init(reason: Reason, location: SourceLocation) {
        self.reason = reason
        self.location = location
    }

    /// The message without the location: "expected ':' after an object key, found '='".
    public var message: String { message(after: "") }

    /// The message after `prefix` (`the body is not JSON: `), in one allocation where a body
    /// can hold many such errors.
    package func message(after prefix: StaticString) -> String {
        reason.message(after: prefix)
    }

    /// `LINE:COLUMN: message`.
    public var description: String { "\(location): \(message)" }

    static func scalarName(_ value: UInt32) -> String {
        var digits = String(value, radix: 16, uppercase: true)
        while digits.count < 4 { digits = "0" + digits }
        return "U+" + digits
    }
}

extension JSONParseError.Reason {
    /// The message after `prefix` (`the body is not JSON: `), in one allocation where a body
    /// can hold many such errors.
    package func message(after prefix: StaticString) -> String {
        guard case .unexpectedCharacter(var found, var expected, let hint) = self else {
            return prefix.withUTF8Buffer { String(decoding: $0, as: UTF8.self) } + described
        }
        // Built at its final size: interpolation sizes for its literals, these values are
        // longer, and every append would grow the string.
        var hintText = hint ?? ""
        let total = prefix.withUTF8Buffer(\.count) + 17 + expected.utf8.count + found.utf8.count
            + (hint != nil ? hintText.utf8.count + 3 : 0)
        return String(unsafeUninitializedCapacity: total) { buffer in
            var writer = UTF8Writer(buffer)
            writer.put(prefix)
            writer.put("expected ")
            writer.put(&expected)
            writer.put(", found ")
            writer.put(&found)
            if hint != nil {
                writer.put(" (")
                writer.put(&hintText)
                writer.put(")")
            }
            return writer.count
        }
    }

    /// The message of every reason but an unexpected character.
    private var described: String {
        switch self {
        case .unexpectedCharacter:
            return message(after: "")
        case .unexpectedEndOfInput(let expected):
            return "unexpected end of input; expected \(expected)"
        case .invalidUTF8:
            return "invalid UTF-8 byte sequence; JSON text must be UTF-8"
        case .unescapedControlCharacter(let byte):
            return "unescaped control character \(JSONParseError.scalarName(UInt32(byte))) in a string; write it as an escape such as \\n or \\u00\(Self.hex(byte))"
        case .invalidEscape(let escape):
            return "invalid escape '\\\(escape)' in a string; JSON allows \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX"
        case .invalidUnicodeEscape:
            return "invalid \\u escape; expected four hexadecimal digits"
        case .loneSurrogate(let unit):
            return "lone surrogate \\u\(Self.hex16(unit)) in a string; a surrogate must be half of a \\uD800-\\uDBFF \\uDC00-\\uDFFF pair"
        case .leadingZero:
            return "leading zeros are not allowed in numbers"
        case .tooDeep(let limit):
            return "arrays and objects are nested more than \(limit) deep"
        case .tooLarge(let size, let limit):
            return "input is \(size) bytes, over the \(limit)-byte limit"
        case .trailingComma(let closing):
            return "trailing comma before '\(closing)' is not allowed; remove this ','"
        case .trailingData(let found):
            return "unexpected \(found) after the top-level value; a JSON text holds exactly one value"
        case .byteOrderMark(let encoding):
            if encoding == "UTF-8" {
                return "the text starts with a UTF-8 byte order mark, which JSON does not allow; remove it"
            }
            return "the text starts with a \(encoding) byte order mark; JSON text must be UTF-8"
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count == 1 ? "0" + digits : digits
    }

    private static func hex16(_ unit: UInt16) -> String {
        var digits = String(unit, radix: 16, uppercase: true)
        while digits.count < 4 { digits = "0" + digits }
        return digits
    }
}

/// Writes UTF-8 into a buffer sized beforehand (the string a message is built in), part by
/// part: a value type with a mutating `put`, so no closure captures the position.
struct UTF8Writer {
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    /// How many bytes are written.
    private(set) var count = 0

    /// A writer at the start of `buffer`.
    @inline(__always)
    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    /// Appends `bytes`; the buffer must have room.
    @inline(__always)
    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, let target = buffer.baseAddress, !bytes.isEmpty else { return }
        precondition(count + bytes.count <= buffer.count, "UTF8Writer: the buffer is smaller than its parts")
        (target + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    /// Appends a literal.
    @inline(__always)
    mutating func put(_ literal: StaticString) {
        literal.withUTF8Buffer { put($0) }
    }

    /// Appends a string's UTF-8 (`inout` so a native string is read in place).
    @inline(__always)
    mutating func put(_ string: inout String) {
        let start = count
        let end = string.withUTF8 { utf8 -> Int in
            guard let source = utf8.baseAddress, let target = buffer.baseAddress, !utf8.isEmpty else { return start }
            precondition(start + utf8.count <= buffer.count, "UTF8Writer: the buffer is smaller than its parts")
            (target + start).update(from: source, count: utf8.count)
            return start + utf8.count
        }
        count = end
    }
}
