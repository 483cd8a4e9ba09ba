/// How much a finding matters.
public enum LintSeverity: String, Sendable, Hashable, CaseIterable, Comparable, Codable {
    /// Style, legacy usage, or a note worth knowing.
    case info
    /// Accepted, but misbehaves: throttled, ignored, or shown wrongly.
    case warning
    /// APNs would reject the request, or the device cannot use the payload.
    case error

    private var rank: Int {
        switch self {
        case .info: 0
        case .warning: 1
        case .error: 2
        }
    }

    public static func < (lhs: LintSeverity, rhs: LintSeverity) -> Bool { lhs.rank < rhs.rank }
}

/// The groups rules come in, for the catalog and its documentation.
public enum LintCategory: String, Sendable, Hashable, CaseIterable {
    /// The body as JSON: empty, malformed, not an object, duplicate keys, `aps` missing.
    case form
    /// Bytes against the push type's limit.
    case size
    /// Apple's keys, their types and ranges, and keys Apple does not define.
    case keys
    /// Background notifications that would not stay silent, or not wake the app.
    case silent
    /// The request headers against each other and against the payload.
    case headers
    /// `loc-key`, `loc-args` and their title and subtitle twins.
    case localization
    /// Customer information and secrets in custom data.
    case sensitive
    /// Keys for development tools.
    case tooling

    /// A heading for documentation.
    public var title: String {
        switch self {
        case .form: "Form"
        case .size: "Size"
        case .keys: "Keys and types"
        case .silent: "Silent notifications"
        case .headers: "Headers and payload"
        case .localization: "Localization"
        case .sensitive: "Sensitive data"
        case .tooling: "Tooling keys"
        }
    }
}
