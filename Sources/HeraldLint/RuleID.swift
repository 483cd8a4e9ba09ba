/// The stable identifier of a lint rule. Ids never change meaning; a retired rule's id is not
/// reused.
public enum RuleID: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    // Form
    case payloadEmpty = "payload-empty"
    case invalidJSON = "invalid-json"
    case payloadNotObject = "payload-not-object"
    case duplicateKey = "duplicate-key"
    case apsMissing = "aps-missing"
    case apsNotObject = "aps-not-object"
    case apsEmpty = "aps-empty"
    case appleKeyOutsideAPS = "apple-key-outside-aps"
    // Size
    case payloadTooLarge = "payload-too-large"
    case payloadNearLimit = "payload-near-limit"
    case payloadOverLegacyLimit = "payload-over-legacy-limit"
    case payloadNotCompact = "payload-not-compact"
    // Keys and types
    case keyType = "key-type"
    case badgeInvalid = "badge-invalid"
    case flagNotOne = "flag-not-one"
    case soundInvalid = "sound-invalid"
    case interruptionLevelInvalid = "interruption-level-invalid"
    case relevanceScoreRange = "relevance-score-range"
    case liveActivityEventInvalid = "live-activity-event-invalid"
    case dateInMilliseconds = "date-in-milliseconds"
    case dateImplausible = "date-implausible"
    case unknownAPSKey = "unknown-aps-key"
    case unknownAlertKey = "unknown-alert-key"
    case unknownSoundKey = "unknown-sound-key"
    case legacyAlertKey = "legacy-alert-key"
    case customValueNull = "custom-value-null"
    // Silent notifications
    case silentWithVisibleContent = "silent-with-visible-content"
    case backgroundWithVisibleContent = "background-with-visible-content"
    case backgroundWithoutContentAvailable = "background-without-content-available"
    case backgroundPriority = "background-priority"
    case contentAvailableNoEffect = "content-available-no-effect"
    // Headers and payload
    case pushTypeInvalid = "push-type-invalid"
    case pushTypeMissing = "push-type-missing"
    case topicMissing = "topic-missing"
    case topicMismatch = "topic-mismatch"
    case priorityInvalid = "priority-invalid"
    case collapseIDTooLong = "collapse-id-too-long"
    case apnsIDInvalid = "apns-id-invalid"
    case apnsIDNotLowercase = "apns-id-not-lowercase"
    case expirationInvalid = "expiration-invalid"
    case expirationInMilliseconds = "expiration-in-milliseconds"
    case deviceTokenInvalid = "device-token-invalid"
    case deviceTokenUnusualLength = "device-token-unusual-length"
    case alertPushWithoutContent = "alert-push-without-content"
    case mutableContentWithoutAlert = "mutable-content-without-alert"
    case liveActivityIncomplete = "live-activity-incomplete"
    case liveActivityStartIncomplete = "live-activity-start-incomplete"
    case liveActivityStartKeysLater = "live-activity-start-keys-later"
    case liveActivityKeysOnOtherPushType = "live-activity-keys-on-other-push-type"
    case liveActivityAPSKeyIgnored = "live-activity-aps-key-ignored"
    case dismissalDateOutsideEnd = "dismissal-date-outside-end"
    case broadcastCannotStart = "broadcast-cannot-start"
    case contentChangedMissing = "content-changed-missing"
    // Localization
    case locArgsWithoutKey = "loc-args-without-key"
    case locKeyWithText = "loc-key-with-text"
    case locArgsNotStrings = "loc-args-not-strings"
    case alertOnlyBody = "alert-only-body"
    case unicodeEscapeInAlert = "unicode-escape-in-alert"
    case formatMissingArguments = "format-missing-arguments"
    case formatExtraArguments = "format-extra-arguments"
    case formatNonObjectSpecifier = "format-non-object-specifier"
    // Sensitive data
    case sensitiveCardNumber = "sensitive-card-number"
    case sensitiveEmail = "sensitive-email"
    case sensitiveToken = "sensitive-token"
    case sensitiveKeyName = "sensitive-key-name"
    // Tooling
    case simulatorTargetBundle = "simulator-target-bundle"
    case watchKitSimulatorActions = "watchkit-simulator-actions"
    case simulatorKeyMisspelled = "simulator-key-misspelled"

    /// The id.
    public var description: String { rawValue }

    /// The rule's position in `allCases`, for bit sets and table lookups.
    ///
    /// An enum without payloads is stored as its declaration-order tag, one byte for fewer than
    /// 256 cases; reading the tag avoids hashing the raw value on the lint hot path. The layout is
    /// checked here and `ordinal` is tested against `allCases` for every case.
    @inline(__always)
    public var ordinal: Int {
        assert(MemoryLayout<RuleID>.size == 1, "RuleID must stay a one-byte enum")
        return Int(unsafeBitCast(self, to: UInt8.self))
    }
}
