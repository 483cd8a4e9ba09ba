import ArgumentParser
import HeraldDevice
import HeraldJSON
import HeraldLint
import HeraldLocalization
import HeraldProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `herald preview`: what the device would show for a payload.
struct PreviewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview",
        abstract: "Show what a device would display for a payload, localized from your app's strings.",
        discussion: """
            Reads a payload from FILE (or standard input for '-' or no FILE) and renders it as the \
            phone would: loc-key and loc-args looked up in the app's Localizable.strings, \
            .stringsdict or String Catalog for the user's languages and formatted (%@, %2$@, %%), \
            the sound (a file missing from the bundle plays the default), the badge, the \
            interruption level, and how the notification is presented: alert, sound-badge, \
            silent, shown-despite-silent (meant silent but carrying an alert, sound or badge) or \
            live-activity.

            --bundle takes an app bundle or a project directory: *.lproj folders (Base.lproj, \
            Info.plist with CFBundleDevelopmentRegion and CFBundleDisplayName) or .xcstrings \
            catalogs. --strings takes one .strings, .stringsdict or .xcstrings file. Tables may be \
            UTF-8, UTF-16 or UTF-32 text, XML or binary property lists. Without either, every key \
            is shown as itself, as the device does for a missing key.

            Languages are chosen as iOS does: each of --lang in order (fr-CA falls back to fr, \
            zh-TW matches zh-Hant), then the app's development region. Like CoreFoundation, one \
            table is used; --per-key-fallback also looks a missing key up in the next languages.

            Formats: text (a banner as the lock screen shows it, then the details), json (one \
            object; absent values are null) and html (a self-contained page, light and dark).

            Exit status: 0 rendered, 1 rendered with errors (malformed payload, unreadable \
            table, missing loc-args), 2 bad arguments or a missing bundle.

            Examples:
              herald preview payload.json
              herald preview --bundle MyApp/ --lang fr-CA,en payload.json
              herald preview --strings fr.lproj/Localizable.strings payload.json
              herald preview --format html --output preview.html payload.json
              herald preview --lint --push-type background silent.json
              echo '{"aps":{"alert":"Hi","badge":2}}' | herald preview --format json
            """
    )

    @Argument(help: ArgumentHelp("The payload file; '-' or nothing reads standard input.", valueName: "FILE"))
    var file: String?

    @OptionGroup(title: "App strings") var localization: LocalizationOptions

    @Option(name: .customLong("app-name"), help: ArgumentHelp("The app name to show (default: the bundle's CFBundleDisplayName).", valueName: "NAME"))
    var appName: String?

    @Option(help: ArgumentHelp("Output format: text, json or html.", valueName: "FORMAT"))
    var format: Format = .text

    @Option(help: ArgumentHelp("Write the output to FILE instead of standard output.", valueName: "FILE"))
    var output: String?

    @Option(name: .customLong("push-type"), help: ArgumentHelp("apns-push-type: liveactivity renders an activity update, background marks the push as meant silent.", valueName: "TYPE"))
    var pushType: String?

    @Option(help: ArgumentHelp("The device family for device variations: \(LocalizedValue.deviceFamilies.joined(separator: ", ")).", valueName: "DEVICE"))
    var device: String = "iphone"

    @Flag(name: .customLong("per-key-fallback"), help: "Look a key missing from the chosen table up in the next languages.")
    var perKeyFallback = false

    @Flag(name: .customLong("mark-missing"), help: "Show ⟨markers⟩ where the device would show nothing (missing arguments).")
    var markMissing = false

    @Flag(help: "Also run 'herald lint' on the payload and list its findings with the preview's diagnostics.")
    var lint = false

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, html
    }

    func validate() throws {
        if let pushType, PushType(rawValue: pushType) == nil {
            throw ValidationError("unknown push type '\(pushType)'; expected one of \(PushType.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        if !LocalizedValue.deviceFamilies.contains(device) {
            throw ValidationError("unknown device '\(device)'; expected one of \(LocalizedValue.deviceFamilies.joined(separator: ", ")) (Xcode's device variation keys).")
        }
    }

    func run() throws {
        let localizationBundle = try loadBundle()
        let input = InputFile(argument: file)
        let bytes = try input.read()
        var languages = localization.languages ?? []
        if languages.isEmpty { languages = [localizationBundle?.developmentRegion ?? "en"] }
        let renderer = NotificationRenderer(
            bundle: localizationBundle, preferredLanguages: languages,
            options: Localizer.Options(perKeyFallback: perKeyFallback, device: device, marksProblems: markMissing))
        let headers = APNsRequestHeaders(pushType: pushType.flatMap(PushType.init(rawValue:)))

        let styler = Styler(descriptor: STDERR_FILENO)
        var failed = false
        for diagnostic in localizationBundle?.diagnostics ?? [] where diagnostic.severity >= .warning {
            writeStandardError(styled(diagnostic, styler) + "\n")
        }
        let (recovered, syntaxErrors) = JSONParser().parseRecovering(bytes)
        for error in syntaxErrors {
            writeStandardError("\(styler.bold("\(input.displayName):\(error.location)")): \(styler.red("error:")) \(error.message)\n")
        }
        guard let document = recovered else { throw ExitStatus.failure }
        var notification: RenderedNotification
        do {
            notification = try renderer.render(document: document, headers: headers)
        } catch {
            writeStandardError("\(styler.bold("\(input.displayName):\(error.underlying.location)")): \(styler.red("error:")) \(error.underlying.message)\n")
            throw ExitStatus.failure
        }
        if !syntaxErrors.isEmpty {
            failed = true
            notification.diagnostics.insert(LocalizationDiagnostic(
                .error, "the payload is not valid JSON (\(syntaxErrors.count) error\(syntaxErrors.count == 1 ? "" : "s") above); APNs would reject it, and this preview shows it as if the mistakes were fixed"), at: 0)
        }
        // Diagnostics about the payload itself point into the payload file.
        notification.diagnostics = notification.diagnostics.map { diagnostic in
            var copy = diagnostic
            if copy.path == nil, copy.location != nil { copy.path = input.displayName }
            return copy
        }
        if lint {
            let report = Linter().lint(bytes, context: LintContext(pushType: pushType))
            // A rule whose effect the preview already reported is said once.
            let reported = Set(notification.diagnostics.compactMap(\.rule))
            notification.diagnostics += report.diagnostics.filter { !reported.contains($0.rule.rawValue) }.map { finding in
                LocalizationDiagnostic(finding.severity, finding.message, rule: finding.rule.rawValue, path: input.displayName, location: finding.location)
            }
        }
        if notification.diagnostics.contains(where: { $0.severity == .error }) { failed = true }

        let rendered: String
        switch format {
        case .text:
            let usesColor = output == nil && Styler(descriptor: STDOUT_FILENO).enabled
            rendered = NotificationTextRenderer(usesColor: usesColor).render(notification, appName: appName ?? defaultAppName(localizationBundle))
        case .json:
            var value = notification.jsonValue
            if let appName, case .object(var object) = value, let index = object.members.firstIndex(where: { $0.key == "appName" }) {
                object.members[index].value = .string(appName)
                value = .object(object)
            }
            rendered = value.prettyString + "\n"
        case .html:
            var named = notification
            if let appName { named.appName = appName }
            rendered = NotificationHTMLRenderer().render(named, appName: defaultAppName(localizationBundle))
        }
        if let output {
            try writeFile(output, contents: rendered)
        } else {
            writeStandardOutput(rendered)
        }
        if failed { throw ExitStatus.failure }
    }

    private func loadBundle() throws -> LocalizationBundle? {
        let bundle = localization.bundle, strings = localization.strings
        guard let path = bundle ?? strings else { return nil }
        if strings != nil, FileSystemCheck.isDirectory(path) {
            throw UsageError(message: "--strings takes one table file; '\(path)' is a directory (use --bundle)")
        }
        do {
            return try LocalizationBundle.load(path: path)
        } catch {
            // A table that exists but does not parse is rendered like the device does (every
            // key shows as itself), so only unreadable paths and empty bundles end up here.
            if strings != nil, error.location != nil {
                throw UsageError(message: error.description)
            }
            throw UsageError(message: "cannot use \(bundle != nil ? "--bundle" : "--strings") '\(path)': \(error.message)")
        }
    }

    private func defaultAppName(_ bundle: LocalizationBundle?) -> String? {
        if let appName { return appName }
        guard let path = bundle?.path else { return nil }
        var name = Substring(path)
        while name.count > 1, name.hasSuffix("/") { name = name.dropLast() }
        let last = name.split(separator: "/").last.map(String.init) ?? String(name)
        return last.hasSuffix(".app") ? String(last.dropLast(4)) : nil
    }

    private func styled(_ diagnostic: LocalizationDiagnostic, _ styler: Styler) -> String {
        let text = diagnostic.description
        let marker = "\(diagnostic.severity.rawValue):"
        let colored = switch diagnostic.severity {
        case .error: styler.red(marker)
        case .warning: styler.yellow(marker)
        case .info: styler.cyan(marker)
        }
        guard let range = text.firstRange(of: marker) else { return text }
        var result = text
        result.replaceSubrange(range, with: colored)
        return result
    }
}

enum FileSystemCheck {
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }
}

/// Writes `contents` to `path`, replacing the file.
func writeFile(_ path: String, contents: String) throws(UsageError) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard descriptor >= 0 else {
        throw UsageError(message: "cannot write '\(path)': \(String(cString: strerror(errno)))")
    }
    var text = contents
    let failure = text.withUTF8 { writeAll(UnsafeRawBufferPointer($0), to: descriptor) }
    let closed = close(descriptor) == 0 ? nil : errno
    if let failure = failure ?? closed {
        throw UsageError(message: "cannot write '\(path)': \(String(cString: strerror(failure)))")
    }
}
