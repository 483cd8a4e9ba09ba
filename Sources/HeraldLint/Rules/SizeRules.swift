import HeraldJSON
import HeraldProtocol

extension LintRule {
    static let payloadTooLarge = LintRule(
        id: .payloadTooLarge, severity: .error, category: .size,
        summary: "The body is over the push type's size limit.",
        rationale: "APNs refuses payloads over \(PayloadLimit.standard) bytes, \(PayloadLimit.voip) for VoIP and \(PayloadLimit.broadcast) for broadcast pushes, counted in bytes of the body as sent, with \(APNsReason.payloadTooLarge.statusAndReason) (Apple's \(AppleDocument.sendingNotificationRequests); \(AppleDocument.generatingARemoteNotification)).",
        apnsReason: .payloadTooLarge,
        triggering: [
            LintExample.headers(#"{"aps":{"alert":""# + String(repeating: "a", count: 4090) + #""}}"#, pushType: "alert"),
            LintExample.headers(#"{"aps":{},"data":""# + String(repeating: "안", count: 1710) + #""}"#, pushType: "voip"),
        ],
        nonTriggering: [
            LintExample.headers(#"{"aps":{},"data":""# + String(repeating: "a", count: 5000) + #""}"#, pushType: "voip"),
            LintExample(#"{"aps":{"alert":"Hi"}}"#),
        ])

    static let payloadNearLimit = LintRule(
        id: .payloadNearLimit, severity: .info, category: .size,
        summary: "The body uses more than 90% of its size limit.",
        rationale: "A payload close to the limit breaks as soon as a name or a translation grows (limits in Apple's \(AppleDocument.sendingNotificationRequests)). Send less data, or fetch it in a notification service extension.",
        triggering: [LintExample(#"{"aps":{"alert":""# + String(repeating: "a", count: 3800) + #""}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":""# + String(repeating: "a", count: 3000) + #""}}"#)])

    static let payloadOverLegacyLimit = LintRule(
        id: .payloadOverLegacyLimit, severity: .info, category: .size,
        summary: "The body is over the legacy binary interface's 2048-byte limit.",
        rationale: "The \(AppleDocument.legacyProgrammingGuide) gives \(PayloadLimit.legacyBinary) bytes for the legacy binary interface; tools and services built for it may still truncate or refuse larger payloads. HTTP/2 allows \(PayloadLimit.standard).",
        triggering: [LintExample(#"{"aps":{"alert":""# + String(repeating: "a", count: 2500) + #""}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":""# + String(repeating: "a", count: 1500) + #""}}"#)])

    static let payloadNotCompact = LintRule(
        id: .payloadNotCompact, severity: .info, category: .size,
        summary: "The body contains whitespace that costs bytes (opt-in).",
        rationale: "\"In practice, omit whitespace and line breaks to reduce the size of the payload\" (Apple's \(AppleDocument.legacyProgrammingGuide), \"Examples of JSON Payloads\"). Opt-in, since most senders compact payloads themselves; herald fmt writes the compact form.",
        enabledByDefault: false,
        triggering: [LintExample("{\n  \"aps\" : { \"alert\" : \"Hi\" }\n}")],
        nonTriggering: [LintExample(#"{"aps":{"alert":"Hi"}}"#)])
}

extension LintPass {
    mutating func checkSize(_ document: JSONDocument) {
        let size = bytes.count
        let limit = PayloadLimit.limit(for: pushType, endpoint: context.endpoint)
        let root = document.root
        let compact = compactSizeIfDifferent(document)
        let compactNote = compact.map { "; compact, it would be \($0) bytes (herald fmt)" } ?? ""
        let limitScope = self.limitScope
        if size > limit {
            report(.payloadTooLarge, "\(size) bytes, over the \(limit)-byte limit for \(limitScope)\(compactNote)", at: root)
        } else if Double(size) > Double(limit) * settings.nearLimitFraction {
            // Every 4 KB payload has this finding, and the mock records each message: joined in
            // one allocation rather than interpolated (1.8% of the mock's time on a 4 KB alert).
            report(
                .payloadNearLimit,
                Message.joined(String(size), " bytes, ", String(size * 100 / limit), "% of the ", String(limit), "-byte limit for ", limitScope + compactNote),
                at: root)
        } else if size > PayloadLimit.legacyBinary {
            report(.payloadOverLegacyLimit, "\(size) bytes, over the legacy binary interface's \(PayloadLimit.legacyBinary)-byte limit (HTTP/2 allows \(limit))\(compactNote)", at: root)
        }
        if let compact, isActive(.payloadNotCompact) {
            report(.payloadNotCompact, "\(size - compact) of the \(size) bytes are whitespace or longer escapes; the compact form is \(compact) bytes", at: root)
        }
    }

    var limitScope: String { Linter.limitScope(pushType: pushType, endpoint: context.endpoint) }

    /// The compact size, or `nil` if the body is already compact (decided from the tape, so a
    /// compact body costs no second pass).
    func compactSizeIfDifferent(_ document: JSONDocument) -> Int? {
        if document.isCompact { return nil }
        let compact = document.compactByteCount
        return compact == bytes.count ? nil : compact
    }
}

extension Linter {
    static func limitScope(pushType: PushType?, endpoint: APNsEndpoint) -> String {
        if endpoint == .broadcast { return "broadcast pushes" }
        guard let pushType else { return "device pushes (5120 for voip)" }
        return pushType.rawValue + " pushes"
    }

    /// The `payload-too-large` finding for a body of `byteCount` bytes over its limit, decided
    /// from the size alone (`nil` within the limit). A server answers such a body with this and
    /// does not lint it: APNs refuses it whatever it holds, and linting up to 64 KB only to say
    /// so costs far more than the size.
    public static func sizeRefusal(byteCount: Int, pushType: PushType?, endpoint: APNsEndpoint = .device) -> LintDiagnostic? {
        let limit = PayloadLimit.limit(for: pushType, endpoint: endpoint)
        guard byteCount > limit else { return nil }
        return LintDiagnostic(
            rule: .payloadTooLarge, severity: .error,
            message: "\(byteCount) bytes, over the \(limit)-byte limit for \(limitScope(pushType: pushType, endpoint: endpoint)) (answered from the size alone; the payload was not checked further)",
            subject: .value(JSONPointer(tokens: [])), location: nil)
    }
}
