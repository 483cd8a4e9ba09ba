import HeraldPayload

/// What a strings table maps a key to: plain text from a `.strings` file, or a value that
/// varies by plural category, device or width, from a `.stringsdict` file or a String Catalog.
public indirect enum LocalizedValue: Sendable, Hashable {
    /// A format string.
    case text(String)
    /// Forms chosen by the plural category of one argument.
    case plural(PluralVariation)
    /// Forms chosen by device family (``deviceFamilies``, and `other` for the rest).
    case device([String: LocalizedValue])
    /// Forms chosen by display width (`NSStringVariableWidthRuleType`); a notification uses
    /// the widest.
    case width([Int: LocalizedValue])
    /// A format containing `%#@name@` variables, each replaced by its own resolved value
    /// (`NSStringLocalizedFormatKey`, or a catalog's `substitutions`).
    case substitution(format: LocalizedValue, variables: [String: LocalizedValue])

    /// The forms of a plural variation.
    public struct PluralVariation: Sendable, Hashable {
        /// The 0-based argument whose value picks the form; `nil` means the argument of the
        /// `%#@name@` that refers to it, or for a catalog's top-level plural, the first numeric
        /// specifier of the `other` form.
        public var argumentIndex: Int?
        /// `NSStringFormatValueTypeKey` or a catalog's `formatSpecifier` (`d`, `lld`, …).
        public var valueType: String?
        /// The forms by category.
        public var forms: [PluralCategory: LocalizedValue]

        /// Creates a plural variation.
        public init(argumentIndex: Int? = nil, valueType: String? = nil, forms: [PluralCategory: LocalizedValue]) {
            self.argumentIndex = argumentIndex
            self.valueType = valueType
            self.forms = forms
        }
    }

    /// The device family a ``device(_:)`` variation picks when resolving.
    public static let defaultDevice = "iphone"

    /// Xcode's device variation keys, as written in catalogs and `.stringsdict` files.
    public static let deviceFamilies = ["iphone", "ipad", "ipod", "mac", "applewatch", "appletv", "applevision"]

    /// The variation every device without its own uses.
    public static let otherDevice = "other"

    /// The result of resolving a value for one set of arguments.
    public struct Resolution: Sendable, Hashable {
        /// The format string to fill in. Where `%#@name@` variables were replaced, every
        /// specifier is written with its position (`%2$@`), as Foundation binds them.
        public var format: String
        /// Arguments that chose a plural form, so count as used even if no form prints them.
        public var selectorArguments: Set<Int>
        /// Notes about the choices made.
        public var diagnostics: [LocalizationDiagnostic]
    }

    /// Resolves the variations into one format string for `arguments` in `language`.
    ///
    /// A `%#@name@` variable takes one argument, like any specifier: the specifiers after it
    /// keep their own arguments whatever form is chosen (so a `zero` form without `%d` does not
    /// shift `%@` onto the count), and a sequential specifier inside a form refers to the
    /// variable's argument.
    ///
    /// - Parameters:
    ///   - arguments: the `loc-args`, which decide plural forms.
    ///   - language: the localization whose plural rules apply.
    ///   - device: the device family for device variations.
    public func resolve(arguments: [String], language: String, device: String = defaultDevice) -> Resolution {
        var resolver = Resolver(arguments: arguments, language: language, device: device)
        let format = resolver.resolve(self, argumentIndex: nil, depth: 0)
        return Resolution(format: format, selectorArguments: resolver.selectors, diagnostics: resolver.diagnostics)
    }

    /// How deeply variations and variables may nest.
    static let maximumDepth = 16
    /// How many `%#@name@` variables one resolution may expand. Real tables expand a handful;
    /// the bound keeps a table whose forms repeat a variable many times from expanding
    /// exponentially (three uses per form, sixteen deep, is 43 million expansions).
    static let maximumExpansions = 64
    /// The longest format one resolution may produce, in UTF-8 bytes: far beyond any
    /// notification, which APNs limits to 4 KB of payload and the device truncates further.
    static let maximumFormatBytes = 16 * 1024
    /// The most text one resolution may scan for specifiers: forms are rescanned as they are
    /// bound into the text around them, so deep nesting rereads the same bytes.
    static let maximumScannedBytes = 64 * 1024

    private struct Resolver {
        let arguments: [String]
        let language: String
        let device: String
        var selectors: Set<Int> = []
        var diagnostics: [LocalizationDiagnostic] = []
        /// The variables being expanded, outermost first: a variable whose form uses itself
        /// would never finish.
        var expanding: [String] = []
        var expansions = 0
        var producedBytes = 0
        var scannedBytes = 0
        /// Set once a bound is hit: everything after it resolves to nothing.
        var exhausted = false

        init(arguments: [String], language: String, device: String) {
            self.arguments = arguments
            self.language = language
            self.device = device
        }

        mutating func resolve(_ value: LocalizedValue, argumentIndex contextIndex: Int?, depth: Int) -> String {
            guard !exhausted else { return "" }
            guard depth < LocalizedValue.maximumDepth else {
                diagnostics.append(LocalizationDiagnostic(.error, "variations are nested more than \(LocalizedValue.maximumDepth) deep; the device shows nothing for them"))
                return ""
            }
            switch value {
            case .text(let text):
                return produce(text)
            case .plural(let variation):
                let index = variation.argumentIndex ?? contextIndex ?? variation.firstNumericArgument ?? 0
                let category = category(forArgument: index, hasZeroForm: variation.forms[.zero] != nil)
                guard let form = variation.forms[category] ?? variation.forms[.other] ?? variation.forms.min(by: { $0.key < $1.key })?.value else {
                    diagnostics.append(LocalizationDiagnostic(.error, "a plural variation has no forms; the device shows nothing"))
                    return ""
                }
                if variation.forms[category] == nil {
                    diagnostics.append(LocalizationDiagnostic(.warning, "no '\(category.rawValue)' plural form for \(language); the device falls back to 'other'"))
                }
                return resolve(form, argumentIndex: index, depth: depth + 1)
            case .device(let forms):
                guard let form = forms[device] ?? forms[LocalizedValue.otherDevice] else {
                    let available = forms.keys.sorted().joined(separator: ", ")
                    diagnostics.append(LocalizationDiagnostic(.warning, "no '\(device)' variation and no 'other' (the fallback Xcode requires) among \(available.isEmpty ? "no variations" : available); the device shows nothing"))
                    return ""
                }
                return resolve(form, argumentIndex: contextIndex, depth: depth + 1)
            case .width(let forms):
                guard let form = forms.max(by: { $0.key < $1.key })?.value else { return "" }
                return resolve(form, argumentIndex: contextIndex, depth: depth + 1)
            case .substitution(let formatValue, let variables):
                let format = resolve(formatValue, argumentIndex: contextIndex, depth: depth + 1)
                return bind(format, sequentialBase: 0, variables: variables, depth: depth + 1)
            }
        }

        /// Rewrites `text` with every specifier positional, sequential ones counted from
        /// `sequentialBase`, and each `%#@name@` replaced by its variable's form, bound to the
        /// variable's argument.
        mutating func bind(_ text: String, sequentialBase: Int, variables: [String: LocalizedValue], depth: Int) -> String {
            guard !exhausted else { return "" }
            guard depth < LocalizedValue.maximumDepth else {
                diagnostics.append(LocalizationDiagnostic(.error, "variables are nested more than \(LocalizedValue.maximumDepth) deep; the device shows nothing for them"))
                return ""
            }
            scannedBytes += text.utf8.count
            guard scannedBytes <= LocalizedValue.maximumScannedBytes else {
                stop("the variations make Herald scan more than \(LocalizedValue.maximumScannedBytes / 1024) KB of text")
                return ""
            }
            var result = ""
            for segment in LocalizedFormat(text).segments {
                switch segment {
                case .argument(let specifier):
                    let index = specifier.explicitPosition ? specifier.argumentIndex : sequentialBase + specifier.argumentIndex
                    result += "%\(index + 1)$\(specifier.modifiers)\(specifier.length)\(specifier.conversion)"
                case .variable(let name, let position, let explicit):
                    let index = explicit ? position : sequentialBase + position
                    guard let variable = variables[name] else {
                        diagnostics.append(LocalizationDiagnostic(.error, "the format uses %#@\(name)@ but defines no variable '\(name)'; the device shows nothing for it"))
                        continue
                    }
                    guard !expanding.contains(name) else {
                        let chain = (expanding.drop(while: { $0 != name }) + [name]).joined(separator: " → ")
                        diagnostics.append(LocalizationDiagnostic(.error, "variable '\(name)' refers to itself (\(chain)), so it never finishes; the device shows nothing for it"))
                        continue
                    }
                    expansions += 1
                    guard expansions <= LocalizedValue.maximumExpansions else {
                        stop("the variables expand more than \(LocalizedValue.maximumExpansions) times")
                        return result
                    }
                    expanding.append(name)
                    let form = resolve(variable, argumentIndex: index, depth: depth + 1)
                    result += bind(form, sequentialBase: index, variables: variables, depth: depth + 1)
                    expanding.removeLast()
                default:
                    result += segment.sourceText
                }
            }
            return result
        }

        /// Counts text into the output budget; past it, the text is dropped and resolution stops.
        mutating func produce(_ text: String) -> String {
            producedBytes += text.utf8.count
            guard producedBytes <= LocalizedValue.maximumFormatBytes else {
                stop("the variations produce more than \(LocalizedValue.maximumFormatBytes / 1024) KB of text")
                return ""
            }
            return text
        }

        /// Ends the resolution with one error: the rest resolves to nothing.
        mutating func stop(_ what: String) {
            guard !exhausted else { return }
            exhausted = true
            diagnostics.append(LocalizationDiagnostic(.error, "\(what); Herald stops there, so the text is cut short"))
        }

        mutating func category(forArgument index: Int, hasZeroForm: Bool) -> PluralCategory {
            guard index < arguments.count else {
                diagnostics.append(LocalizationDiagnostic(.warning, "the plural form depends on argument \(index + 1), which is not given; the form 'other' is used"))
                return .other
            }
            selectors.insert(index)
            guard let operands = PluralOperands(arguments[index]) else {
                diagnostics.append(LocalizationDiagnostic(.warning, "argument \(index + 1) (\"\(arguments[index])\") is not a number, so the plural form 'other' is used"))
                return .other
            }
            // Apple applies a `zero` form to the number 0 even where CLDR has no zero.
            if operands.n == 0, operands.isInteger, hasZeroForm { return .zero }
            return PluralRules.category(for: operands, language: language)
        }
    }
}

extension LocalizedValue.PluralVariation {
    /// For a catalog's top-level plural: the argument of the first non-object specifier in the
    /// `other` form.
    fileprivate var firstNumericArgument: Int? {
        guard case .text(let other)? = forms[.other] ?? forms.values.first else { return nil }
        return LocalizedFormat(other).specifiers.first(where: { !$0.isObject })?.argumentIndex
    }
}

extension LocalizedFormat.Segment {
    /// The segment as it was written.
    var sourceText: String {
        switch self {
        case .literal(let text): text
        case .percent: "%%"
        case .argument(let specifier): specifier.text
        case .variable(let name, let index, let explicit): explicit ? "%\(index + 1)$#@\(name)@" : "%#@\(name)@"
        case .invalid(let text): text
        }
    }
}
