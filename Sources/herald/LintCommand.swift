import ArgumentParser
import HeraldJSON
import HeraldLint
import HeraldProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `herald lint`: the rule catalog over payloads and their headers.
struct LintCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lint",
        abstract: "Check payloads (and their headers) against every rule APNs and devices apply.",
        discussion: """
            Reads each FILE (or standard input for '-' or no FILE) as one payload and reports what \
            APNs would reject, what the device would ignore or show wrongly, and legacy or risky \
            usage. Give the request's headers to check them and the payload against them; headers \
            you leave out are unknown, not absent. Add --request when the headers you give are the \
            whole request: then a missing apns-priority means 10, and a missing apns-push-type or \
            apns-topic is reported.

            A .apns file is an Xcode simulator file: its "Simulator Target Bundle" and "WatchKit \
            Simulator Actions" keys belong there, so lint says nothing about them.

            Output is compiler-style, FILE:LINE:COLUMN: SEVERITY: MESSAGE [RULE], then a summary; \
            --format json writes one JSON document and --format sarif writes SARIF 2.1.0 for code \
            scanning. With --jsonl every line of the input is a payload, reported as \
            FILE:LINENO; JSON and SARIF output then list only the lines with findings.

            Exit status: 0 no errors (warnings allowed unless --strict), 1 errors found, \
            2 bad arguments, an unreadable input (the others are still linted) or output that \
            cannot be written.

            Examples:
              herald lint payload.json
              herald lint --push-type background --priority 10 silent.json
              herald lint --push-type liveactivity \\
                  --topic com.example.app.push-type.liveactivity update.json
              herald lint --jsonl --format json pushes.jsonl > report.json
              herald lint --rules                      # the rule catalog
            """
    )

    @Argument(help: ArgumentHelp("Payload files; '-' or nothing reads standard input.", valueName: "FILE"))
    var files: [String] = []

    @OptionGroup var headers: HeaderOptions

    @Option(name: .customLong("device-token"), help: ArgumentHelp("The device token of the path, in hex.", valueName: "HEX"))
    var deviceToken: String?

    @Flag(help: "The payload is sent to a broadcast channel (5120-byte limit; Live Activities only).")
    var broadcast = false

    @Flag(help: "The headers given are the whole request: absent headers are not sent.")
    var request = false

    @Flag(help: "Each line of the input is one payload.")
    var jsonl = false

    @Option(help: ArgumentHelp("Output format: text, json or sarif (markdown with --rules).", valueName: "FORMAT"))
    var format: OutputFormat = .text

    @Flag(help: "Exit with status 1 on warnings too.")
    var strict = false

    @Flag(help: "List the rule catalog and exit.")
    var rules = false

    @Option(name: .customLong("enable"), help: ArgumentHelp("Run an opt-in rule (repeatable).", valueName: "RULE"))
    var enabled: [String] = []

    @Option(name: .customLong("disable"), help: ArgumentHelp("Do not run a rule (repeatable).", valueName: "RULE"))
    var disabled: [String] = []

    @Option(help: ArgumentHelp("Threads for --jsonl (default: one per core).", valueName: "N"))
    var jobs: Int?

    enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
        case text, json, sarif, markdown
    }

    func validate() throws {
        if format == .markdown && !rules {
            throw ValidationError("--format markdown is for the rule catalog: use it with --rules.")
        }
        for name in enabled + disabled where RuleID(rawValue: name) == nil {
            throw ValidationError("'\(name)' is not a rule id; 'herald lint --rules' lists them.")
        }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1.") }
        if broadcast, let pushType = headers.pushType, pushType != PushType.liveactivity.rawValue {
            throw ValidationError("broadcast pushes are Live Activities: use --push-type liveactivity or leave it out.")
        }
    }

    func run() throws {
        if rules {
            writeStandardOutput(RuleCatalogPrinter.render(format: format))
            return
        }
        let linter = Linter(configuration: LintConfiguration(
            disabled: Set(disabled.compactMap(RuleID.init(rawValue:))),
            enabled: Set(enabled.compactMap(RuleID.init(rawValue:)))))
        let context = LintContext(
            pushType: headers.pushType ?? (broadcast ? PushType.liveactivity.rawValue : nil), priority: headers.priority, topic: headers.topic,
            collapseID: headers.collapseID, expiration: headers.expiration, apnsID: headers.apnsID, deviceToken: deviceToken,
            endpoint: broadcast ? .broadcast : .device, isRequest: request)
        let inputs = files.isEmpty ? [InputFile(argument: nil)] : files.map { InputFile(argument: $0) }
        var output = LintOutput(format: format, colors: Styler(descriptor: STDOUT_FILENO).enabled, noun: jsonl ? "payload" : "file")
        output.begin()
        // An unreadable file is reported and skipped: the readable ones are still linted, and the
        // command exits 2 at the end.
        var unreadable = false
        for input in inputs {
            var fileContext = context
            fileContext.isSimulatorFile = input.path?.lowercased().hasSuffix(".apns") == true
            let failure: (any Error)?
            do {
                if jsonl {
                    try JSONLLinter(linter: linter, context: fileContext, jobs: jobs ?? Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
                        .run(input, output: &output)
                } else {
                    let bytes = try input.read()
                    output.add(LintFileResult(path: input.displayName, report: linter.lint(bytes, context: fileContext)))
                }
                failure = nil
            } catch {
                failure = error
            }
            if let failure {
                guard let usage = failure as? UsageError else { throw failure }
                output.flush()
                writeStandardError("herald: error: \(usage.message)\n")
                unreadable = true
            }
        }
        output.end()
        let summary = output.summary
        if unreadable { throw ExitStatus.usageFailure }
        if summary.errors > 0 || (strict && summary.warnings > 0) {
            throw ExitStatus.failure
        }
    }
}

/// Streams results in the chosen format to standard output.
///
/// JSON and SARIF entries are always rendered with a leading comma, wherever they are rendered
/// (here, or on `--jsonl` worker threads); the first one written drops it.
struct LintOutput {
    let format: LintCommand.OutputFormat
    let colors: Bool
    let noun: String
    var summary = LintSummary()
    private var wroteEntry = false
    private var buffer: [UInt8] = []

    init(format: LintCommand.OutputFormat, colors: Bool, noun: String) {
        self.format = format
        self.colors = colors
        self.noun = noun
    }

    mutating func begin() {
        switch format {
        case .json: buffer += LintJSONRenderer.begin()
        case .sarif: buffer += LintSARIFRenderer.begin(version: Herald.configuration.version)
        case .text, .markdown: break
        }
    }

    /// Renders and appends one whole-file result.
    mutating func add(_ result: LintFileResult) {
        summary.add(result.report)
        append(Self.render(result, format: format, colors: colors, includeClean: true))
    }

    /// Appends output rendered elsewhere, and its counts.
    mutating func append(_ bytes: [UInt8], summary other: LintSummary) {
        summary.add(other)
        append(bytes)
    }

    private mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        if format == .json || format == .sarif, !wroteEntry {
            buffer += bytes.dropFirst()
            wroteEntry = true
        } else {
            buffer += bytes
        }
        if buffer.count > 1 << 20 { flush() }
    }

    /// One result in a format; JSON and SARIF entries start with a comma.
    static func render(_ result: LintFileResult, format: LintCommand.OutputFormat, colors: Bool, includeClean: Bool) -> [UInt8] {
        switch format {
        case .text, .markdown:
            var output: [UInt8] = []
            LintTextRenderer(colors: colors).render(result, into: &output)
            return output
        case .json:
            guard includeClean || !result.report.diagnostics.isEmpty else { return [] }
            return [LintJSONRenderer.separator] + LintJSONRenderer.file(result)
        case .sarif:
            var first = false
            return LintSARIFRenderer.results(result, first: &first)
        }
    }

    mutating func end() {
        switch format {
        case .text, .markdown: buffer += Array(LintTextRenderer(colors: colors).summary(summary, noun: noun).utf8)
        case .json: buffer += LintJSONRenderer.end(summary)
        case .sarif: buffer += LintSARIFRenderer.end()
        }
        flush()
    }

    mutating func flush() {
        writeStandardOutput(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Renders the rule catalog for `herald lint --rules`.
enum RuleCatalogPrinter {
    static func render(format: LintCommand.OutputFormat) -> String {
        switch format {
        case .markdown: LintCatalog.markdownReference()
        // A SARIF log with no results: tool.driver.rules holds the catalog.
        case .sarif: String(decoding: LintSARIFRenderer.begin(version: Herald.configuration.version) + LintSARIFRenderer.end(), as: UTF8.self)
        case .json: LintCatalog.jsonReference()
        case .text: LintCatalog.textReference() + "* opt-in: enable with --enable RULE. Details and examples: herald lint --rules --format markdown\n"
        }
    }
}
