import HeraldPayload

/// Formats a localized format string with `loc-args`, the way the device fills in a
/// notification (Apple's “Local and Remote Notification Programming Guide”, on `%@` and `%n$@`).
///
/// It follows CoreFoundation's formatter (behind `String(format:)` and `NSString`), and is
/// checked against Foundation's `String(format:)` on generated formats:
/// - `%@` takes the next argument, `%n$@` the n-th, `%%` is a percent sign; a sequential `%@`
///   counts only the sequential specifiers before it.
/// - A format that skips a position (`%2$@` without `%1$@`) is undefined in printf, and
///   Foundation's result varies (another argument, `(null)`, or a crash); Herald takes the
///   argument the position names and reports a warning.
/// - Width and precision do not apply to `%@` (`%10@` prints the argument as is).
/// - `loc-args` are strings, and iOS hands them to the format as objects. A specifier that
///   expects a C value (`%d`, `%ld`, `%s`, `%f`, …) therefore does not print the argument's text
///   (a NativeScript report: "the localized arguments fail to display"). Herald prints nothing
///   for it and reports an error, so the preview shows the gap the user would see.
/// - A specifier without an argument prints nothing (Apple's “Local and Remote Notification Programming Guide”, on `%@` and `%n$@` recommends an empty string;
///   Foundation's `String(format:)` reads past the list, one report saw `<null>`), and is
///   reported as an error; arguments that no specifier uses are reported as a warning. With
///   ``Options/marksProblems`` the gaps are shown as `⟨…⟩` markers.
/// - A `%` that does not start a specifier is dropped and the text after it shown (`%y` shows
///   `y`, a trailing `%` nothing), as Foundation does, with a warning (a percent sign is `%%`).
/// - The text stops at ``maximumOutputBytes``, with a warning: a format can repeat an argument
///   (`%1$@%1$@…`) into far more text than any notification shows, and a preview or a mock must
///   not spend megabytes on it.
public struct LocalizedStringFormatter: Sendable {
    /// How gaps are shown.
    public struct Options: Sendable, Hashable {
        /// Show `⟨missing argument 2⟩`-style markers where the device would show nothing.
        public var marksProblems: Bool

        /// Creates options.
        public init(marksProblems: Bool = false) {
            self.marksProblems = marksProblems
        }
    }

    /// A formatted string and what went wrong on the way.
    public struct Result: Sendable, Hashable {
        /// The text the device shows.
        public var text: String
        /// Missing or unused arguments, specifiers that cannot print a string.
        public var diagnostics: [LocalizationDiagnostic]
    }

    /// The options in use.
    public var options: Options

    /// The most UTF-8 bytes a formatted string holds (16 KiB: several times what a notification
    /// shows); the rest is cut, and a warning says so.
    public static let maximumOutputBytes = 16 * 1024

    /// Creates a formatter.
    public init(options: Options = Options()) {
        self.options = options
    }

    /// Formats `format` with `arguments`.
    ///
    /// - Parameters:
    ///   - format: the format string, from a strings table or the `loc-key` itself.
    ///   - arguments: the `loc-args`.
    ///   - selectorArguments: arguments already used to choose a plural form, which are not
    ///     reported as unused when the chosen form does not print them.
    public func format(_ format: String, arguments: [String], selectorArguments: Set<Int> = []) -> Result {
        let scanned = LocalizedFormat(format)
        var text = ""
        var diagnostics: [LocalizationDiagnostic] = []
        var used = arguments.indices.map { selectorArguments.contains($0) }
        var reportedMissing: Set<Int> = []
        var dropped: [String] = []
        var cut = false
        for segment in scanned.segments {
            if text.utf8.count >= Self.maximumOutputBytes {
                cut = true
                break
            }
            switch segment {
            case .literal(let literal):
                text += literal
            case .percent:
                text += "%"
            case .invalid(let written):
                // Drop the `%` scalar, not the first Character: a combining mark after `%`
                // makes them one grapheme.
                text.unicodeScalars += written.unicodeScalars.dropFirst()
                if dropped.count < 4 { dropped.append(written) }
            case .variable(let name, let position, _):
                // A `%#@name@` left after variables were resolved has no definition.
                let index = position
                if index < used.count { used[index] = true }
                diagnostics.append(LocalizationDiagnostic(.error, "%#@\(name)@ has no variable definition (.stringsdict or catalog substitution); the device shows nothing for it"))
                if options.marksProblems { text += "⟨%#@\(name)@⟩" }
            case .argument(let specifier):
                let index = specifier.argumentIndex
                guard index < arguments.count else {
                    if reportedMissing.insert(index).inserted {
                        diagnostics.append(LocalizationDiagnostic(
                            .error, "\(specifier.text) needs argument \(index + 1) but only \(arguments.count) \(arguments.count == 1 ? "is" : "are") given; the device shows nothing there"))
                    }
                    if options.marksProblems { text += "⟨missing argument \(index + 1)⟩" }
                    continue
                }
                used[index] = true
                if specifier.isObject {
                    text += arguments[index]
                } else {
                    diagnostics.append(LocalizationDiagnostic(
                        .error, "\(specifier.text) expects a C value, but loc-args are strings: the device does not show argument \(index + 1) (\"\(arguments[index])\") there; use %@ or %\(index + 1)$@"))
                    if options.marksProblems { text += "⟨\(specifier.text): \(arguments[index])⟩" }
                }
            }
        }
        let skipped = scanned.skippedPositions.filter { !selectorArguments.contains($0) }
        if !skipped.isEmpty {
            let list = skipped.map { String($0 + 1) }.joined(separator: ", ") + (skipped.count == 8 ? ", …" : "")
            diagnostics.append(LocalizationDiagnostic(
                .warning, "no specifier uses position \(list); printf formats must use every position up to the highest, and Foundation's result is undefined otherwise (it may show another argument, or nothing)"))
        }
        let unused = used.indices.filter { !used[$0] }
        if !unused.isEmpty {
            let list = unused.map { "\($0 + 1) (\"\(arguments[$0])\")" }.joined(separator: ", ")
            diagnostics.append(LocalizationDiagnostic(
                .warning, "\(unused.count == 1 ? "argument" : "arguments") \(list) \(unused.count == 1 ? "is" : "are") not used by the format \"\(format)\""))
        }
        if cut || text.utf8.count > Self.maximumOutputBytes {
            if text.utf8.count > Self.maximumOutputBytes {
                // Cut at a scalar boundary.
                var bytes = Array(text.utf8.prefix(Self.maximumOutputBytes))
                while let last = bytes.last, last & 0xC0 == 0x80 { bytes.removeLast() }
                if let last = bytes.last, last >= 0xC0 { bytes.removeLast() }
                text = String(decoding: bytes, as: UTF8.self)
            }
            diagnostics.append(LocalizationDiagnostic(
                .warning, "the formatted text reaches \(Self.maximumOutputBytes) bytes and is cut there: far more than a notification shows (the format repeats its arguments?)"))
        }
        if !dropped.isEmpty {
            let list = dropped.map { "\"\($0)\"" }.joined(separator: ", ")
            diagnostics.append(LocalizationDiagnostic(
                .warning, "\(list) \(dropped.count == 1 ? "starts" : "start") no conversion: the device drops the % and shows the rest; write %% for a percent sign"))
        }
        if scanned.mixesPositionalAndSequential {
            diagnostics.append(LocalizationDiagnostic(
                .info, "the format mixes %@ and %n$@; a sequential %@ takes the next argument after the previous sequential one"))
        }
        return Result(text: text, diagnostics: diagnostics)
    }
}
