import HeraldJSON
import HeraldLint
import HeraldPayload

/// The contracts Herald's parsers keep on any input, shared by the libFuzzer targets (which crash
/// on a violation) and the regression tests (which replay saved inputs). Each returns the
/// violations found; an empty list means the input passed.
public enum PropertyChecks {
    static let options = JSONParser.Options(maximumDepth: 64)

    /// JSON: `diagnose` agrees with `parse`; for valid input the compact form is a fixed point,
    /// the pretty form means the same, and node pointers resolve.
    public static func json(_ bytes: [UInt8]) -> [String] {
        var violations: [String] = []
        let parser = JSONParser(options: options)
        let (recovered, diagnostics) = parser.parseRecovering(bytes)
        guard let document = try? parser.parse(bytes) else {
            if diagnostics.isEmpty { violations.append("parse failed but diagnose found nothing") }
            if let recovered {
                // A recovered document is for reading: every value and pointer must be reachable.
                _ = recovered.root.value
                for index in 0..<min(64, recovered.valueCount * 2) {
                    if let node = recovered.node(at: index) { _ = recovered.pointer(to: node); _ = node.location }
                }
            }
            for diagnostic in diagnostics where diagnostic.location.offset > bytes.count {
                violations.append("error location \(diagnostic.location) is past the end")
            }
            return violations
        }
        if !diagnostics.isEmpty { violations.append("parse succeeded but diagnose reported \(diagnostics)") }
        let compact = document.compactBytes()
        if compact.count != document.compactByteCount { violations.append("compactByteCount disagrees with the bytes") }
        guard let again = try? JSONDocument(parsing: compact, options: options) else {
            return violations + ["the compact form does not parse"]
        }
        if again.compactBytes() != compact { violations.append("the compact form is not a fixed point") }
        if again.root.value != document.root.value { violations.append("the compact form changed the value") }
        if (try? JSONDocument(parsing: document.prettyBytes(), options: options))?.compactBytes() != compact {
            violations.append("the pretty form changed the value")
        }
        for index in 0..<min(64, document.valueCount * 2) {
            guard let node = document.node(at: index) else { continue }
            let pointer = document.pointer(to: node)
            if let resolved = document.resolve(pointer), document.pointer(to: resolved) != pointer {
                violations.append("pointer \(pointer) resolves elsewhere")
            }
        }
        return violations
    }

    /// Payload: a payload that decodes encodes, decodes back equal, and means the same JSON.
    ///
    /// "The same" is exact for every value but the keys the model types as `Double`
    /// (``doubleTypedKeys``): those keep their value as the nearest `Double`, written in its
    /// shortest form, so `1553255926290447024` comes back as `1.553255926290447e+18`. The
    /// expected JSON is the original with exactly those numbers rounded that way.
    public static func payload(_ bytes: [UInt8]) -> [String] {
        guard let payload = try? Payload(decoding: bytes, options: options) else { return [] }
        guard let encoded = try? payload.encode() else { return ["a decoded payload failed to encode"] }
        var violations: [String] = []
        if (try? payload.encodedSize()) != encoded.count { violations.append("encodedSize disagrees with the bytes") }
        if (try? Payload(decoding: encoded)) != payload { violations.append("encode then decode changed the payload") }
        // A decoded payload writes its custom data from the source; the same data as values must
        // write the same bytes.
        var materialized = payload
        materialized.custom = payload.custom
        if (try? materialized.encode()) != encoded { violations.append("custom data from the source and as values encode differently") }
        if let original = try? JSONDocument(parsing: bytes, options: options).root.value,
           let written = try? JSONDocument(parsing: encoded).root.value,
           !written.isEquivalent(to: roundingDoubleTypedKeys(original)) {
            violations.append("decode then encode changed the JSON")
        }
        return violations
    }

    /// The payload keys the model holds as `Double`, as paths from the root.
    public static let doubleTypedKeys: [[String]] = [
        ["aps", "relevance-score"], ["aps", "timestamp"], ["aps", "stale-date"], ["aps", "dismissal-date"],
        ["aps", "sound", "volume"], ["aps", "alert", "sound", "volume"],
    ]

    /// `value` with the numbers at ``doubleTypedKeys`` replaced by their nearest `Double`.
    static func roundingDoubleTypedKeys(_ value: JSONValue) -> JSONValue {
        func round(_ value: JSONValue, _ path: ArraySlice<String>) -> JSONValue {
            guard let key = path.first else {
                guard case .number(let number) = value, let rounded = JSONNumber(number.doubleValue) else { return value }
                return .number(rounded)
            }
            guard case .object(var object) = value, let member = object[key] else { return value }
            object[key] = round(member, path.dropFirst())
            return .object(object)
        }
        return doubleTypedKeys.reduce(value) { round($0, $1[...]) }
    }

    /// Contexts the lint checks cycle through: body only, a complete request, and odd headers.
    public static let lintContexts: [LintContext] = [
        .bodyOnly,
        LintContext(pushType: "alert", priority: "10", topic: "com.x", isRequest: true),
        LintContext(pushType: "background", topic: "com.x.voip", isRequest: true),
        LintContext(pushType: "liveactivity", priority: "5", topic: "com.x.push-type.liveactivity", endpoint: .broadcast),
        LintContext(pushType: "widgets", priority: "1", collapseID: "c", expiration: "99", apnsID: "X", deviceToken: "zz"),
    ]

    /// Lint: never crashes (every rule enabled), and every finding is where it says it is (see
    /// ``lintLocations(_:in:)``).
    public static func lint(_ bytes: [UInt8], context: LintContext) -> [String] {
        let linter = Linter(configuration: LintConfiguration(enabled: Set(RuleID.allCases), parserOptions: options))
        let report = linter.lint(bytes, context: context)
        var problems: [String] = []
        for diagnostic in report.diagnostics where diagnostic.header != nil && diagnostic.location != nil {
            problems.append("\(diagnostic.rule): a header finding with a location")
        }
        let located = report.diagnostics.filter { $0.header == nil && $0.rule != .invalidJSON && $0.rule != .payloadEmpty }
        guard let document = report.document else {
            return problems + located.map { "\($0.rule): a value finding without a document" }
        }
        return problems + lintLocations(located, in: document)
    }

    /// Each finding about the body names, by its pointer, the node that starts at its reported
    /// offset: for a finding about a value, the value itself; for a finding about a key, the key
    /// of the member the pointer names. The line and column are those of the offset, counted
    /// here from the bytes (lines end at LF, CR or CRLF; columns count Unicode scalars).
    public static func lintLocations(_ diagnostics: [LintDiagnostic], in document: JSONDocument) -> [String] {
        let bytes = document.bytes
        var tokenAt: [Int: JSONDocument.Token] = [:]
        for token in document.tokens(in: document.root) { tokenAt[token.byteRange.lowerBound] = token }
        var problems: [String] = []
        for diagnostic in diagnostics {
            let name = "\(diagnostic.rule) at \(diagnostic.pointer?.description ?? "?")"
            guard let pointer = diagnostic.pointer else { problems.append("\(name): no pointer"); continue }
            guard let location = diagnostic.location else { problems.append("\(name): no location"); continue }
            guard let named = document.resolve(pointer) else { problems.append("\(name): the pointer does not resolve"); continue }
            guard let token = tokenAt[location.offset] else {
                problems.append("\(name): nothing starts at offset \(location.offset)")
                continue
            }
            if diagnostic.isAboutKey {
                if !token.isKey || token.index + 1 != named.index {
                    problems.append("\(name): offset \(location.offset) is not the key of the member \(pointer) names")
                }
            } else if token.isKey || token.index != named.index {
                problems.append("\(name): offset \(location.offset) is not the value \(pointer) names")
            }
            let (line, column) = lineAndColumn(of: location.offset, in: bytes)
            if line != location.line { problems.append("\(name): offset \(location.offset) is on line \(line), not \(location.line)") }
            if let column, column != location.column {
                problems.append("\(name): offset \(location.offset) is in column \(column), not \(location.column)")
            }
        }
        return problems
    }

    /// The 1-based line and column of an offset, counted with the standard library's own line and
    /// scalar handling; the column is `nil` where the line's text before it is not valid UTF-8.
    static func lineAndColumn(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int?) {
        let before = bytes[..<offset]
        var line = 1
        var lineStart = before.startIndex
        var index = before.startIndex
        while index < before.endIndex {
            switch before[index] {
            case UInt8(ascii: "\n"):
                line += 1
                lineStart = index + 1
            case UInt8(ascii: "\r"):
                if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\n") { index += 1 }
                line += 1
                lineStart = index + 1
            default:
                break
            }
            index += 1
        }
        let text = String(validating: before[lineStart...], as: UTF8.self)
        return (line, text.map { $0.unicodeScalars.count + 1 })
    }
}
