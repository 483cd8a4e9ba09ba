import HeraldJSON
import HeraldPayload

extension LintRule {
    static let sensitiveCardNumber = LintRule(
        .sensitiveCardNumber, .warning, .sensitive,
        summary: "Custom data holds what looks like a payment card number.",
        rationale: "\"Don't include customer information or any sensitive data, like a credit card number, in a notification's payload. If you must, encrypt it\" (seed 001, \"Important\"). Matches 13 to 19 digits with a card network's prefix that pass the Luhn check.",
        triggering: [LintExample(#"{"aps":{"alert":"Payment received"},"card":"4111 1111 1111 1111"}"#), LintExample(#"{"aps":{},"order":{"pan":5555555555554444}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":"x"},"sentAt":1700000000000,"card":"•••• 1111"}"#)])

    static let sensitiveEmail = LintRule(
        .sensitiveEmail, .warning, .sensitive,
        summary: "Custom data holds an e-mail address.",
        rationale: "\"You should not include customer information (or any sensitive data) as custom payload data\" (seed 000); the older guide's own fifth example carries \"jane.appleseed@apple.com\". Send an identifier the app resolves instead.",
        triggering: [LintExample(#"{"aps":{"alert":"x"},"acme-account":"jane.appleseed@apple.com"}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":"x"},"acme-account":"account-8842","handle":"@jane"}"#)])

    static let sensitiveToken = LintRule(
        .sensitiveToken, .warning, .sensitive,
        summary: "Custom data holds a credential: a JSON Web Token, a bearer token or an API key.",
        rationale: "Payloads pass through Apple's servers and land in the notification database; a credential there outlives its purpose (seed 001, \"Important\": no sensitive data without encryption).",
        triggering: [LintExample(#"{"aps":{},"auth":"Bearer 8f14e45fceea167a5a36dedd4bea2543"}"#), LintExample(#"{"aps":{},"jwt":"eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJBQkMxMjM0NTY3In0.c2lnbmF0dXJl"}"#)],
        nonTriggering: [LintExample(#"{"aps":{},"auth":"session-present"}"#)])

    static let sensitiveKeyName = LintRule(
        .sensitiveKeyName, .warning, .sensitive,
        summary: "A custom key is named like a secret: password, secret, ssn, api_key, cvv, ….",
        rationale: "Whatever such a key holds should not travel in a payload (seed 000; seed 001, \"Important\").",
        triggering: [LintExample(#"{"aps":{},"user":{"password":"hunter2"}}"#), LintExample(#"{"aps":{},"ssn":"078-05-1120"}"#)],
        nonTriggering: [LintExample(#"{"aps":{},"user":{"name":"Jenna","passwordChangedAt":null}}"#, .bodyOnly)])
}

extension LintPass {
    /// Scans the custom data beside aps: string and number values, and key names.
    mutating func checkSensitiveData(_ root: Node) {
        guard isActive(.sensitiveCardNumber) || isActive(.sensitiveEmail) || isActive(.sensitiveToken) || isActive(.sensitiveKeyName) else { return }
        for member in root.members where !member.keyNode.stringEquals("aps") {
            checkKeyName(member)
            scanSensitive(member.value)
        }
    }

    mutating func checkKeyName(_ member: JSONDocument.Member) {
        guard isActive(.sensitiveKeyName), SensitiveData.sensitiveKeyName(member.key) else { return }
        if member.value.isNull || member.value.boolValue != nil { return }
        report(.sensitiveKeyName, "custom key \"\(member.key)\" is named like a secret; keep secrets out of payloads or encrypt them for a service extension", at: member.value)
    }

    mutating func scanSensitive(_ node: Node) {
        switch node.kind {
        case .string:
            let findings: (card: String?, email: String?, token: String?) = node.withUTF8 { bytes in
                (isActive(.sensitiveCardNumber) ? SensitiveData.cardNumber(in: bytes) : nil,
                 isActive(.sensitiveEmail) && bytes.contains(UInt8(ascii: "@")) ? SensitiveData.email(in: bytes) : nil,
                 isActive(.sensitiveToken) ? SensitiveData.token(in: bytes) : nil)
            } ?? (nil, nil, nil)
            if let card = findings.card {
                report(.sensitiveCardNumber, "this looks like a payment card number (\(Self.masked(card))); do not send card numbers in payloads", at: node)
            }
            if let email = findings.email {
                report(.sensitiveEmail, "\"\(email)\" is an e-mail address; custom data should not carry customer information", at: node)
            }
            if let token = findings.token {
                report(.sensitiveToken, "this looks like \(token); credentials do not belong in payloads", at: node)
            }
        case .number:
            guard isActive(.sensitiveCardNumber), !node.numberHasFractionOrExponent else { return }
            let text = node.sourceText
            let card: String? = text.utf8.withContiguousStorageIfAvailable { SensitiveData.cardNumber(in: UnsafeRawBufferPointer($0)) } ?? nil
            if let card {
                report(.sensitiveCardNumber, "this looks like a payment card number (\(Self.masked(card))); do not send card numbers in payloads", at: node)
            }
        case .array:
            for element in node.elements { scanSensitive(element) }
        case .object:
            for member in node.members {
                checkKeyName(member)
                scanSensitive(member.value)
            }
        case .null, .bool:
            break
        }
    }

    /// `4111 …1111`: enough to find it, not enough to leak it again in a report.
    static func masked(_ digits: String) -> String {
        "\(digits.prefix(4)) …\(digits.suffix(4))"
    }
}
