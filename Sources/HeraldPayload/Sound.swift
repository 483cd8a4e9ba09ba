import HeraldJSON

/// The `sound` value: a sound file name (or `"default"`), or the critical-alert dictionary.
///
/// The file must already be on the device, in the app bundle or `Library/Sounds`; if it is
/// missing, the default sound plays (Apple's “Local and Remote Notification Programming Guide”, Table 5-1).
public enum Sound: Sendable, Hashable, ExpressibleByStringLiteral {
    /// A sound file name, or `"default"` for the system sound.
    case named(String)
    /// A critical alert sound (`{"critical": 1, "name": …, "volume": …}`).
    case critical(CriticalSound)

    /// The system sound.
    public static let `default` = Sound.named(defaultName)

    /// The name that selects the system sound.
    public static let defaultName = "default"

    /// A named sound.
    public init(stringLiteral value: String) {
        self = .named(value)
    }

    /// A critical alert sound.
    public static func critical(name: String = defaultName, volume: Double? = nil) -> Sound {
        .critical(CriticalSound(critical: 1, name: name, volume: volume))
    }

    /// The file name, whichever form.
    public var name: String? {
        switch self {
        case .named(let name): name
        case .critical(let sound): sound.name
        }
    }
}

/// The `sound` dictionary for critical alerts ("Generating a remote notification", Table 3).
public struct CriticalSound: Sendable, Hashable {
    /// `critical`: `1` for a critical alert.
    public var critical: Int?
    /// `name`: the sound file, or `"default"`.
    public var name: String?
    /// `volume`: 0 (silent) to 1 (full volume).
    public var volume: Double?
    /// Keys Apple does not define, kept in order.
    public var otherKeys: JSONObject

    /// Creates a sound dictionary.
    public init(critical: Int? = 1, name: String? = nil, volume: Double? = nil, otherKeys: JSONObject = [:]) {
        self.critical = critical
        self.name = name
        self.volume = volume
        self.otherKeys = otherKeys
    }
}
