/// The value of `apns-expiration` (Apple's “Sending notification requests to APNs”).
///
/// Without the header, APNs applies its storage policy (up to 30 days). With it:
/// - `0` (``immediately``): try once, do not store;
/// - a UNIX time in **seconds**: store and retry until then.
public enum Expiration: Sendable, Hashable, CustomStringConvertible {
    /// `0`: deliver now or never.
    case immediately
    /// Store and retry until this UNIX time (seconds since 1970, UTC).
    case at(epochSeconds: Int64)

    /// Parses the header value: decimal digits only, no sign, no fraction.
    public init(headerValue: String) throws(ExpirationError) {
        guard !headerValue.isEmpty else { throw .empty }
        guard headerValue.utf8.allSatisfy({ $0 &- UInt8(ascii: "0") < 10 }) else { throw .notDigits(headerValue) }
        guard let seconds = Int64(headerValue) else { throw .outOfRange(headerValue) }
        self = seconds == 0 ? .immediately : .at(epochSeconds: seconds)
    }

    /// The header value.
    public var headerValue: String {
        switch self {
        case .immediately: "0"
        case .at(let seconds): String(seconds)
        }
    }

    /// The UNIX time, or 0 for ``immediately``.
    public var epochSeconds: Int64 {
        switch self {
        case .immediately: 0
        case .at(let seconds): seconds
        }
    }

    /// The header value.
    public var description: String { headerValue }

    /// Epoch values above this (the year 5138 in seconds) are almost certainly milliseconds.
    public static let millisecondsThreshold: Int64 = 100_000_000_000

    /// Whether the value looks like milliseconds rather than seconds.
    public var looksLikeMilliseconds: Bool { epochSeconds > Self.millisecondsThreshold }
}

/// Why a string is not an `apns-expiration`.
public enum ExpirationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The header is empty.
    case empty
    /// Something other than decimal digits (a sign, a fraction, a date string).
    case notDigits(String)
    /// More than a 64-bit integer holds.
    case outOfRange(String)

    /// A sentence saying what is wrong and what was expected.
    public var description: String {
        let form = "expected UNIX epoch seconds such as 1767225600, or 0 to deliver once without storing"
        switch self {
        case .empty: return "apns-expiration is empty; \(form)"
        case .notDigits(let value): return "apns-expiration '\(value)' is not a whole number of seconds; \(form)"
        case .outOfRange(let value): return "apns-expiration '\(value)' is too large; \(form)"
        }
    }
}
