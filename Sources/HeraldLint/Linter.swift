import HeraldJSON
import HeraldProtocol

/// Which rules run, and how their findings are weighed.
public struct LintConfiguration: Sendable {
    /// Rules that do not run.
    public var disabled: Set<RuleID>
    /// Opt-in rules that run (rules enabled by default need not be listed).
    public var enabled: Set<RuleID>
    /// Severities that replace a rule's own.
    public var severityOverrides: [RuleID: LintSeverity]
    /// The fraction of the limit above which `payload-near-limit` speaks. Default 0.9.
    public var nearLimitFraction: Double
    /// Limits for the JSON parser.
    public var parserOptions: JSONParser.Options
    /// The most findings one rule reports per payload; past it they are counted, and one more
    /// finding says how many (their messages, locations and suggestions are never made). 100 by
    /// default: what a mock record keeps.
    public var maximumFindingsPerRule: Int

    /// A configuration; the default runs every rule enabled by default.
    public init(
        disabled: Set<RuleID> = [], enabled: Set<RuleID> = [], severityOverrides: [RuleID: LintSeverity] = [:],
        nearLimitFraction: Double = 0.9, parserOptions: JSONParser.Options = .init(), maximumFindingsPerRule: Int = 100
    ) {
        self.maximumFindingsPerRule = maximumFindingsPerRule
        self.disabled = disabled
        self.enabled = enabled
        self.severityOverrides = severityOverrides
        self.nearLimitFraction = nearLimitFraction
        self.parserOptions = parserOptions
    }
}

/// The lint engine: runs the catalog's rules over a body and its request context.
///
/// A `Linter` is an immutable value, safe to share between threads and cheap to call per request
/// (the mock server runs it on every push; `herald lint --jsonl` on millions of lines). A clean
/// payload costs one parse and one walk of the document.
///
/// ```swift
/// let linter = Linter()
/// let report = linter.lint(Array(body.utf8), context: LintContext(pushType: "background", priority: "10"))
/// for diagnostic in report.diagnostics { print(diagnostic.rule, diagnostic.message) }
/// ```
public struct Linter: Sendable {
    /// The configuration.
    public let configuration: LintConfiguration
    let settings: Settings

    /// What a lint pass reads on every payload, held inline: a pass copies it without touching a
    /// reference count, so threads linting in parallel do not contend on shared objects.
    struct Settings: Sendable {
        var active = RuleSet()
        var severities = InlineArray<128, LintSeverity>(repeating: .info)
        var nearLimitFraction = 0.9
        var parserOptions = JSONParser.Options()
        var maximumFindingsPerRule = 100
    }

    /// Creates a linter.
    public init(configuration: LintConfiguration = .init()) {
        self.configuration = configuration
        var settings = Settings()
        precondition(RuleID.allCases.count <= 128, "Settings.severities holds 128 rules")
        for rule in LintCatalog.rules {
            let on = (rule.enabledByDefault || configuration.enabled.contains(rule.id)) && !configuration.disabled.contains(rule.id)
            if on { settings.active.insert(rule.id) }
            settings.severities[rule.id.ordinal] = configuration.severityOverrides[rule.id] ?? rule.severity
        }
        settings.nearLimitFraction = configuration.nearLimitFraction
        settings.parserOptions = configuration.parserOptions
        settings.maximumFindingsPerRule = max(1, configuration.maximumFindingsPerRule)
        self.settings = settings
    }

    /// Lints a body (as sent) in a context.
    public func lint(_ bytes: [UInt8], context: LintContext = .bodyOnly) -> LintReport {
        bytes.withUnsafeBytes { lint($0, context: context) }
    }

    /// Lints a body in borrowed memory (a line of a larger buffer, a network buffer's bytes);
    /// the report keeps its own copy of what it needs.
    public func lint(_ bytes: UnsafeRawBufferPointer, context: LintContext = .bodyOnly) -> LintReport {
        var pass = LintPass(settings: settings, bytes: bytes, context: context)
        pass.run()
        return pass.finish()
    }

    /// Lints a body given as text.
    public func lint(_ text: String, context: LintContext = .bodyOnly) -> LintReport {
        lint(Array(text.utf8), context: context)
    }

    /// Whether a rule runs.
    public func isActive(_ rule: RuleID) -> Bool { settings.active.contains(rule) }
}

/// A set of rules as a bit set: membership is one shift and mask.
package struct RuleSet: Sendable {
    private var low: UInt64 = 0
    private var high: UInt64 = 0

    package init() {}

    package mutating func insert(_ rule: RuleID) {
        let ordinal = rule.ordinal
        if ordinal < 64 { low |= 1 << UInt64(ordinal) } else { high |= 1 << UInt64(ordinal - 64) }
    }

    package func contains(_ rule: RuleID) -> Bool {
        let ordinal = rule.ordinal
        return ordinal < 64 ? low & (1 << UInt64(ordinal)) != 0 : high & (1 << UInt64(ordinal - 64)) != 0
    }
}
