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
        switch reason {
        case .unexpectedCharacter(let found, let expected, let hint):
            // Built at its final size: interpolation sizes for its literals, these values are
            // longer, and every append would grow the string.
            return prefix.withUTF8Buffer { prefix in
                var parts = (expected, found, hint ?? "")
                let hinted = hint != nil
                let total = prefix.count + 17 + parts.0.utf8.count + parts.1.utf8.count + (hinted ? parts.2.utf8.count + 3 : 0)
                return String(unsafeUninitializedCapacity: total) { buffer in
                    var at = 0
                    func put(_ bytes: UnsafeBufferPointer<UInt8>) {
                        guard let source = bytes.baseAddress, let target = buffer.baseAddress, !bytes.isEmpty else { return }
                        (target + at).update(from: source, count: bytes.count)
                        at += bytes.count
                    }
                    func put(_ literal: StaticString) { literal.withUTF8Buffer { put($0) } }
                    put(prefix)
                    put("expected ")
                    parts.0.withUTF8 { put($0) }
                    put(", found ")
                    parts.1.withUTF8 { put($0) }
                    if hinted {
                        put(" (")
                        parts.2.withUTF8 { put($0) }
                        put(")")
                    }
                    return at
                }
            }
        default:
            return prefix.withUTF8Buffer { String(decoding: $0, as: UTF8.self) } + described
        }
    }

    /// The message of every reason but an unexpected character.
    private var described: String {
        switch reason {
        case .unexpectedCharacter:
            return message(after: "")
        case .unexpectedEndOfInput(let expected):
            return "unexpected end of input; expected \(expected)"
        case .invalidUTF8:
            return "invalid UTF-8 byte sequence; JSON text must be UTF-8"
        case .unescapedControlCharacter(let byte):
            return "unescaped control character \(Self.scalarName(UInt32(byte))) in a string; write it as an escape such as \\n or \\u00\(Self.hex(byte))"
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

    /// `LINE:COLUMN: message`.
    public var description: String { "\(location): \(message)" }

    static func scalarName(_ value: UInt32) -> String {
        var digits = String(value, radix: 16, uppercase: true)
        while digits.count < 4 { digits = "0" + digits }
        return "U+" + digits
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
