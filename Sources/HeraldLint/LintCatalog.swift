import HeraldProtocol

/// Every rule Herald knows, in the order of the documentation.
public enum LintCatalog {
    /// All rules.
    public static let rules: [LintRule] = [
        // Form
        .payloadEmpty, .invalidJSON, .payloadNotObject, .duplicateKey, .apsMissing, .apsNotObject, .apsEmpty,
        .appleKeyOutsideAPS,
        // Size
        .payloadTooLarge, .payloadNearLimit, .payloadOverLegacyLimit, .payloadNotCompact,
        // Keys and types
        .keyType, .badgeInvalid, .flagNotOne, .soundInvalid, .interruptionLevelInvalid, .relevanceScoreRange,
        .liveActivityEventInvalid, .dateInMilliseconds, .dateImplausible, .unknownAPSKey, .unknownAlertKey, .unknownSoundKey,
        .legacyAlertKey, .customValueNull,
        // Silent notifications
        .silentWithVisibleContent, .backgroundWithVisibleContent, .backgroundWithoutContentAvailable, .backgroundPriority,
        .contentAvailableNoEffect,
        // Headers and payload
        .pushTypeInvalid, .pushTypeMissing, .topicMissing, .topicMismatch, .priorityInvalid, .collapseIDTooLong,
        .apnsIDInvalid, .apnsIDNotLowercase, .expirationInvalid, .expirationInMilliseconds, .deviceTokenInvalid,
        .deviceTokenUnusualLength, .alertPushWithoutContent, .mutableContentWithoutAlert, .liveActivityIncomplete, .liveActivityStartIncomplete,
        .liveActivityStartKeysLater, .liveActivityKeysOnOtherPushType, .liveActivityAPSKeyIgnored, .dismissalDateOutsideEnd, .broadcastCannotStart,
        .contentChangedMissing,
        // Localization
        .locArgsWithoutKey, .locKeyWithText, .locArgsNotStrings, .alertOnlyBody, .unicodeEscapeInAlert,
        .formatMissingArguments, .formatExtraArguments, .formatNonObjectSpecifier,
        // Sensitive data
        .sensitiveCardNumber, .sensitiveEmail, .sensitiveToken, .sensitiveKeyName,
        // Tooling
        .simulatorTargetBundle, .watchKitSimulatorActions, .simulatorKeyMisspelled,
    ]

    /// Rules by ordinal: a lookup is an array index.
    private static let byOrdinal: [LintRule] = {
        var table = [LintRule?](repeating: nil, count: RuleID.allCases.count)
        for rule in rules { table[rule.id.ordinal] = rule }
        return table.map { $0! }
    }()

    /// The rule with an id.
    public static func rule(_ id: RuleID) -> LintRule { byOrdinal[id.ordinal] }

    /// The position of a rule in ``rules``.
    public static func catalogIndex(of id: RuleID) -> Int { positions[id.ordinal] }

    private static let positions: [Int] = {
        var table = [Int](repeating: 0, count: RuleID.allCases.count)
        for (position, rule) in rules.enumerated() { table[rule.id.ordinal] = position }
        return table
    }()

    /// The order in which APNs checks a request, for rules that mirror its rejections: when a
    /// request breaks several, the first one here is what APNs answers. This follows the pushy
    /// mock server's order; Apple does not
    /// document one.
    public static let rejectionPrecedence: [RuleID] = [
        .apnsIDInvalid, .collapseIDTooLong, .priorityInvalid, .pushTypeInvalid, .deviceTokenInvalid, .topicMismatch,
        .expirationInvalid, .payloadEmpty, .payloadTooLarge,
    ]
}
