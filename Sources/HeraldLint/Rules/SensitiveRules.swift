import HeraldJSON
import HeraldPayload
import HeraldProtocol

extension LintRule {
    static let sensitiveCardNumber = LintRule(
        id: .sensitiveCardNumber, severity: .warning, category: .sensitive,
        summary: "Custom data holds what looks like a payment card number.",
        rationale: "\"Don't include customer information or any sensitive data, like a credit card number, in a notification's payload. If you must, encrypt it\" (Apple's \(AppleDocument.generatingARemoteNotification)). Matches 13 to 19 digits with a card network's prefix that pass the Luhn check.",
        triggering: [LintExample(#"{"aps":{"alert":"Payment received"},"card":"4111 1111 1111 1111"}"#), LintExample(#"{"aps":{},"order":{"pan":5555555555554444}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":"x"},"sentAt":1700000000000,"card":"•••• 1111"}"#)])

    static let sensitiveEmail = LintRule(
        id: .sensitiveEmail, severity: .warning, category: .sensitive,
        summary: "Custom data holds an e-mail address.",
        rationale: "\"You should not include customer information (or any sensitive data) as custom payload data\" (Apple's \(AppleDocument.legacyProgrammingGuide)); that guide's own fifth example carries \"jane.appleseed@apple.com\". Send an identifier the app resolves instead.",
        triggering: [LintExample(#"{"aps":{"alert":"x"},"acme-account":"jane.appleseed@apple.com"}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":"x"},"acme-account":"account-8842","handle":"@jane"}"#)])

    static let sensitiveToken = LintRule(
        id: .sensitiveToken, severity: .warning, category: .sensitive,
        summary: "Custom data holds a credential: a JSON Web Token, a bearer token or an API key.",
        rationale: "Payloads pass through Apple's servers and land in the notification database; a credential there outlives its purpose (Apple's \(AppleDocument.generatingARemoteNotification): no sensitive data without encryption).",
        triggering: [LintExample(#"{"aps":{},"auth":"Bearer 8f14e45fceea167a5a36dedd4bea2543"}"#), LintExample(#"{"aps":{},"jwt":"eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJBQkMxMjM0NTY3In0.c2lnbmF0dXJl"}"#)],
        nonTriggering: [LintExample(#"{"aps":{},"auth":"session-present"}"#)])

    static let sensitiveKeyName = LintRule(
        id: .sensitiveKeyName, severity: .warning, category: .sensitive,
        summary: "A custom key is named like a secret: password, secret, ssn, api_key, cvv, ….",
        rationale: "Whatever such a key holds should not travel in a payload (Apple's \(AppleDocument.generatingARemoteNotification)).",
        triggering: [LintExample(#"{"aps":{},"user":{"password":"hunter2"}}"#), LintExample(#"{"aps":{},"ssn":"078-05-1120"}"#)],
        nonTriggering: [LintExample(#"{"aps":{},"user":{"name":"Jenna","passwordChangedAt":null}}"#, .bodyOnly)])
}

extension LintPass {
    /// Scans the custom data beside aps: string and number values, and key names.
    mutating func checkSensitiveData(_ root: Node) {
        let active = SensitiveChecks(
            card: isActive(.sensitiveCardNumber), email: isActive(.sensitiveEmail),
            token: isActive(.sensitiveToken), keyName: isActive(.sensitiveKeyName))
        guard active.any else { return }
        // One scan over every custom member, its key included: a top-level key named like a
        // secret is found as a nested one is, and the scan's state is set up once per payload.
        let document = root.document
        var scan = SensitiveScan(active: active)
        // The tokens between the `aps` members (in order on the tape), a run at a time: no member
        // or node is made per key.
        document.withUnsafeBytes { source in
            var start = root.index + 1
            for apsKey in apsKeyIndices {
                for token in document.tokens(inTapeRange: start..<apsKey) { scan.examine(token, in: document, source) }
                start = document.endOfSubtree(at: apsKey + 1)
            }
            for token in document.tokens(inTapeRange: start..<document.endOfSubtree(at: root.index)) {
                scan.examine(token, in: document, source)
            }
        }
        report(scan)
    }

    struct SensitiveChecks {
        let card: Bool
        let email: Bool
        let token: Bool
        let keyName: Bool
        var any: Bool { card || email || token || keyName }
    }

    /// Reports what a scan found: the keys named like secrets, then the values.
    mutating func report(_ scan: SensitiveScan) {
        guard let document else { return }
        for value in scan.sensitiveKeyValues {
            guard let node = document.node(at: value) else { continue }
            reportKeyName(value: value, kind: node.kind)
        }
        for finding in scan.found {
            switch finding.rule {
            case .sensitiveCardNumber:
                report(.sensitiveCardNumber, "this looks like a payment card number (\(Self.masked(finding.detail.text(in: document)))); do not send card numbers in payloads", at: .node(finding.index))
            case .sensitiveEmail:
                report(.sensitiveEmail, Message.joined("\"", finding.detail.text(in: document), "\" is an e-mail address; custom data should not carry customer information"), at: .node(finding.index))
            default:
                report(.sensitiveToken, "this looks like \(finding.detail.text(in: document)); credentials do not belong in payloads", at: .node(finding.index))
            }
        }
    }

    /// A key named like a secret, unless its value is null or a flag (`passwordSet: true`).
    mutating func reportKeyName(value: Int, kind: JSONKind) {
        if kind == .null || kind == .bool { return }
        guard let keyRange = document?.keyByteRange(at: value - 1) else { return }
        report(.sensitiveKeyName, MessageText.quoting("custom key \"", value - 1, "\" is named like a secret; keep secrets out of payloads or encrypt them for a service extension"), at: .key(value: value, offset: keyRange.lowerBound))
    }

    /// `4111 …1111`: enough to find it, not enough to leak it again in a report.
    static func masked(_ digits: String) -> String {
        "\(digits.prefix(4)) …\(digits.suffix(4))"
    }
}

/// What one scan of custom data found.
struct SensitiveScan {
    let active: LintPass.SensitiveChecks
    var found: [(rule: RuleID, detail: Detail, index: Int)] = []

    /// What a finding quotes: text, or where it is in the source (made into text only if the
    /// finding is listed).
    enum Detail {
        case text(String)
        case source(Range<Int>)

        func text(in document: JSONDocument) -> String {
            switch self {
            case .text(let text): text
            case .source(let range): document.withUnsafeBytes { String(decoding: $0[range], as: UTF8.self) }
            }
        }
    }
    /// Tape indices of values whose key is named like a secret.
    var sensitiveKeyValues: [Int] = []
    /// The verdicts on the short keys met so far (see ``isSensitiveKey(_:)``).
    private var keyVerdicts = KeyVerdicts()

    init(active: LintPass.SensitiveChecks) {
        self.active = active
    }

    /// Examines one token of `document` (whose bytes are `source`): a key's name, a string's
    /// text, a long number's digits.
    mutating func examine(_ token: JSONDocument.Token, in document: JSONDocument, _ source: UnsafeRawBufferPointer) {
        switch token.kind {
        case .string:
            if token.hasEscapes {
                guard var decoded = document.node(at: token.index)?.stringValue ?? document.keyString(at: token.index) else { return }
                decoded.withUTF8 { examine(token, UnsafeRawBufferPointer($0), sourceOffset: nil) }
            } else {
                examine(token, UnsafeRawBufferPointer(rebasing: source[token.contentRange]), sourceOffset: token.contentRange.lowerBound)
            }
        case .number:
            guard active.card, token.byteRange.count >= 13 else { return }
            if let card = SensitiveData.cardNumber(in: UnsafeRawBufferPointer(rebasing: source[token.byteRange])) {
                found.append((.sensitiveCardNumber, .text(card), token.index))
            }
        default:
            return
        }
    }

    /// Examines a key or string whose text is `bytes`: the source itself from `sourceOffset`, or
    /// a decoded copy (`nil`).
    mutating func examine(_ token: JSONDocument.Token, _ bytes: UnsafeRawBufferPointer, sourceOffset: Int?) {
        if token.isKey {
            if active.keyName, isSensitiveKey(bytes) { sensitiveKeyValues.append(token.index + 1) }
            return
        }
        // One pass decides which detectors can possibly match.
        let traits = SensitiveData.traits(of: bytes)
        if active.card, traits.mayHoldCard, let card = SensitiveData.cardNumber(in: bytes) {
            found.append((.sensitiveCardNumber, .text(card), token.index))
        }
        if active.email, traits.hasAt, let email = SensitiveData.emailRange(in: bytes) {
            let detail: Detail = sourceOffset.map { .source(($0 + email.lowerBound)..<($0 + email.upperBound)) }
                ?? .text(String(decoding: bytes[email], as: UTF8.self))
            found.append((.sensitiveEmail, detail, token.index))
        }
        if active.token, bytes.count >= 20, traits.hasTokenStart, let kind = SensitiveData.token(in: bytes) {
            found.append((.sensitiveToken, .text(kind), token.index))
        }
    }

    /// Whether a key is named like a secret. The verdicts on keys of up to 16 bytes are kept
    /// (``KeyVerdicts``): a list of objects (items, events, messages) repeats its keys in every
    /// element, and a check costs 50 to 250 instructions where a kept verdict costs about 40.
    mutating func isSensitiveKey(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 3 else { return false }
        guard bytes.count <= 16 else { return SensitiveData.sensitiveKeyName(bytes) }
        return keyVerdicts.verdict(bytes) { SensitiveData.sensitiveKeyName($0) }
    }
}

/// Verdicts on short keys (at most 16 bytes), one per slot of a table indexed by a hash of the
/// key's bytes: a key in its slot is answered from it, another replaces it. A slot holds the
/// key's two words (zeros past its end) and its length, so a verdict is only ever given for the
/// same bytes.
///
/// A payload whose keys do not repeat (a flat dictionary of distinct keys) would pay the table
/// on every key for nothing: when fewer than 8 of the first 32 keys were answered from it, it
/// is no longer consulted.
struct KeyVerdicts {
    private var words = InlineArray<16, (UInt64, UInt64)>(repeating: (0, 0))
    /// The key's length (1 to 16; 0 for an empty slot) in the low bits, the verdict in the high bit.
    private var tags = InlineArray<16, UInt8>(repeating: 0)
    private var lookups = 0
    private var hits = 0
    private var isBypassed = false

    /// `check(key)`, kept for the next time the same key comes: `key` is 1 to 16 bytes.
    @inline(__always)
    mutating func verdict(_ key: UnsafeRawBufferPointer, _ check: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        if isBypassed { return check(key) }
        let count = key.count
        let low = key.partialWord(from: 0)
        let high = count > 8 ? key.partialWord(from: 8) : 0
        let slot = Int(truncatingIfNeeded: ((low ^ (high &* 0xFF51_AFD7_ED55_8CCD)) &* 0x9E37_79B9_7F4A_7C15) >> 60)
        let tag = tags[slot]
        let isKept = tag & 0x7F == UInt8(count) && words[slot].0 == low && words[slot].1 == high
        lookups += 1
        if isKept { hits += 1 }
        if lookups == 32, hits < 8 { isBypassed = true }
        if isKept { return tag & 0x80 != 0 }
        let found = check(key)
        words[slot] = (low, high)
        tags[slot] = UInt8(count) | (found ? 0x80 : 0)
        return found
    }
}
