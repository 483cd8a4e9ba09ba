#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HeraldJSON

/// The keys Apple defines inside `aps`, legacy and current, each spelled once.
///
/// Sources: the older guide's Table 5-1 and the current "Generating a remote notification"
/// Table 1, the Live Activity keys of Apple's “Starting and updating Live Activities with ActivityKit push notifications”, and `content-changed`
/// for widgets and controls (Apple's “Sending notification requests to APNs”).
public enum APSKey: CaseIterable, Sendable, Hashable, CustomStringConvertible, KnownKey {
    /// `alert`: a string (the body) or a dictionary (``AlertKey``).
    case alert
    /// `badge`: the number on the app icon; `0` clears it.
    case badge
    /// `sound`: a file name, `"default"`, or a critical-alert dictionary (``SoundKey``).
    case sound
    /// `thread-id`: groups related notifications.
    case threadID
    /// `category`: a registered `UNNotificationCategory` identifier (actions).
    case category
    /// `content-available`: `1` wakes the app in the background.
    case contentAvailable
    /// `mutable-content`: `1` runs the notification service extension first.
    case mutableContent
    /// `target-content-id`: the window to bring forward.
    case targetContentID
    /// `interruption-level`: `passive`, `active`, `time-sensitive` or `critical`.
    case interruptionLevel
    /// `relevance-score`: 0 to 1 (any number for Live Activities).
    case relevanceScore
    /// `filter-criteria`: a Focus filter.
    case filterCriteria
    /// `timestamp`: when a Live Activity update was sent (epoch seconds).
    case timestamp
    /// `event`: `start`, `update` or `end` of a Live Activity.
    case event
    /// `content-state`: a Live Activity's dynamic content.
    case contentState
    /// `stale-date`: when a Live Activity becomes stale (epoch seconds).
    case staleDate
    /// `dismissal-date`: when an ended Live Activity is removed (epoch seconds).
    case dismissalDate
    /// `attributes-type`: the `ActivityAttributes` type name, on start.
    case attributesType
    /// `attributes`: the static attributes, on start.
    case attributes
    /// `input-push-token`: `1` asks a started activity for an update token (iOS 18).
    case inputPushToken
    /// `input-push-channel`: a broadcast channel to subscribe a started activity to (iOS 18).
    case inputPushChannel
    /// `content-changed`: `true` reloads a widget or control.
    case contentChanged
    /// `url-args`: Safari website pushes fill the website's URL format string with these
    /// (Apple's "Notification Programming Guide for Websites").
    case urlArgs

    /// The key as written in JSON.
    public var name: StaticString {
        switch self {
        case .alert: "alert"
        case .badge: "badge"
        case .sound: "sound"
        case .threadID: "thread-id"
        case .category: "category"
        case .contentAvailable: "content-available"
        case .mutableContent: "mutable-content"
        case .targetContentID: "target-content-id"
        case .interruptionLevel: "interruption-level"
        case .relevanceScore: "relevance-score"
        case .filterCriteria: "filter-criteria"
        case .timestamp: "timestamp"
        case .event: "event"
        case .contentState: "content-state"
        case .staleDate: "stale-date"
        case .dismissalDate: "dismissal-date"
        case .attributesType: "attributes-type"
        case .attributes: "attributes"
        case .inputPushToken: "input-push-token"
        case .inputPushChannel: "input-push-channel"
        case .contentChanged: "content-changed"
        case .urlArgs: "url-args"
        }
    }

    /// `true` for keys that only Live Activity pushes use.
    public var isLiveActivityKey: Bool {
        switch self {
        case .timestamp, .event, .contentState, .staleDate, .dismissalDate, .attributesType, .attributes,
             .inputPushToken, .inputPushChannel: true
        default: false
        }
    }

    /// Every key, in declaration order.
    public static let keys = allCases
    /// Spellings to ordinals.
    package static let table = KeyTable(keys.map(\.name))

    /// The key as written in JSON.
    public var description: String { name.description }
}

/// The keys of the `alert` dictionary, legacy and current: Apple's “Generating a remote notification”,
/// Table 2, and the legacy keys of the “Local and Remote Notification Programming Guide”, Table 5-2,
/// which libraries still send.
public enum AlertKey: CaseIterable, Sendable, Hashable, CustomStringConvertible, KnownKey {
    /// `title`.
    case title
    /// `subtitle` (iOS 10).
    case subtitle
    /// `body`.
    case body
    /// `launch-image`.
    case launchImage
    /// `title-loc-key`: string or null.
    case titleLocKey
    /// `title-loc-args`: array of strings or null.
    case titleLocArgs
    /// `subtitle-loc-key`.
    case subtitleLocKey
    /// `subtitle-loc-args`.
    case subtitleLocArgs
    /// `loc-key`.
    case locKey
    /// `loc-args`.
    case locArgs
    /// `action-loc-key` (legacy): string or null; null means no action button.
    case actionLocKey
    /// `action` (legacy).
    case action
    /// `summary-arg` (legacy, iOS 12 summaries).
    case summaryArg
    /// `summary-arg-count` (legacy).
    case summaryArgCount
    /// `sound`: inside a Live Activity alert (Apple's “Starting and updating Live Activities with ActivityKit push notifications”).
    case sound

    /// The key as written in JSON.
    public var name: StaticString {
        switch self {
        case .title: "title"
        case .subtitle: "subtitle"
        case .body: "body"
        case .launchImage: "launch-image"
        case .titleLocKey: "title-loc-key"
        case .titleLocArgs: "title-loc-args"
        case .subtitleLocKey: "subtitle-loc-key"
        case .subtitleLocArgs: "subtitle-loc-args"
        case .locKey: "loc-key"
        case .locArgs: "loc-args"
        case .actionLocKey: "action-loc-key"
        case .action: "action"
        case .summaryArg: "summary-arg"
        case .summaryArgCount: "summary-arg-count"
        case .sound: "sound"
        }
    }

    /// `true` for keys Apple dropped from the current table.
    public var isLegacy: Bool {
        switch self {
        case .actionLocKey, .action, .summaryArg, .summaryArgCount: true
        default: false
        }
    }

    /// Every key, in declaration order.
    public static let keys = allCases
    /// Spellings to ordinals.
    package static let table = KeyTable(keys.map(\.name))

    /// The key as written in JSON.
    public var description: String { name.description }
}

/// The keys of the critical-alert `sound` dictionary ("Generating a remote notification", Table 3).
public enum SoundKey: CaseIterable, Sendable, Hashable, CustomStringConvertible, KnownKey {
    /// `critical`: `1` for a critical alert.
    case critical
    /// `name`: the sound file, or `"default"`.
    case name
    /// `volume`: 0 (silent) to 1 (full).
    case volume

    /// The key as written in JSON.
    public var name: StaticString {
        switch self {
        case .critical: "critical"
        case .name: "name"
        case .volume: "volume"
        }
    }

    /// Every key, in declaration order.
    public static let keys = allCases
    /// Spellings to ordinals.
    package static let table = KeyTable(keys.map(\.name))

    /// The key as written in JSON.
    public var description: String { name.description }
}

/// Top-level payload keys with a meaning to Apple's tools.
public enum PayloadKey {
    /// `aps`: Apple's dictionary.
    public static let aps: StaticString = "aps"
    /// `Simulator Target Bundle`: read by `xcrun simctl push` and `.apns` files; ignored by APNs.
    public static let simulatorTargetBundle: StaticString = "Simulator Target Bundle"
    /// `mdm`: the PushMagic string of an MDM push.
    public static let mdm: StaticString = "mdm"
    /// `WatchKit Simulator Actions`: action buttons for the watchOS simulator, from Xcode's
    /// notification templates; ignored by devices.
    public static let watchKitSimulatorActions: StaticString = "WatchKit Simulator Actions"
}

/// A fixed set of JSON keys with Apple-defined spellings (`aps`, `alert` and `sound` keys).
///
/// Package access: the key sets are Apple's, so this is not an extension point.
package protocol KnownKey: CaseIterable, Sendable, Hashable, CustomStringConvertible {
    /// The key as written in JSON.
    var name: StaticString { get }
    /// Every key, in declaration order (cached: `allCases` builds a new array on each call).
    static var keys: [Self] { get }
    /// Spellings to key ordinals, for lookups.
    static var table: KeyTable { get }
}

extension KnownKey {
    /// The key's position in ``keys``, for tables indexed by key.
    ///
    /// Keys are enums without payloads, stored as their one-byte declaration-order tag; tests check
    /// `ordinal` against `allCases` for every key.
    @inlinable @inline(__always)
    package var ordinal: Int {
        precondition(MemoryLayout<Self>.size == 1, "known keys are one-byte enums")
        return withUnsafeBytes(of: self) { Int($0[0]) }
    }

    /// The key spelled `name`, if it is one of these.
    @inlinable
    package init?(_ name: String) {
        var name = name
        guard let ordinal = name.withUTF8({ Self.table.ordinal(of: UnsafeRawBufferPointer($0)) }) else { return nil }
        self.init(ordinal: ordinal)
    }

    /// The key whose UTF-8 spelling is `bytes`, without allocating.
    @inlinable
    package init?(utf8 bytes: UnsafeRawBufferPointer) {
        guard let ordinal = Self.table.ordinal(of: bytes) else { return nil }
        self.init(ordinal: ordinal)
    }

    /// The key with an ordinal from this type's table: its one-byte tag (see ``ordinal``). Reading
    /// the tag avoids the shared `keys` array on the lookup path.
    @inlinable
    init(ordinal: Int) {
        precondition(MemoryLayout<Self>.size == 1 && ordinal >= 0 && ordinal < 256, "known keys are one-byte enums")
        self = withUnsafeBytes(of: UInt8(ordinal)) { $0.load(as: Self.self) }
    }
}

/// Maps key spellings to ordinals by comparing bytes, bucketed by length: no hashing, no
/// allocation, one flat buffer.
///
/// Tables are built once per key type and live as long as the process: their buffers are never
/// freed, so lookups from many threads read them without touching a reference count (shared
/// arrays would make every lookup retain and release the same object from every core).
/// `@unchecked Sendable` is sound because the buffers are written only in `init`.
package struct KeyTable: @unchecked Sendable {
    /// Every spelling, concatenated.
    @usableFromInline let bytes: UnsafeBufferPointer<UInt8>
    /// Offset into `bytes` and ordinal per spelling, grouped by length.
    @usableFromInline let offsets: UnsafeBufferPointer<Int32>
    @usableFromInline let ordinals: UnsafeBufferPointer<Int32>
    /// For each length L, the range `starts[L]..<starts[L + 1]` of entries with that length.
    @usableFromInline let starts: UnsafeBufferPointer<Int32>
    /// Each spelling's first eight bytes packed into a word (zeros past its end): most lookups
    /// are decided by one comparison of words, without a call to `memcmp`.
    @usableFromInline let prefixes: UnsafeBufferPointer<UInt64>

    /// A table of the given spellings, in ordinal order.
    package init(_ names: [StaticString]) {
        let longest = names.map(\.utf8CodeUnitCount).max() ?? 0
        var bytes: [UInt8] = []
        var offsets: [Int32] = []
        var ordinals: [Int32] = []
        var starts: [Int32] = []
        var prefixes: [UInt64] = []
        for length in 0...(longest + 1) {
            starts.append(Int32(offsets.count))
            for (ordinal, name) in names.enumerated() where name.utf8CodeUnitCount == length {
                offsets.append(Int32(bytes.count))
                ordinals.append(Int32(ordinal))
                let spelling = UnsafeBufferPointer(start: name.utf8Start, count: length)
                prefixes.append(Self.prefix(UnsafeRawBufferPointer(spelling)))
                bytes.append(contentsOf: spelling)
            }
        }
        self.bytes = Self.immortal(bytes)
        self.offsets = Self.immortal(offsets)
        self.ordinals = Self.immortal(ordinals)
        self.starts = Self.immortal(starts)
        self.prefixes = Self.immortal(prefixes)
    }

    /// The first eight bytes of `key`, little-endian, zeros past its end.
    @inlinable
    static func prefix(_ key: UnsafeRawBufferPointer) -> UInt64 {
        key.partialWord(from: 0)
    }

    /// A copy of `array` that is never freed.
    private static func immortal<Element>(_ array: [Element]) -> UnsafeBufferPointer<Element> {
        let buffer = UnsafeMutableBufferPointer<Element>.allocate(capacity: max(array.count, 1))
        _ = buffer.initialize(from: array)
        return UnsafeBufferPointer(rebasing: buffer[0..<array.count])
    }

    /// The ordinal of the key spelled `key`.
    @inlinable
    package func ordinal(of key: UnsafeRawBufferPointer) -> Int? {
        let length = key.count
        guard length > 0, length + 1 < starts.count else { return nil }
        let lower = Int(starts[length])
        let upper = Int(starts[length + 1])
        guard lower < upper else { return nil }
        let prefix = Self.prefix(key)
        for index in lower..<upper where prefixes[index] == prefix {
            if length <= 8 || memcmp(bytes.baseAddress! + Int(offsets[index]) + 8, key.baseAddress! + 8, length - 8) == 0 {
                return Int(ordinals[index])
            }
        }
        return nil
    }
}
