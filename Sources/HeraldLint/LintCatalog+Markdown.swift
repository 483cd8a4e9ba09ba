import HeraldJSON

/// The rule reference, rendered from the catalog (`docs/lint-rules.md` is the Markdown text; a
/// test fails when the file is stale).
extension LintCatalog {
    /// The Markdown reference for every rule, with its examples.
    public static func markdownReference() -> String {
        var text = """
        # Herald lint rules

        Generated from the rule catalog by `herald lint --rules --format markdown`; do not edit by hand.
        Every example below runs as a test: triggering examples must produce the rule's finding,
        non-triggering ones must not.

        Severities: **error**, APNs rejects the request or the device cannot use the payload;
        **warning**, accepted but throttled, ignored or shown wrongly; **info**, style or legacy.
        Rules marked *opt-in* run only when enabled (`herald lint --enable RULE`).


        """
        for category in LintCategory.allCases {
            let members = rules.filter { $0.category == category }
            guard !members.isEmpty else { continue }
            text += "## \(category.title)\n\n| id | severity | summary |\n|---|---|---|\n"
            for rule in members {
                text += "| [`\(rule.id)`](#\(rule.id)) | \(rule.severity.rawValue)\(rule.enabledByDefault ? "" : ", opt-in") | \(escapeTable(rule.summary)) |\n"
            }
            text += "\n"
            for rule in members {
                text += "### \(rule.id)\n\n"
                text += "**\(rule.severity.rawValue)**\(rule.enabledByDefault ? "" : " (opt-in)") · \(rule.summary)\n\n"
                text += "\(rule.rationale)\n\n"
                if let reason = rule.apnsReason, let status = reason.status {
                    text += "APNs rejects such requests: \(status) `\(reason)`.\n\n"
                }
                text += "Triggering:\n\n"
                for example in rule.triggering { text += render(example) }
                text += "\nNot triggering:\n\n"
                for example in rule.nonTriggering { text += render(example) }
                text += "\n"
            }
        }
        return text
    }

    private static func render(_ example: LintExample) -> String {
        var line = example.body.isEmpty ? "- (an empty body)" : "- `\(shorten(example.body))`"
        let headers = describe(example.context)
        if !headers.isEmpty { line += " with \(headers)" }
        return line + "\n"
    }

    private static func describe(_ context: LintContext) -> String {
        var parts: [String] = []
        if let value = context.pushType { parts.append("`apns-push-type: \(value)`") }
        if let value = context.priority { parts.append("`apns-priority: \(value)`") }
        if let value = context.topic { parts.append("`apns-topic: \(value)`") }
        if let value = context.collapseID { parts.append("`apns-collapse-id: \(shorten(value))`") }
        if let value = context.expiration { parts.append("`apns-expiration: \(value)`") }
        if let value = context.apnsID { parts.append("`apns-id: \(value)`") }
        if let value = context.deviceToken { parts.append("device token `\(shorten(value))`") }
        if context.endpoint == .broadcast { parts.append("a broadcast") }
        if context.isRequest { parts.append("(all headers shown)") }
        return parts.joined(separator: ", ")
    }

    /// Long examples (size rules) are summarised; backticks and newlines are escaped for Markdown.
    private static func shorten(_ text: String) -> String {
        var result = text
        if result.count > 120 {
            result = "\(result.prefix(60))…\(result.suffix(30)) (\(text.utf8.count) bytes)"
        }
        return result.replacing("\n", with: "⏎").replacing("`", with: "ˋ")
    }

    private static func escapeTable(_ text: String) -> String {
        text.replacing("|", with: "\\|")
    }
}

extension LintCatalog {
    /// The catalog as a JSON array, one object per rule: `id`, `severity`, `category`,
    /// `enabledByDefault`, `summary`, `rationale`, and `apnsReason` for a rule APNs enforces.
    public static func jsonReference() -> String {
        var writer = JSONWriter(output: JSONBytes(), style: .pretty)
        writer.beginArray()
        for rule in rules {
            writer.beginObject()
            writer.key("id")
            writer.string(rule.id.rawValue)
            writer.key("severity")
            writer.string(rule.severity.rawValue)
            writer.key("category")
            writer.string(rule.category.rawValue)
            writer.key("enabledByDefault")
            writer.bool(rule.enabledByDefault)
            writer.key("summary")
            writer.string(rule.summary)
            writer.key("rationale")
            writer.string(rule.rationale)
            if let reason = rule.apnsReason {
                writer.key("apnsReason")
                writer.string(reason.rawValue)
            }
            writer.endObject()
        }
        writer.endArray()
        return String(decoding: writer.output.bytes, as: UTF8.self) + "\n"
    }

    /// The catalog as a table for a terminal: rules by category, each with its id, severity
    /// (`*` for opt-in rules) and summary.
    public static func textReference() -> String {
        let width = rules.map(\.id.rawValue.count).max() ?? 0
        func padded(_ text: String, _ width: Int) -> String {
            text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
        }
        var text = ""
        for category in LintCategory.allCases {
            text += "\(category.title)\n"
            for rule in rules where rule.category == category {
                let severity = rule.severity.rawValue + (rule.enabledByDefault ? "" : "*")
                text += "  \(padded(rule.id.rawValue, width))  \(padded(severity, 8)) \(rule.summary)\n"
            }
            text += "\n"
        }
        return text
    }
}
