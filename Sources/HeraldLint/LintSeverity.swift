import HeraldJSON

/// How much a finding matters: Herald's one `DiagnosticSeverity` scale (`info`, `warning`,
/// `error`), which localization and previews use too.
public typealias LintSeverity = DiagnosticSeverity

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
