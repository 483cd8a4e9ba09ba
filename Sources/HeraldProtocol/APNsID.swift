/// The value of `apns-id`: a notification's UUID, in canonical lowercase 8-4-4-4-12 form.
///
/// APNs echoes it in the response and generates one when the request has none. Apple specifies
/// lowercase; whether APNs rejects uppercase is unverified (Apple's “Sending notification requests to APNs”), so parsing accepts
/// either case, remembers whether the text was canonical, and Herald always sends lowercase.
public struct APNsID: Sendable, Hashable, CustomStringConvertible {
    /// The canonical lowercase form.
    public let uuidString: String

    /// Parses a UUID in 8-4-4-4-12 form, in either case.
    public init(parsing text: String) throws(APNsIDError) {
        let count = text.utf8.count
        guard count == 36 else { throw .wrongLength(count) }
        var index = 0
        var uppercase = false
        for byte in text.utf8 {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { throw .expectedHyphen(position: index) }
            } else {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): break
                case UInt8(ascii: "A")...UInt8(ascii: "F"): uppercase = true
                default: throw .expectedHexDigit(position: index)
                }
            }
            index += 1
        }
        // Nearly always lowercase already (Herald's own identifiers): kept as given.
        self.uuidString = uppercase ? text.lowercased() : text
    }

    /// A UUID from 16 bytes (version and variant bits are kept as given).
    ///
    /// - Throws: ``APNsIDError/wrongByteCount(_:)`` unless there are exactly 16 bytes.
    public init(bytes: [UInt8]) throws(APNsIDError) {
        guard bytes.count == 16 else { throw .wrongByteCount(bytes.count) }
        self.uuidString = Self.canonicalText(bytes)
    }

    /// 8-4-4-4-12 lowercase hex of 16 bytes.
    private static func canonicalText(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".unicodeScalars)
        var text = ""
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append("-") }
            text.unicodeScalars.append(digits[Int(byte >> 4)])
            text.unicodeScalars.append(digits[Int(byte & 0xF)])
        }
        return text
    }

    private init(uuidString: String) {
        self.uuidString = uuidString
    }

    /// A random (version 4) UUID.
    /// A random version 4 UUID from a fast generator (unique, not secret).
    package static func fastRandom() -> APNsID {
        APNsID(canonical: RandomIdentifier.uuid())
    }

    private init(canonical: String) {
        uuidString = canonical
    }

    public static func random() -> APNsID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A random (version 4) UUID from a given generator (for reproducible tests).
    public static func random(using generator: inout some RandomNumberGenerator) -> APNsID {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        return APNsID(uuidString: canonicalText(bytes))
    }

    /// Whether `text` is already canonical: a UUID in lowercase.
    public static func isCanonical(_ text: String) -> Bool {
        guard let id = try? APNsID(parsing: text) else { return false }
        return id.uuidString == text
    }

    /// The lowercase UUID.
    public var description: String { uuidString }
}

/// Why a string is not an `apns-id`.
public enum APNsIDError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not 36 characters.
    case wrongLength(Int)
    /// A character other than `-` where 8-4-4-4-12 needs a hyphen (0-based position).
    case expectedHyphen(position: Int)
    /// A character that is not a hex digit (0-based position).
    case expectedHexDigit(position: Int)
    /// Not 16 bytes (for ``APNsID/init(bytes:)``).
    case wrongByteCount(Int)

    /// A sentence saying what is wrong and what was expected.
    public var description: String {
        let form = "expected a UUID such as 123e4567-e89b-12d3-a456-4266554400a0 (8-4-4-4-12 lowercase hex digits)"
        switch self {
        case .wrongLength(let length): return "apns-id is \(length) characters; \(form)"
        case .expectedHyphen(let position): return "apns-id needs '-' at position \(position + 1); \(form)"
        case .expectedHexDigit(let position): return "apns-id has a non-hex character at position \(position + 1); \(form)"
        case .wrongByteCount(let count): return "a UUID has 16 bytes, not \(count)"
        }
    }
}
