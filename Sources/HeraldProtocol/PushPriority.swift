/// The value of the `apns-priority` header (Apple's “Sending notification requests to APNs”). Absent means 10.
public enum PushPriority: Int, CaseIterable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// `10`: send immediately. Only for notifications that alert, sound or badge; counts against
    /// the Live Activity budget.
    case immediate = 10
    /// `5`: send according to the device's power considerations; may be batched or throttled.
    /// Required for `background` pushes.
    case conservePower = 5
    /// `1`: power considerations over everything else; never wakes the device.
    case lowPower = 1

    /// The priority APNs assumes when the header is absent.
    public static let `default`: PushPriority = .immediate

    /// Parses the header value; only `10`, `5` and `1` are valid (anything else is
    /// ``APNsReason/badPriority``).
    public init?(headerValue: String) {
        guard let number = Int(headerValue), String(number) == headerValue,
              let priority = PushPriority(rawValue: number) else { return nil }
        self = priority
    }

    /// The header value.
    public var headerValue: String { String(rawValue) }

    /// The valid values for messages: `10, 5 or 1`.
    public static let validValues = "\(immediate.headerValue), \(conservePower.headerValue) or \(lowPower.headerValue)"

    /// The header value.
    public var description: String { headerValue }

    public static func < (lhs: PushPriority, rhs: PushPriority) -> Bool { lhs.rawValue < rhs.rawValue }
}
