/// Looks up and formats localized strings as the device does for a notification: in the
/// `Localizable` table of the first localization in the search order that has one, falling
/// back to the key itself, then formatting with the `loc-args` (Apple's “Local and Remote Notification Programming Guide”, on `%@` and `%n$@`; `localizedUserNotificationString(forKey:arguments:)` in Apple's Foundation documentation; CoreFoundation's bundle localization lookup).
public struct Localizer: Sendable {
    /// Choices that are not the device's to make.
    public struct Options: Sendable, Hashable {
        /// Look a missing key up in the next localizations too. CoreFoundation does not (it uses
        /// one table), iOS may; off by default (`localizedUserNotificationString(forKey:arguments:)` in Apple's Foundation documentation).
        public var perKeyFallback: Bool
        /// The device family for device variations (`iphone`, `ipad`, `mac`, `applewatch`, …).
        public var device: String
        /// Show markers where the device would show nothing (see ``LocalizedStringFormatter``).
        public var marksProblems: Bool

        /// Creates options.
        public init(perKeyFallback: Bool = false, device: String = LocalizedValue.defaultDevice, marksProblems: Bool = false) {
            self.perKeyFallback = perKeyFallback
            self.device = device
            self.marksProblems = marksProblems
        }
    }

    /// A looked-up, formatted string.
    public struct Text: Sendable, Hashable {
        /// What the device shows.
        public var text: String
        /// Whether the key was found (otherwise ``text`` is the key, formatted).
        public var found: Bool
        /// The table file(s) the value came from.
        public var source: String?
        /// Everything worth knowing about the lookup and formatting.
        public var diagnostics: [LocalizationDiagnostic]
    }

    /// The bundle, if any (without one every key shows as itself).
    public let bundle: LocalizationBundle?
    /// The user's languages, most preferred first.
    public let preferredLanguages: [String]
    /// The localizations searched, best first.
    public let searchOrder: [String]
    /// Options.
    public let options: Options

    /// The localization whose `Localizable` table is used, if any has one.
    public let tableLocalization: String?

    /// The app name the device shows, localized when the bundle can.
    public let appName: String?

    /// Creates a localizer for a user who prefers `preferredLanguages`.
    public init(bundle: LocalizationBundle?, preferredLanguages: [String], options: Options = Options()) {
        self.bundle = bundle
        self.preferredLanguages = preferredLanguages
        self.options = options
        let order = bundle?.searchOrder(for: preferredLanguages) ?? []
        self.searchOrder = order
        let tableLocalization = order.first { bundle?.table("Localizable", for: $0) != nil }
        self.tableLocalization = tableLocalization
        self.appName = bundle?.displayName(for: tableLocalization ?? order.first)
    }

    /// The language the device runs the app in: the localization chosen, or (with a
    /// language-less single table, or no bundle) the most preferred language.
    public var language: String {
        if let first = tableLocalization ?? searchOrder.first, first != "*" { return first }
        return preferredLanguages.first ?? "en"
    }

    /// Looks up `key` and formats it with `arguments` (`nil` when the payload has no args; a
    /// format with specifiers then shows gaps, as with an empty array).
    public func localizedString(forKey key: String, arguments: [String]?) -> Text {
        var diagnostics: [LocalizationDiagnostic] = []
        var format = key
        var selectors: Set<Int> = []
        var found = false
        var source: String?
        let arguments = arguments ?? []
        if let bundle, let localization = tableLocalization, let table = bundle.table("Localizable", for: localization) {
            source = table.sourceDescription
            var value = table.entries[key]
            var valueLanguage = localization
            if value == nil, let error = table.firstError {
                diagnostics.append(LocalizationDiagnostic(
                    .error, "\(error.path) could not be read (\(error.location.map { "\($0.line):\($0.column): " } ?? "")\(error.message)), so, like the device, Herald uses no strings from it and shows the key \"\(key)\""))
            }
            if value == nil, options.perKeyFallback {
                for fallback in searchOrder.drop(while: { $0 != localization }).dropFirst() {
                    if let fallbackTable = bundle.table("Localizable", for: fallback), let fallbackValue = fallbackTable.entries[key] {
                        value = fallbackValue
                        valueLanguage = fallback
                        source = fallbackTable.sourceDescription
                        diagnostics.append(LocalizationDiagnostic(.info, "\"\(key)\" is not in the \(localization) table; per-key fallback found it in \(fallback) (CoreFoundation would show the key)"))
                        break
                    }
                }
            }
            if let value {
                found = true
                let resolved = value.resolve(arguments: arguments, language: valueLanguage, device: options.device)
                format = resolved.format
                selectors = resolved.selectorArguments
                // Name the entry in what went wrong with its variations, so a broken table entry
                // can be found.
                diagnostics += resolved.diagnostics.map { diagnostic in
                    guard diagnostic.severity == .error else { return diagnostic }
                    var keyed = diagnostic
                    keyed.message = "\"\(key)\" in \(source ?? "the table"): " + diagnostic.message
                    return keyed
                }
            } else if table.firstError == nil {
                diagnostics.append(LocalizationDiagnostic(.warning, "\"\(key)\" is not in \(table.sourceDescription); the device shows the key itself"))
            }
        } else if let bundle {
            let searched = searchOrder.isEmpty ? bundle.localizations.joined(separator: ", ") : searchOrder.joined(separator: ", ")
            diagnostics.append(LocalizationDiagnostic(.warning, "no Localizable table in the localizations searched (\(searched.isEmpty ? "none" : searched)); the device shows the key \"\(key)\" itself"))
        } else {
            diagnostics.append(LocalizationDiagnostic(.info, "no bundle given, so \"\(key)\" is shown as the key itself (pass --bundle or --strings to look it up)"))
        }
        let formatter = LocalizedStringFormatter(options: .init(marksProblems: options.marksProblems))
        let formatted = formatter.format(format, arguments: arguments, selectorArguments: selectors)
        diagnostics += formatted.diagnostics
        return Text(text: formatted.text, found: found, source: source, diagnostics: diagnostics)
    }
}
