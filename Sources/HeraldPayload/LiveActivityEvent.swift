/// The `event` of a Live Activity push. A value Apple does not define is kept as given.
public struct LiveActivityEvent: RawRepresentable, Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The value as written.
    public let rawValue: String

    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Wraps a literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// Starts an activity (push-to-start token, iOS 17.2).
    public static let start = LiveActivityEvent(rawValue: "start")
    /// Updates an activity.
    public static let update = LiveActivityEvent(rawValue: "update")
    /// Ends an activity.
    public static let end = LiveActivityEvent(rawValue: "end")

    /// The three events Apple defines.
    public static let known: [LiveActivityEvent] = [.start, .update, .end]

    /// `true` for `start`, `update` or `end`.
    public var isKnown: Bool { Self.known.contains(self) }

    /// The value.
    public var description: String { rawValue }
}
