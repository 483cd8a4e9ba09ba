import HeraldJSON

/// One finding: which rule, how serious, what and where. Findings come from ``Linter``; the type
/// has no public initializer.
public struct LintDiagnostic: Sendable, Hashable {
    /// What a finding is about.
    public enum Subject: Sendable, Hashable {
        /// A value in the body (or the object that should hold a missing value).
        case value(JSONPointer)
        /// The key of the member a pointer names: an unknown, misplaced, repeated or badly named
        /// key. The location is the key's own position, not its value's.
        case key(JSONPointer)
        /// A request header, such as `apns-priority`.
        case header(String)
    }

    /// The rule that found it.
    public var rule: RuleID
    /// How serious it is.
    public var severity: LintSeverity
    /// A sentence with the figures: `4161 bytes, over the 4096-byte limit for alert pushes`.
    public var message: String
    /// What it is about.
    public var subject: Subject
    /// Where the subject starts in the body; `nil` for headers.
    public var location: SourceLocation?

    /// The pointer, for value and key subjects.
    public var pointer: JSONPointer? {
        switch subject {
        case .value(let pointer), .key(let pointer): pointer
        case .header: nil
        }
    }

    /// Whether the finding is about a key rather than its value.
    public var isAboutKey: Bool {
        if case .key = subject { return true }
        return false
    }

    /// The header name, for header subjects.
    public var header: String? {
        if case .header(let name) = subject { return name }
        return nil
    }
}
