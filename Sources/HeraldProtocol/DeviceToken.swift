/// A device token (or Live Activity push token) as sent in the path, hex-encoded.
///
/// Tokens are normalised to lowercase for storage and comparison: apps conventionally print them
/// lowercase, some SDKs print uppercase, and APNs accepts both (Apple's “Sending notification requests to APNs”). Apple says not to
/// assume a size; tokens have been 32 bytes, so Herald accepts 32 to 100 bytes and
/// ``isConventionalLength`` tells when a token is not 32.
///
/// ```swift
/// let token = try DeviceToken(hex: "7A3F…")   // 64 hex digits
/// token.hex                                    // "7a3f…"
/// ```
public struct DeviceToken: Sendable, Hashable, CustomStringConvertible {
    /// The token in lowercase hex.
    public let hex: String

    /// The length of every token issued so far.
    public static let conventionalByteCount = 32
    /// The sizes Herald accepts (Apple said in 2015 tokens might grow to 100 bytes).
    public static let acceptedByteCounts = 32...100

    /// Parses a hex token; uppercase is accepted and lowercased.
    public init(hex text: String) throws(DeviceTokenError) {
        // A token in lowercase ASCII hex (nearly every one: the mock parses one a request) is
        // kept as it is; lowercasing builds a new string.
        var copy = text
        let isLowercaseHex = copy.withUTF8 { bytes in
            !bytes.isEmpty && !bytes.contains { !($0 &- UInt8(ascii: "0") < 10 || $0 &- UInt8(ascii: "a") < 6) }
        }
        if isLowercaseHex, Self.problem(digits: text.utf8.count) == nil {
            self.hex = text
            return
        }
        if let problem = Self.problem(with: text) { throw problem }
        self.hex = text.lowercased()
    }

    /// A token from its raw bytes (as an app receives them).
    public init(bytes: some Sequence<UInt8>) throws(DeviceTokenError) {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var text = ""
        for byte in bytes {
            text.unicodeScalars.append(Unicode.Scalar(digits[Int(byte >> 4)]))
            text.unicodeScalars.append(Unicode.Scalar(digits[Int(byte & 0xF)]))
        }
        try self.init(hex: text)
    }

    /// The raw bytes.
    public var bytes: [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(hex.utf8.count / 2)
        var high: UInt8?
        for unit in hex.utf8 {
            let value = unit <= UInt8(ascii: "9") ? unit - UInt8(ascii: "0") : unit - UInt8(ascii: "a") + 10
            if let first = high {
                result.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return result
    }

    /// The number of bytes.
    public var byteCount: Int { hex.utf8.count / 2 }

    /// `true` for the 32-byte tokens APNs has always issued.
    public var isConventionalLength: Bool { byteCount == Self.conventionalByteCount }

    /// The lowercase hex.
    public var description: String { hex }

    /// What is wrong with a hex token, or `nil` if it is acceptable.
    public static func problem(with text: String) -> DeviceTokenError? {
        if text.isEmpty { return .empty }
        // Nearly every token is ASCII hex: its bytes are checked at once, and the scalars are
        // read (for the position a message gives) only when one is not.
        var text = text
        let digits = text.withUTF8 { bytes -> Int? in
            for byte in bytes where !(byte &- UInt8(ascii: "0") < 10 || (byte | 0x20) &- UInt8(ascii: "a") < 6) { return nil }
            return bytes.count
        }
        if let digits { return problem(digits: digits) }
        var position = 0
        for scalar in text.unicodeScalars {
            switch scalar {
            case "0"..."9", "a"..."f", "A"..."F": break
            default: return .invalidCharacter(String(scalar), position: position)
            }
            position += 1
        }
        return problem(digits: position)
    }

    /// What is wrong with `digits` hex digits, or `nil` if they are a token's.
    private static func problem(digits: Int) -> DeviceTokenError? {
        if digits % 2 != 0 { return .oddLength(digits: digits) }
        let bytes = digits / 2
        if !acceptedByteCounts.contains(bytes) { return .unexpectedLength(bytes: bytes) }
        return nil
    }
}

/// Why a string is not a device token.
public enum DeviceTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No digits at all.
    case empty
    /// A character that is not a hex digit, at a 0-based position.
    case invalidCharacter(String, position: Int)
    /// An odd number of hex digits.
    case oddLength(digits: Int)
    /// Fewer than 32 or more than 100 bytes.
    case unexpectedLength(bytes: Int)

    /// A sentence saying what is wrong and what was expected.
    public var description: String {
        switch self {
        case .empty:
            "the device token is empty; expected hex digits"
        case .invalidCharacter(let character, let position):
            "the device token has '\(character)' at position \(position + 1); expected only hex digits 0-9 and a-f"
        case .oddLength(let digits):
            "the device token has \(digits) hex digits; expected an even number (two per byte)"
        case .unexpectedLength(let bytes):
            "the device token is \(bytes) bytes; expected \(DeviceToken.acceptedByteCounts.lowerBound) to \(DeviceToken.acceptedByteCounts.upperBound) (normally \(DeviceToken.conventionalByteCount), 64 hex digits)"
        }
    }
}
