import HeraldProtocol

/// A rule of the catalog: what it checks, why, and examples that run as tests.
///
/// Rules read like SwiftLint's: an id, a one-line summary, a rationale citing its source (Apple's
/// document by title, such as "Generating a remote notification"), and triggering and
/// non-triggering examples. Rules come only from the catalog (``LintCatalog``): each has its
/// check in the linter, so the type has no public initializer.
public struct LintRule: Sendable, Identifiable {
    /// The stable id.
    public let id: RuleID
    /// How serious a finding is.
    public let severity: LintSeverity
    /// The group it belongs to.
    public let category: LintCategory
    /// One line.
    public let summary: String
    /// Why, with the source.
    public let rationale: String
    /// When APNs itself rejects requests that break this rule: the reason it answers with. The
    /// mock server answers with it; the client's pre-flight check refuses to send.
    public internal(set) var apnsReason: APNsReason? = nil
    /// Whether the rule runs unless disabled. Opt-in rules run only when enabled by id.
    public internal(set) var enabledByDefault = true
    /// Bodies (and headers) that must produce a finding of this rule.
    public let triggering: [LintExample]
    /// Bodies (and headers) that must not.
    public let nonTriggering: [LintExample]
}

/// A body and, optionally, request headers, used as a rule's example.
public struct LintExample: Sendable {
    /// The body.
    public let body: String
    /// The headers.
    public let context: LintContext

    /// An example body, linted alone or with headers.
    public init(_ body: String, _ context: LintContext = .bodyOnly) {
        self.body = body
        self.context = context
    }

    /// An example body sent with these headers (`isRequest` is set: the headers are complete).
    public static func request(
        _ body: String, pushType: String? = nil, priority: String? = nil, topic: String? = nil,
        collapseID: String? = nil, expiration: String? = nil, apnsID: String? = nil, deviceToken: String? = nil,
        endpoint: APNsEndpoint = .device
    ) -> LintExample {
        var context = headers(
            body, pushType: pushType, priority: priority, topic: topic, collapseID: collapseID, expiration: expiration, apnsID: apnsID,
            deviceToken: deviceToken, endpoint: endpoint).context
        context.isRequest = true
        return LintExample(body, context)
    }

    /// An example body with some headers known but not necessarily all.
    public static func headers(
        _ body: String, pushType: String? = nil, priority: String? = nil, topic: String? = nil,
        collapseID: String? = nil, expiration: String? = nil, apnsID: String? = nil, deviceToken: String? = nil,
        endpoint: APNsEndpoint = .device
    ) -> LintExample {
        LintExample(body, LintContext(
            pushType: pushType, priority: priority, topic: topic, collapseID: collapseID, expiration: expiration,
            apnsID: apnsID, deviceToken: deviceToken, endpoint: endpoint, isRequest: false))
    }
}
