import HeraldJSON
import HeraldPayload
import HeraldProtocol

extension LintRule {
    static let locArgsWithoutKey = LintRule(
        id: .locArgsWithoutKey, severity: .warning, category: .localization,
        summary: "loc-args (or title-loc-args, subtitle-loc-args) without its loc-key.",
        rationale: "The arguments replace the format specifiers of the string the matching key names (Apple's \(AppleDocument.generatingARemoteNotification), Table 2); without the key they are never used.",
        triggering: [LintExample(#"{"aps":{"alert":{"body":"Hi","loc-args":["Jenna"]}}}"#), LintExample(#"{"aps":{"alert":{"title-loc-args":["Jenna"],"body":"b"}}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":{"loc-key":"GAME_PLAY_REQUEST_FORMAT","loc-args":["Jenna","Frank"]}}}"#)])

    static let locKeyWithText = LintRule(
        id: .locKeyWithText, severity: .warning, category: .localization,
        summary: "loc-key together with body (or title-loc-key with title, subtitle-loc-key with subtitle).",
        rationale: "The loc keys are used instead of the plain keys (Apple's \(AppleDocument.generatingARemoteNotification), Table 2); which one the device shows when both are present is not documented. Send one.",
        triggering: [LintExample(#"{"aps":{"alert":{"body":"Hello","loc-key":"GREETING"}}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":{"title":"Hi","loc-key":"GREETING"}}}"#)])

    static let locArgsNotStrings = LintRule(
        id: .locArgsNotStrings, severity: .error, category: .localization,
        summary: "A loc-args element is not a string.",
        rationale: "loc-args, title-loc-args and subtitle-loc-args are arrays of strings (Apple's \(AppleDocument.generatingARemoteNotification), Table 2), substituted with %@; a number or null does not format as intended.",
        triggering: [LintExample(#"{"aps":{"alert":{"loc-key":"SCORE","loc-args":[3,"Rick"]}}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":{"loc-key":"SCORE","loc-args":["3","Rick"]}}}"#)])

    static let alertOnlyBody = LintRule(
        id: .alertOnlyBody, severity: .info, category: .localization,
        summary: "The alert is a dictionary with only body; a string says the same in fewer bytes.",
        rationale: "\"Don't specify a dictionary as the value of alert if the dictionary only has the body property\" (Apple's \(AppleDocument.legacyProgrammingGuide)). \(AppleDocument.generatingARemoteNotification) prefers dictionaries, so this is a note.",
        triggering: [LintExample(#"{"aps":{"alert":{"body":"Message received from Bob"}}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":"Message received from Bob"}}"#), LintExample(#"{"aps":{"alert":{"title":"Bob","body":"Hi"}}}"#)])

    static let unicodeEscapeInAlert = LintRule(
        id: .unicodeEscapeInAlert, severity: .warning, category: .localization,
        summary: "Alert text uses the JSON \\u notation.",
        rationale: "\"The JSON \\u notation is not supported. Put the actual UTF-8 character in the alert text instead\" (Apple's \(AppleDocument.legacyProgrammingGuide)). It also costs bytes against the limit: an escaped character takes 6 bytes (\\u00e9 for the 2 bytes of é), an emoji 12 (a surrogate pair for its 4 bytes). herald fmt rewrites such escapes as UTF-8.",
        triggering: [LintExample(#"{"aps":{"alert":"caf\u00e9"}}"#), LintExample(#"{"aps":{"alert":{"title":"\uD83C\uDFB2 Game"}}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":"café"}}"#), LintExample(#"{"aps":{"alert":"a \"quoted\" word\nnext line"}}"#)])

    static let formatMissingArguments = LintRule(
        id: .formatMissingArguments, severity: .error, category: .localization,
        summary: "A loc-key that is its own format string has more specifiers than loc-args.",
        rationale: "Each %@ takes the next loc-args element and %n$@ the n-th (Apple's \(AppleDocument.legacyProgrammingGuide), \"Localized Formatted Strings\"). When the key is missing from the app's strings table the device shows the key itself, formatted (\(AppleDocument.localizedUserNotificationString)): Live Activity alerts rely on this. Fewer arguments than specifiers is undefined; Herald's preview shows the gap.",
        triggering: [LintExample(#"{"aps":{"alert":{"loc-key":"%@ and %@ have invited you","loc-args":["Jenna"]}}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":{"loc-key":"%2$@ and %1$@ have invited you","loc-args":["Jenna","Frank"]}}}"#)])

    static let formatExtraArguments = LintRule(
        id: .formatExtraArguments, severity: .warning, category: .localization,
        summary: "A loc-key that is its own format string has fewer specifiers than loc-args.",
        rationale: "Arguments without a specifier are never shown (Apple's \(AppleDocument.legacyProgrammingGuide), \"Localized Formatted Strings\").",
        triggering: [LintExample(#"{"aps":{"alert":{"loc-key":"%@ joined","loc-args":["Jenna","Frank"]}}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":{"loc-key":"%@ joined","loc-args":["Jenna"]}}}"#)])

    static let formatNonObjectSpecifier = LintRule(
        id: .formatNonObjectSpecifier, severity: .warning, category: .localization,
        summary: "A loc-key that is its own format string uses %d, %s or another non-%@ specifier.",
        rationale: "loc-args are strings, so the specifiers are %@ and %n$@ (Apple's \(AppleDocument.generatingARemoteNotification), Table 2); %s in a strings file has been reported to break substitution in notifications.",
        triggering: [LintExample(#"{"aps":{"alert":{"loc-key":"%d new messages","loc-args":["3"]}}}"#)],
        nonTriggering: [LintExample(#"{"aps":{"alert":{"loc-key":"%@ new messages (100%%)","loc-args":["3"]}}}"#)])
}

extension LintPass {
    mutating func checkLocalization() {
        if let alertValue = apsValues[.alert], alertValue.kind == .string {
            checkUnicodeEscapes(alertValue)
        }
        guard let alert else { return }
        let pairs: [(key: AlertKey, arguments: AlertKey, text: AlertKey)] = [
            (.locKey, .locArgs, .body), (.titleLocKey, .titleLocArgs, .title), (.subtitleLocKey, .subtitleLocArgs, .subtitle),
        ]
        for pair in pairs {
            let key = alertValues[pair.key]
            let arguments = alertValues[pair.arguments]
            if let arguments, key == nil || key?.isNull == true, arguments.kind == .array, arguments.count > 0 {
                report(.locArgsWithoutKey, "\"\(pair.arguments)\" without \"\(pair.key)\" is never used", at: arguments)
            }
            if let key, !key.isNull, alertValues.has(pair.text) {
                report(.locKeyWithText, "\"\(pair.key)\" and \"\(pair.text)\" are both present; which one shows is undocumented: send one", at: key)
            }
            if let arguments, arguments.kind == .array {
                checkArgumentElements(arguments, name: pair.arguments.description)
                if let key, let format = key.stringValue {
                    checkFormat(format, arguments: arguments, keyNode: key)
                }
            }
        }
        if alert.count == 1, alertValues.has(.body), alertValues[.body]?.kind == .string {
            report(.alertOnlyBody, "an alert dictionary holding only \"body\" can be the string itself: \"alert\": \"…\"", at: alert)
        }
        for text in [AlertKey.title, .subtitle, .body] {
            guard let node = alertValues[text] else { continue }
            if node.kind == .string {
                checkUnicodeEscapes(node)
            } else if node.kind == .object, let key = node["loc-key"], let format = key.stringValue,
                      let arguments = node["loc-args"], arguments.kind == .array {
                checkArgumentElements(arguments, name: "loc-args")
                checkFormat(format, arguments: arguments, keyNode: key)
            }
        }
    }

    mutating func checkArgumentElements(_ arguments: Node, name: String) {
        // By tape index: a node is made only for an element listed (a number's source text).
        let document = arguments.document
        for index in arguments.elementIndices {
            let kind = document.kind(at: index)
            guard kind != .string else { continue }
            report(.locArgsNotStrings, kind == .number
                ? Message.joined("\"", name, "\" elements must be strings, found a number; write \"", document.node(at: index)?.sourceText ?? "", "\"")
                : Message.joined("\"", name, "\" elements must be strings, found \(kind); write a string"), at: .node(index))
        }
    }

    /// A key that contains format specifiers is its own format string when the app has no entry
    /// for it; compare its specifiers with the arguments.
    mutating func checkFormat(_ format: String, arguments: Node, keyNode: Node) {
        guard format.utf8.contains(UInt8(ascii: "%")) else { return }
        let parsed = LocalizedFormat(format)
        let needed = parsed.argumentCount
        let given = arguments.count
        if needed > given {
            report(.formatMissingArguments, "\"\(format)\" needs \(needed) argument\(needed == 1 ? "" : "s"), but \(given) \(given == 1 ? "is" : "are") given", at: keyNode)
        } else if needed < given {
            report(.formatExtraArguments, "\"\(format)\" uses \(needed) argument\(needed == 1 ? "" : "s"), but \(given) are given; the rest are never shown", at: arguments)
        }
        for specifier in parsed.specifiers where !specifier.isObject {
            report(.formatNonObjectSpecifier, "\"\(specifier.text)\" formats a \(specifier.conversion == "s" ? "C string" : "number"), but loc-args are strings: use %@ (or %n$@)", at: keyNode)
        }
    }

    /// Reports `\u` escapes in an alert string's source text, with what they cost.
    mutating func checkUnicodeEscapes(_ node: Node) {
        guard isActive(.unicodeEscapeInAlert), node.stringHasEscapes else { return }
        let (escapedBytes, utf8Bytes) = node.document.withUnsafeBytes { Self.unicodeEscapeCost(source: $0, range: node.rawStringBytes) }
        guard escapedBytes > 0 else { return }
        report(.unicodeEscapeInAlert, "alert text uses the \\u notation, which Apple's guide calls \"not supported\"; the escapes take \(escapedBytes) bytes where the UTF-8 characters take \(utf8Bytes): write the characters themselves (herald fmt does this)", at: node)
    }

    /// The source bytes of the `\uXXXX` escapes in a string's content, and the UTF-8 bytes of the
    /// characters they stand for (a surrogate pair: 12 bytes for 4).
    static func unicodeEscapeCost(source: UnsafeRawBufferPointer, range: Range<Int>) -> (escaped: Int, utf8: Int) {
        func hex(at index: Int) -> UInt32? {
            guard index + 4 <= range.upperBound else { return nil }
            var value: UInt32 = 0
            for byte in source[index..<index + 4] {
                guard let digit = UInt8(ascii: "0")...UInt8(ascii: "9") ~= byte ? byte - UInt8(ascii: "0")
                    : UInt8(ascii: "a")...UInt8(ascii: "f") ~= byte | 0x20 ? (byte | 0x20) - UInt8(ascii: "a") + 10 : nil else { return nil }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
        var escaped = 0, utf8 = 0
        var index = range.lowerBound
        while index < range.upperBound {
            guard source[index] == UInt8(ascii: "\\"), index + 1 < range.upperBound else { index += 1; continue }
            guard source[index + 1] == UInt8(ascii: "u"), let unit = hex(at: index + 2) else { index += 2; continue }
            if (0xD800..<0xDC00).contains(unit), index + 7 < range.upperBound, source[index + 6] == UInt8(ascii: "\\"),
               source[index + 7] == UInt8(ascii: "u"), let low = hex(at: index + 8), (0xDC00..<0xE000).contains(low) {
                escaped += 12
                utf8 += 4
                index += 12
                continue
            }
            escaped += 6
            utf8 += unit < 0x80 ? 1 : unit < 0x800 ? 2 : 3
            index += 6
        }
        return (escaped, utf8)
    }
}
