/// How much a diagnostic matters: the one scale of Herald's lint findings, localization
/// diagnostics and device previews, in text, JSON and SARIF alike (SARIF calls `info` "note").
public enum DiagnosticSeverity: String, Sendable, Hashable, CaseIterable, Comparable, Codable {
    /// Context, style, legacy usage: worth knowing, nothing is wrong.
    case info
    /// Accepted, but misbehaves: throttled, ignored, or shown other than intended.
    case warning
    /// APNs would reject the request, or the device cannot use the payload or the table.
    case error

    private var rank: Int {
        switch self {
        case .info: 0
        case .warning: 1
        case .error: 2
        }
    }

    /// Less serious first: info, warning, error.
    public static func < (lhs: DiagnosticSeverity, rhs: DiagnosticSeverity) -> Bool { lhs.rank < rhs.rank }
}
