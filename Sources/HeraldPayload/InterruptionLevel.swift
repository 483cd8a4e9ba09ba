/// The `interruption-level` value (iOS 15). A value Apple does not define is kept as given.
public struct InterruptionLevel: RawRepresentable, Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The value as written.
    public let rawValue: String

    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Wraps a literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// Added to the notification list without lighting the screen or playing a sound.
    public static let passive = InterruptionLevel(rawValue: "passive")
    /// The default: shown and heard at once.
    public static let active = InterruptionLevel(rawValue: "active")
    /// Breaks through Focus and scheduled summaries.
    public static let timeSensitive = InterruptionLevel(rawValue: "time-sensitive")
    /// Breaks through Focus and the mute switch (needs Apple's entitlement).
    public static let critical = InterruptionLevel(rawValue: "critical")

    /// The four levels Apple defines, in `UNNotificationInterruptionLevel` order (0 to 3).
    public static let known: [InterruptionLevel] = [.passive, .active, .timeSensitive, .critical]

    /// `true` for one of the four levels.
    public var isKnown: Bool { Self.known.contains(self) }

    /// The `UNNotificationInterruptionLevel` raw value (0 to 3), or `nil` if unknown.
    public var ordinal: Int? { Self.known.firstIndex(of: self) }

    /// The value.
    public var description: String { rawValue }
}
