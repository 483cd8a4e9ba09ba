import HeraldJSON
import HeraldProtocol

/// The result of linting one payload.
public struct LintReport: Sendable {
    /// The findings, in document order (header findings first).
    public var diagnostics: [LintDiagnostic]
    /// The size of the body as given, in bytes.
    public var byteCount: Int
    /// The size limit that applies.
    public var limit: Int
    /// The parsed document, when the body is JSON.
    public var document: JSONDocument?
    /// Findings past ``LintConfiguration/maximumFindingsPerRule``: counted and not listed (each
    /// capped rule has one more diagnostic saying how many of its findings it stands for).
    public var unlistedCount: Int

    /// Creates a report.
    public init(diagnostics: [LintDiagnostic], byteCount: Int, limit: Int, document: JSONDocument?, unlistedCount: Int = 0) {
        self.unlistedCount = unlistedCount
        self.diagnostics = diagnostics
        self.byteCount = byteCount
        self.limit = limit
        self.document = document
    }

    /// The number of findings of a severity.
    public func count(_ severity: LintSeverity) -> Int {
        diagnostics.reduce(0) { $0 + ($1.severity == severity ? 1 : 0) }
    }

    /// Whether any finding is an error: what stops a request before it is sent. `herald send`
    /// and the gateway's door refuse such a payload; the mock answers with ``apnsRejection``,
    /// the errors APNs itself rejects.
    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

    /// The first error, in the order of ``diagnostics``.
    public var firstError: LintDiagnostic? { diagnostics.first { $0.severity == .error } }

    /// The reason APNs would answer with, for the first error whose rule mirrors an APNs check
    /// (in the order of ``LintCatalog/rejectionPrecedence``), or `nil` if APNs would accept it.
    public var apnsRejection: APNsReason? {
        let found = rulesFound
        for rule in LintCatalog.rejectionPrecedence where found.contains(rule) {
            return LintCatalog.rule(rule).apnsReason
        }
        return nil
    }

    /// The rules with at least one finding, from one pass that reads each finding's rule in
    /// place: asking each of the rejection rules in turn copied every finding it passed.
    package var rulesFound: RuleSet {
        var found = RuleSet()
        diagnostics.withUnsafeBufferPointer { all in
            for index in all.indices { found.insert(all[index].rule) }
        }
        return found
    }
}
