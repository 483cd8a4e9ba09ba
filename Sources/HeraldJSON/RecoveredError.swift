/// A mistake the recovering parser carried on past (a missing or trailing comma, a typographic
/// quote), kept as what and where. Its ``JSONParseError`` is made only when asked for: a body of
/// a hundred missing commas costs no string per comma until someone reads them.
package struct RecoveredError: Sendable, Hashable {
    /// Which mistake, by the place the parser recovered from it.
    package enum Kind: UInt8, Sendable, Hashable {
        /// A value opened with a typographic quote.
        case typographicValue
        /// The first key of an object opened with a typographic quote.
        case typographicFirstKey
        /// A later key opened with a typographic quote.
        case typographicKey
        /// A member with no comma before it.
        case missingMemberComma
        /// An element with no comma before it.
        case missingElementComma
        /// A comma before `}`.
        case trailingCommaInObject
        /// A comma before `]`.
        case trailingCommaInArray

        /// Why the text at `offset` of `text` (the body parsed) is not JSON, as the strict
        /// parser says it.
        package func reason(at offset: Int, in text: UnsafeBufferPointer<UInt8>) -> JSONParseError.Reason {
            switch self {
            case .typographicValue: text.unexpected(at: offset, expected: "a JSON value")
            case .typographicFirstKey: text.unexpected(at: offset, expected: "a string key or '}'")
            case .typographicKey: text.unexpected(at: offset, expected: "a string key")
            case .missingMemberComma: text.unexpected(at: offset, expected: "',' or '}' after an object member", hint: "is a ',' missing before this key?")
            case .missingElementComma: text.unexpected(at: offset, expected: "',' or ']' after an array element", hint: "is a ',' missing before this element?")
            case .trailingCommaInObject: .trailingComma(closing: "}")
            case .trailingCommaInArray: .trailingComma(closing: "]")
            }
        }
    }

    /// Which mistake.
    package var kind: Kind
    /// The byte it is at: the unexpected character, or the trailing comma.
    package var offset: Int
    /// That byte's line and column.
    package var location: SourceLocation

    /// The error, reading the character found from `text`, the body parsed.
    package func error(in text: UnsafeBufferPointer<UInt8>) -> JSONParseError {
        JSONParseError(reason: kind.reason(at: offset, in: text), location: location)
    }
}

// MARK: - Describing characters

extension UnsafeBufferPointer<UInt8> {
    /// The length of the well-formed UTF-8 sequence at `index`, or 0 if it is malformed
    /// (Unicode 15, table 3-7).
    @inline(__always)
    func utf8SequenceLength(at index: Int) -> Int {
        let lead = self[index]
        func continuation(_ offset: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool {
            index + offset < count && range.contains(self[index + offset])
        }
        switch lead {
        case 0x00...0x7F:
            return 1
        case 0xC2...0xDF:
            return continuation(1) ? 2 : 0
        case 0xE0:
            return continuation(1, 0xA0...0xBF) && continuation(2) ? 3 : 0
        case 0xE1...0xEC, 0xEE...0xEF:
            return continuation(1) && continuation(2) ? 3 : 0
        case 0xED:
            return continuation(1, 0x80...0x9F) && continuation(2) ? 3 : 0
        case 0xF0:
            return continuation(1, 0x90...0xBF) && continuation(2) && continuation(3) ? 4 : 0
        case 0xF1...0xF3:
            return continuation(1) && continuation(2) && continuation(3) ? 4 : 0
        case 0xF4:
            return continuation(1, 0x80...0x8F) && continuation(2) && continuation(3) ? 4 : 0
        default:
            return 0
        }
    }

    /// "Expected X, found Y" at `position`, with a hint for the usual mistakes; the end of the
    /// input and a malformed byte are their own reasons.
    func unexpected(at position: Int, expected: String, hint: String? = nil) -> JSONParseError.Reason {
        guard position < count else { return .unexpectedEndOfInput(expected: expected) }
        if self[position] >= 0x80 && utf8SequenceLength(at: position) == 0 { return .invalidUTF8 }
        let found = describeScalar(at: position)
        return .unexpectedCharacter(found: found.display, expected: expected, hint: hint ?? Self.hint(for: found.scalar))
    }

    /// The scalar at `index`, as text and as display form: `'x'`, `'“' (U+201C)`, `U+000A`.
    func describeScalar(at index: Int) -> (scalar: Unicode.Scalar?, text: String, display: String) {
        let length = Swift.max(1, utf8SequenceLength(at: index))
        let slice = UnsafeBufferPointer(rebasing: self[index..<Swift.min(index + length, count)])
        let text = String(decoding: slice, as: UTF8.self)
        guard let scalar = text.unicodeScalars.first else { return (nil, text, "'\(text)'") }
        // The name (`U+201C`) only where it is shown: not for the printable ASCII most errors meet.
        if scalar.value < 0x20 || scalar.value == 0x7F {
            let name = JSONParseError.scalarName(scalar.value)
            return (scalar, name, name)
        }
        if scalar.isASCII {
            return (scalar, text, "'\(text)'")
        }
        return (scalar, text, "'\(text)' (\(JSONParseError.scalarName(scalar.value)))")
    }

    /// What the usual mistake behind an unexpected `scalar` is, if there is one.
    private static func hint(for scalar: Unicode.Scalar?) -> String? {
        guard let scalar else { return nil }
        switch scalar.value {
        case 0x201C, 0x201D, 0x201E, 0x201F, 0x2033, 0x00AB, 0x00BB:
            return "typographic quotes are not JSON; use straight double quotes '\"'"
        case 0x2018, 0x2019, 0x201A, 0x201B, 0x0027:
            return "JSON strings use straight double quotes '\"'"
        case 0x2F: // "/"
            return "comments are not allowed in JSON"
        case 0x23: // "#"
            return "comments are not allowed in JSON"
        case 0x4E, 0x49: // "N", "I"
            return "NaN and Infinity are not JSON numbers"
        case 0x2B: // "+"
            return "JSON numbers have no leading '+'"
        case 0x2E: // "."
            return "JSON numbers need a digit before '.'"
        default:
            if scalar.properties.isWhitespace && !scalar.isASCII {
                return "only space, tab, CR and LF are JSON whitespace"
            }
            if scalar.isASCII && (scalar.properties.isAlphabetic) {
                return "object keys and strings must be quoted"
            }
            return nil
        }
    }
}
