import HeraldJSON

/// A localization file that cannot be read: where, and what was expected.
///
/// The description is `FILE:LINE:COLUMN: MESSAGE`, the form editors and CI annotate.
public struct LocalizationFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file as it was named.
    public var path: String
    /// Where in the file, when the problem has a position (a missing `;`, a bad escape).
    public var location: SourceLocation?
    /// What is wrong and what was expected.
    public var message: String

    /// Creates an error.
    public init(path: String, location: SourceLocation?, message: String) {
        self.path = path
        self.location = location
        self.message = message
    }

    /// `FILE:LINE:COLUMN: MESSAGE`, or `FILE: MESSAGE` without a position.
    public var description: String {
        if let location { "\(path):\(location.line):\(location.column): \(message)" } else { "\(path): \(message)" }
    }
}

/// Something worth telling about a localization: a table that failed to parse, a missing
/// argument, a key that is not in the table.
public struct LocalizationDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// How much it matters: Herald's one `DiagnosticSeverity` scale, as lint findings have.
    public typealias Severity = DiagnosticSeverity

    /// How much it matters.
    public var severity: Severity
    /// What happened.
    public var message: String
    /// The lint rule this diagnostic is a finding of (`background-without-content-available`),
    /// when it is one: a preview reports some rules' effects itself.
    public var rule: String?
    /// The file concerned, if any.
    public var path: String?
    /// Where in that file, if known.
    public var location: SourceLocation?

    /// Creates a diagnostic.
    public init(_ severity: Severity, _ message: String, rule: String? = nil, path: String? = nil, location: SourceLocation? = nil) {
        self.severity = severity
        self.message = message
        self.rule = rule
        self.path = path
        self.location = location
    }

    /// Creates an error diagnostic from a file error.
    public init(_ error: LocalizationFileError, severity: Severity = .error) {
        self.init(severity, error.message, path: error.path, location: error.location)
    }

    /// `FILE:LINE:COLUMN: severity: message [rule]`, with as much of the position as is known.
    public var description: String {
        var prefix = ""
        if let path {
            prefix = path
            if let location { prefix += ":\(location.line):\(location.column)" }
            prefix += ": "
        }
        return "\(prefix)\(severity.rawValue): \(message)" + (rule.map { " [\($0)]" } ?? "")
    }
}
