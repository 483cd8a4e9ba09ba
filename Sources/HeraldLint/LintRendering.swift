import HeraldJSON

/// One linted input, as an output format names it.
public struct LintFileResult: Sendable {
    /// The file's name as given (or `<stdin>`).
    public var path: String
    /// For `--jsonl` input, the 1-based line the payload is on; `nil` for a whole file.
    public var lineNumber: Int?
    /// The findings.
    public var report: LintReport

    /// Creates a result.
    public init(path: String, lineNumber: Int? = nil, report: LintReport) {
        self.path = path
        self.lineNumber = lineNumber
        self.report = report
    }

    /// `PATH` or `PATH:LINENO`.
    public var displayPath: String { lineNumber.map { "\(path):\($0)" } ?? path }

    /// The line to show for a diagnostic: its own, or the input line for `--jsonl`.
    func line(of diagnostic: LintDiagnostic) -> Int? {
        guard let location = diagnostic.location else { return nil }
        return lineNumber.map { $0 + location.line - 1 } ?? location.line
    }
}

/// Totals over a run.
public struct LintSummary: Sendable, Hashable {
    /// Inputs linted (files, or lines with `--jsonl`).
    public var files = 0
    /// Findings by severity.
    public var errors = 0
    /// Warnings.
    public var warnings = 0
    /// Infos.
    public var infos = 0

    /// An empty summary.
    public init() {}

    /// Adds one input's findings.
    public mutating func add(_ report: LintReport) {
        files += 1
        for diagnostic in report.diagnostics {
            switch diagnostic.severity {
            case .error: errors += 1
            case .warning: warnings += 1
            case .info: infos += 1
            }
        }
    }

    /// Adds another summary.
    public mutating func add(_ other: LintSummary) {
        files += other.files
        errors += other.errors
        warnings += other.warnings
        infos += other.infos
    }

    /// `3 payloads: 1 error, 2 warnings, 0 infos`.
    public func line(noun: String = "file") -> String {
        func plural(_ count: Int, _ word: String) -> String { "\(count) \(word)\(count == 1 ? "" : "s")" }
        return "\(plural(files, noun)) linted: \(plural(errors, "error")), \(plural(warnings, "warning")), \(plural(infos, "info"))"
    }
}

/// Compiler-style text: `FILE:LINE:COLUMN: warning: message [rule-id]`.
public struct LintTextRenderer: Sendable {
    /// Whether to add ANSI colours.
    public var colors: Bool

    /// Creates a renderer.
    public init(colors: Bool = false) {
        self.colors = colors
    }

    /// Appends one input's findings, writing bytes directly (a run can print hundreds of
    /// thousands of lines).
    public func render(_ result: LintFileResult, into output: inout [UInt8]) {
        for diagnostic in result.report.diagnostics {
            style("1", into: &output)
            output.append(contentsOf: result.path.utf8)
            if let number = result.line(of: diagnostic), let column = diagnostic.location?.column {
                output.append(UInt8(ascii: ":"))
                appendDecimal(number, to: &output)
                output.append(UInt8(ascii: ":"))
                appendDecimal(column, to: &output)
            } else if let number = result.lineNumber {
                output.append(UInt8(ascii: ":"))
                appendDecimal(number, to: &output)
            }
            reset(into: &output)
            output.append(contentsOf: ": ".utf8)
            switch diagnostic.severity {
            case .error:
                style("1;31", into: &output)
                output.append(contentsOf: "error:".utf8)
            case .warning:
                style("1;33", into: &output)
                output.append(contentsOf: "warning:".utf8)
            case .info:
                style("1;36", into: &output)
                output.append(contentsOf: "info:".utf8)
            }
            reset(into: &output)
            output.append(UInt8(ascii: " "))
            output.append(contentsOf: diagnostic.message.utf8)
            output.append(UInt8(ascii: " "))
            style("2", into: &output)
            output.append(UInt8(ascii: "["))
            output.append(contentsOf: diagnostic.rule.rawValue.utf8)
            output.append(UInt8(ascii: "]"))
            reset(into: &output)
            output.append(UInt8(ascii: "\n"))
        }
    }

    private func style(_ code: StaticString, into output: inout [UInt8]) {
        guard colors else { return }
        output.append(contentsOf: [0x1B, UInt8(ascii: "[")])
        output.append(contentsOf: UnsafeBufferPointer(start: code.utf8Start, count: code.utf8CodeUnitCount))
        output.append(UInt8(ascii: "m"))
    }

    private func reset(into output: inout [UInt8]) {
        guard colors else { return }
        output.append(contentsOf: [0x1B, UInt8(ascii: "["), UInt8(ascii: "0"), UInt8(ascii: "m")])
    }

    private func appendDecimal(_ value: Int, to output: inout [UInt8]) {
        // Digits straight into the buffer: line numbers are written for every finding.
        var digits = InlineArray<20, UInt8>(repeating: 0)
        var count = 0
        var rest = value.magnitude
        repeat {
            digits[count] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
            count += 1
        } while rest > 0
        if value < 0 { output.append(UInt8(ascii: "-")) }
        while count > 0 {
            count -= 1
            output.append(digits[count])
        }
    }

    /// The closing summary line.
    public func summary(_ summary: LintSummary, noun: String) -> String {
        summary.line(noun: noun) + "\n"
    }

}

/// The JSON report: one document,
/// `{"files":[{"path","bytes","limit","diagnostics":[…]}],"summary":{…}}`.
///
/// Written in pieces so a run over millions of payloads streams: ``begin()``, one ``file(_:)``
/// per input (joined with commas by the caller through ``separator``), then ``end(_:)``.
public enum LintJSONRenderer {
    /// The opening text.
    public static func begin() -> [UInt8] { Array(#"{"files":["#.utf8) }

    /// The text between two files.
    public static let separator = UInt8(ascii: ",")

    /// One file's object.
    public static func file(_ result: LintFileResult) -> [UInt8] {
        var writer = JSONWriter(output: JSONBytes())
        writer.beginObject()
        writer.key("path")
        writer.string(result.displayPath)
        writer.key("bytes")
        writer.integer(result.report.byteCount)
        writer.key("limit")
        writer.integer(result.report.limit)
        writer.key("diagnostics")
        writer.beginArray()
        for diagnostic in result.report.diagnostics {
            writer.beginObject()
            writer.key("rule")
            writer.string(diagnostic.rule.rawValue)
            writer.key("severity")
            writer.string(diagnostic.severity.rawValue)
            switch diagnostic.subject {
            case .header(let name):
                writer.key("header")
                writer.string(name)
            case .value(let pointer), .key(let pointer):
                writer.key("pointer")
                writer.string(pointer.description)
                if diagnostic.isAboutKey {
                    // The line and column are the key's, not the value's.
                    writer.key("target")
                    writer.string("key")
                }
                if let line = result.line(of: diagnostic), let column = diagnostic.location?.column {
                    writer.key("line")
                    writer.integer(line)
                    writer.key("column")
                    writer.integer(column)
                }
            }
            writer.key("message")
            writer.string(diagnostic.message)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.output.bytes
    }

    /// The closing text with the summary.
    public static func end(_ summary: LintSummary) -> [UInt8] {
        Array(#"],"summary":{"files":\#(summary.files),"errors":\#(summary.errors),"warnings":\#(summary.warnings),"infos":\#(summary.infos)}}"#.utf8) + [UInt8(ascii: "\n")]
    }
}

/// SARIF 2.1.0, the format code-scanning tools read: the rule catalog as the tool's rules, one
/// result per finding.
public enum LintSARIFRenderer {
    /// The opening text: tool, version and every rule.
    public static func begin(version: String) -> [UInt8] {
        var writer = JSONWriter(output: JSONBytes())
        writer.beginObject()
        writer.key("$schema")
        writer.string("https://json.schemastore.org/sarif-2.1.0.json")
        writer.key("version")
        writer.string("2.1.0")
        writer.key("runs")
        writer.beginArray()
        writer.beginObject()
        writer.key("tool")
        writer.beginObject()
        writer.key("driver")
        writer.beginObject()
        writer.key("name")
        writer.string("herald")
        writer.key("version")
        writer.string(version)
        writer.key("rules")
        writer.beginArray()
        for rule in LintCatalog.rules {
            writer.beginObject()
            writer.key("id")
            writer.string(rule.id.rawValue)
            writer.key("shortDescription")
            writer.beginObject()
            writer.key("text")
            writer.string(rule.summary)
            writer.endObject()
            writer.key("fullDescription")
            writer.beginObject()
            writer.key("text")
            writer.string(rule.rationale)
            writer.endObject()
            writer.key("defaultConfiguration")
            writer.beginObject()
            writer.key("level")
            writer.string(level(rule.severity))
            writer.key("enabled")
            writer.bool(rule.enabledByDefault)
            writer.endObject()
            writer.key("help")
            writer.beginObject()
            writer.key("text")
            writer.string("See docs/lint-rules.md#\(rule.id.rawValue) for examples.")
            writer.endObject()
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        writer.endObject()
        // Herald's columns count Unicode scalars (SourceLocation), not UTF-16 code units.
        writer.key("columnKind")
        writer.string("unicodeCodePoints")
        // The results array stays open for results(_:).
        return writer.output.bytes + Array(#","results":["#.utf8)
    }

    /// The text between two results.
    public static let separator = UInt8(ascii: ",")

    /// The results for one input, each preceded by ``separator`` except when `first`.
    public static func results(_ result: LintFileResult, first: inout Bool) -> [UInt8] {
        var output: [UInt8] = []
        for diagnostic in result.report.diagnostics {
            if !first { output.append(separator) }
            first = false
            var writer = JSONWriter(output: JSONBytes())
            writer.beginObject()
            writer.key("ruleId")
            writer.string(diagnostic.rule.rawValue)
            writer.key("ruleIndex")
            writer.integer(LintCatalog.catalogIndex(of: diagnostic.rule))
            writer.key("level")
            writer.string(level(diagnostic.severity))
            writer.key("message")
            writer.beginObject()
            writer.key("text")
            writer.string(diagnostic.message)
            writer.endObject()
            writer.key("locations")
            writer.beginArray()
            writer.beginObject()
            writer.key("physicalLocation")
            writer.beginObject()
            writer.key("artifactLocation")
            writer.beginObject()
            writer.key("uri")
            writer.string(result.path)
            writer.endObject()
            if let line = result.line(of: diagnostic), let column = diagnostic.location?.column {
                writer.key("region")
                writer.beginObject()
                writer.key("startLine")
                writer.integer(line)
                writer.key("startColumn")
                writer.integer(column)
                writer.endObject()
            } else if let line = result.lineNumber {
                writer.key("region")
                writer.beginObject()
                writer.key("startLine")
                writer.integer(line)
                writer.endObject()
            }
            writer.endObject()
            writer.key("logicalLocations")
            writer.beginArray()
            writer.beginObject()
            switch diagnostic.subject {
            case .value(let pointer), .key(let pointer):
                writer.key("fullyQualifiedName")
                writer.string(pointer.description)
                writer.key("kind")
                writer.string("member")
            case .header(let name):
                writer.key("name")
                writer.string(name)
                writer.key("kind")
                writer.string("header")
            }
            writer.endObject()
            writer.endArray()
            writer.endObject()
            writer.endArray()
            writer.endObject()
            output += writer.output.bytes
        }
        return output
    }

    /// The closing text.
    public static func end() -> [UInt8] { Array("]}]}\n".utf8) }

    static func level(_ severity: LintSeverity) -> String {
        switch severity {
        case .error: "error"
        case .warning: "warning"
        case .info: "note"
        }
    }
}
