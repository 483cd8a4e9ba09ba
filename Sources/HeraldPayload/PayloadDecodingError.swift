import HeraldJSON

/// Why bytes are not a payload, and where: the JSON Pointer of the value and its line:column.
///
/// ```
/// 3:14: /aps/badge: expected a whole number, found a string
/// ```
public struct PayloadDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Hashable {
        /// The text is not JSON.
        case syntax(JSONParseError)
        /// A value of the wrong JSON type.
        case typeMismatch(expected: String, found: JSONKind)
        /// A value of the right type that the model cannot hold (`1.5` for a badge).
        case invalidValue(expected: String, found: String)
        /// A key that Herald models appears twice in one object, so its value is ambiguous.
        case duplicateKey(String)
        /// A key the model has no place for, in a dictionary with a fixed shape.
        case unexpectedKey(String, expected: String)
    }

    /// What went wrong.
    public var kind: Kind
    /// The value the error is about (`""` for the whole document).
    public var pointer: JSONPointer
    /// Where that value starts in the source.
    public var location: SourceLocation

    /// The message without location or pointer.
    public var message: String {
        switch kind {
        case .syntax(let error): error.message
        case .typeMismatch(let expected, let found): "expected \(expected), found \(found)"
        case .invalidValue(let expected, let found): "expected \(expected), found \(found)"
        case .duplicateKey(let key): "duplicate key \"\(key)\"; a payload may give each key once"
        case .unexpectedKey(let key, let expected): "unexpected key \"\(key)\"; expected \(expected)"
        }
    }

    /// `LINE:COLUMN: POINTER: message` (the pointer is left out for syntax errors and the root).
    public var description: String {
        if case .syntax = kind { return "\(location): \(message)" }
        if pointer.tokens.isEmpty { return "\(location): \(message)" }
        return "\(location): \(pointer): \(message)"
    }
}
