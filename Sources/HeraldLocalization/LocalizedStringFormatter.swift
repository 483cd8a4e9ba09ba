import HeraldPayload

/// Formats a localized format string with `loc-args`, the way the device fills in a
/// notification (reference §8.2).
///
/// - `%@` takes the next argument, `%n$@` the n-th (1-based), `%%` is a percent sign; the two
///   forms can be mixed, and a sequential `%@` counts only the sequential specifiers before it.
/// - `loc-args` are strings, and iOS hands them to the format as objects. A specifier that
///   expects a C value (`%d`, `%ld`, `%s`, `%f`, …) therefore does not print the argument's text
///   (a NativeScript report: "the localized arguments fail to display"). Herald prints nothing
///   for it and reports an error, so the preview shows the gap the user would see.
/// - A specifier without an argument prints nothing (reference §8.2 recommends an empty string;
///   one report saw `<null>`), and is reported as an error; arguments that no specifier uses are
///   reported as a warning. With ``Options/marksProblems`` the gaps are shown as `⟨…⟩` markers.
/// - Text that is not a valid specifier (`%y`, a trailing `%`) is shown as written.
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

    /// Creates a formatter.
    public init(options: Options = Options()) {
        self.options = options
    }

    /// Formats `format` with `arguments`.
    ///
    /// - Parameter selectorArguments: arguments already used to choose a plural form, which
    ///   are not reported as unused when the chosen form does not print them.
    public func format(_ format: String, arguments: [String], selectorArguments: Set<Int> = []) -> Result {
        let scanned = LocalizedFormat(format)
        var text = ""
        var diagnostics: [LocalizationDiagnostic] = []
        var used = arguments.indices.map { selectorArguments.contains($0) }
        var reportedMissing: Set<Int> = []
        for segment in scanned.segments {
            switch segment {
            case .literal(let literal):
                text += literal
            case .percent:
                text += "%"
            case .invalid(let written):
                text += written
            case .variable(let name, let index, _):
                // A `%#@name@` left after variables were resolved has no definition.
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
                    text += Self.apply(modifiers: specifier.modifiers, to: arguments[index])
                } else {
                    diagnostics.append(LocalizationDiagnostic(
                        .error, "\(specifier.text) expects a C value, but loc-args are strings: the device does not show argument \(index + 1) (\"\(arguments[index])\") there; use %@ or %\(index + 1)$@"))
                    if options.marksProblems { text += "⟨\(specifier.text): \(arguments[index])⟩" }
                }
            }
        }
        let unused = used.indices.filter { !used[$0] }
        if !unused.isEmpty {
            let list = unused.map { "\($0 + 1) (\"\(arguments[$0])\")" }.joined(separator: ", ")
            diagnostics.append(LocalizationDiagnostic(
                .warning, "\(unused.count == 1 ? "argument" : "arguments") \(list) \(unused.count == 1 ? "is" : "are") not used by the format \"\(format)\""))
        }
        if scanned.mixesPositionalAndSequential {
            diagnostics.append(LocalizationDiagnostic(
                .note, "the format mixes %@ and %n$@; a sequential %@ takes the next argument after the previous sequential one"))
        }
        return Result(text: text, diagnostics: diagnostics)
    }

    /// `%@` honours a width and `-` (left-justify) and a precision (maximum length), as
    /// `NSString` does for objects.
    static func apply(modifiers: String, to argument: String) -> String {
        guard !modifiers.isEmpty else { return argument }
        var leftJustify = false
        var width = 0
        var precision: Int?
        var readingPrecision = false
        for character in modifiers {
            if character == "-" { leftJustify = true; continue }
            if character == "." { readingPrecision = true; precision = 0; continue }
            guard let digit = character.wholeNumberValue, character.isASCII else { continue }
            if readingPrecision {
                precision = min((precision ?? 0) * 10 + digit, 1 << 20)
            } else {
                width = min(width * 10 + digit, 1 << 12)
            }
        }
        var value = argument
        if let precision, value.count > precision { value = String(value.prefix(precision)) }
        let padding = max(0, width - value.count)
        guard padding > 0 else { return value }
        let spaces = String(repeating: " ", count: padding)
        return leftJustify ? value + spaces : spaces + value
    }
}
