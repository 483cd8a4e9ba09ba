/// A JSON number that keeps its text.
///
/// APNs payloads are measured in bytes as sent, so Herald never re-spells a number it did not
/// make: `1.0`, `1e0` and `1` are three different texts of one value. Equality and hashing use
/// the text; ``isNumericallyEqual(to:)`` compares values.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible,
    ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral
{
    /// The number as written: always valid RFC 8259 number syntax.
    public let text: String

    init(validatedText: String) {
        self.text = validatedText
    }

    /// A number from its JSON text, or `nil` if `text` is not exactly one JSON number.
    public init?(text: String) {
        guard Self.isValidSyntax(Array(text.utf8)) else { return nil }
        self.text = text
    }

    /// The number for an integer.
    public init<Integer: BinaryInteger>(_ value: Integer) {
        self.text = String(value)
    }

    /// The number for a finite `Double`, written in its shortest round-trip form (integral values
    /// up to 2^53 without a fraction: `25.0` is written `25`). `nil` for NaN and infinities, which
    /// JSON cannot express.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        self.text = Self.shortestText(value)
    }

    /// Creates a number from an integer literal.
    public init(integerLiteral value: Int) {
        self.init(value)
    }

    /// Creates a number from a float literal; a non-finite literal is a programming error.
    public init(floatLiteral value: Double) {
        guard let number = JSONNumber(value) else {
            preconditionFailure("JSON cannot represent \(value)")
        }
        self = number
    }

    /// The text.
    public var description: String { text }

    /// The value, if the text is an integer (no fraction, no exponent) that fits in 64 bits.
    public var int64Value: Int64? {
        var text = text
        return text.withUTF8 { Self.parseInteger($0) }
    }

    /// The value, if it is a whole number that fits in 64 bits however it is written
    /// (`5`, `5.0`, `5e0`, `0.5e1`).
    public var integralValue: Int64? {
        if let exact = int64Value { return exact }
        let double = doubleValue
        guard double.rounded() == double, double.magnitude < 9.2e18 else { return nil }
        return Int64(double)
    }

    /// The nearest `Double` (`±infinity` when out of range).
    public var doubleValue: Double {
        if let integer = int64Value, integer.magnitude <= 1 << 53 { return Double(integer) }
        return Double(text) ?? .nan
    }

    /// `true` if both numbers have the same mathematical value (as exact integers when both are
    /// 64-bit integers, otherwise as `Double`s).
    public func isNumericallyEqual(to other: JSONNumber) -> Bool {
        if text == other.text { return true }
        if let lhs = integralValue, let rhs = other.integralValue { return lhs == rhs }
        return doubleValue == other.doubleValue
    }

    // MARK: Helpers shared with the parser and writer

    /// Parses `-?[0-9]+` that fits in `Int64`.
    static func parseInteger(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0
        var negative = false
        if bytes.count > 0, bytes[0] == UInt8(ascii: "-") {
            negative = true
            index = 1
        }
        guard index < bytes.count, bytes.count - index <= 19 else {
            // 19 digits is the most an Int64 can need; longer may still fit with leading zeros,
            // which JSON forbids anyway.
            return nil
        }
        var magnitude: UInt64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (added, overflow2) = shifted.addingReportingOverflow(UInt64(digit))
            if overflow1 || overflow2 { return nil }
            magnitude = added
            index += 1
        }
        if negative {
            if magnitude == UInt64(Int64.max) + 1 { return .min }
            guard magnitude <= UInt64(Int64.max) else { return nil }
            return -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }

    /// Whether `bytes` is exactly one JSON number.
    static func isValidSyntax(_ bytes: [UInt8]) -> Bool {
        var index = 0
        let count = bytes.count
        func digits() -> Int {
            let start = index
            while index < count, bytes[index] &- UInt8(ascii: "0") < 10 { index += 1 }
            return index - start
        }
        if index < count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < count else { return false }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            return false
        }
        if index < count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return false }
        }
        if index < count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return false }
        }
        return index == count
    }

    /// The value as an integer if it is whole and at most 2^53 in magnitude (where every integer
    /// is exactly representable), so it can be written without a fraction.
    @usableFromInline
    static func exactInteger(_ value: Double) -> Int64? {
        guard value.rounded() == value, value.magnitude <= 9_007_199_254_740_992 else { return nil }
        return Int64(value)
    }

    /// The shortest JSON text for a finite `Double`.
    static func shortestText(_ value: Double) -> String {
        if let integer = exactInteger(value) {
            return String(integer)
        }
        // Swift prints the shortest text that round-trips; it is valid JSON for finite values
        // ("0.1", "1e-05", "1.5e+300").
        return value.description
    }
}
