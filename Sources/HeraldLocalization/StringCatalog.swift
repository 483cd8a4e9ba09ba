import HeraldJSON

/// A String Catalog (`.xcstrings`, Xcode 15+), compiled the way Xcode compiles it at build time
/// into one table per language (Xcode's String Catalog format): the device never reads the catalog itself.
///
/// - A `stringUnit` becomes a plain entry; every `state` (`translated`, `needs_review`, `new`,
///   `stale`) is compiled, as Xcode does.
/// - `variations` become plural (`zero`…`other`) or device (`iphone`, `ipad`, `mac`, …) forms.
/// - `substitutions` become `%#@name@` variables whose forms write the argument as `%arg`,
///   compiled to `%<argNum>$<formatSpecifier>`. A substitution without `argNum` takes the
///   argument of its place in the format, as Xcode compiles it: in `%#@posts@ von %#@people@`,
///   `posts` reads the first argument and `people` the second.
/// - A key with no entry for the source language gets the key itself there (keys of extracted
///   strings are their source text).
public struct StringCatalog: Sendable {
    /// `sourceLanguage`.
    public var sourceLanguage: String
    /// `version` (`1.0`, `1.1`).
    public var version: String?
    /// The compiled tables by language.
    public var tables: [String: [String: LocalizedValue]]
    /// Entries that could not be compiled.
    public var diagnostics: [LocalizationDiagnostic]

    /// The languages the catalog has values for, source language first.
    public var languages: [String] {
        [sourceLanguage] + tables.keys.filter { $0 != sourceLanguage }.sorted()
    }

    /// Reads and compiles a catalog.
    ///
    /// - Throws: ``LocalizationFileError`` when the file is not JSON or has no `strings` object;
    ///   smaller problems skip the entry and are reported in ``diagnostics``.
    public init(bytes: [UInt8], path: String) throws(LocalizationFileError) {
        var input = bytes
        if input.starts(with: [0xEF, 0xBB, 0xBF]) { input.removeFirst(3) }
        let document: JSONDocument
        do {
            document = try JSONDocument(parsing: input)
        } catch {
            throw LocalizationFileError(path: path, location: error.location, message: error.message)
        }
        let root = document.root
        guard root.kind == .object else {
            throw LocalizationFileError(path: path, location: root.location, message: "a String Catalog is a JSON object with \"sourceLanguage\" and \"strings\"; found \(root.kind)")
        }
        guard let strings = root["strings"], strings.kind == .object else {
            throw LocalizationFileError(path: path, location: root.location, message: "the catalog has no \"strings\" object")
        }
        var compiler = Compiler(path: path)
        sourceLanguage = root["sourceLanguage"]?.stringValue ?? "en"
        version = root["version"]?.stringValue
        if root["sourceLanguage"]?.stringValue == nil {
            compiler.diagnostics.append(LocalizationDiagnostic(.warning, "the catalog has no \"sourceLanguage\"; assuming \"en\"", path: path, location: root.location))
        }
        var tables: [String: [String: LocalizedValue]] = [sourceLanguage: [:]]
        for member in strings.members {
            let key = member.key
            let entry = member.value
            guard entry.kind == .object else {
                compiler.warn("the entry for \"\(key)\" is \(entry.kind), not an object; skipped", at: entry)
                continue
            }
            var hasSource = false
            if let localizations = entry["localizations"] {
                guard localizations.kind == .object else {
                    compiler.warn("\"localizations\" of \"\(key)\" is \(localizations.kind), not an object; skipped", at: localizations)
                    continue
                }
                for localization in localizations.members {
                    if let value = compiler.compile(localization.value, key: key, argument: nil) {
                        tables[localization.key, default: [:]][key] = value
                        if localization.key == sourceLanguage { hasSource = true }
                    }
                }
            }
            if !hasSource {
                tables[sourceLanguage, default: [:]][key] = .text(key)
            }
        }
        self.tables = tables
        // Every warning's line and column from one pass over the text.
        let locations = input.withUnsafeBufferPointer { SourceCursor.locations(ofOffsets: compiler.warnings.map(\.offset), in: $0) }
        self.diagnostics = compiler.diagnostics + zip(compiler.warnings, locations).map { warning, location in
            LocalizationDiagnostic(.warning, warning.message, path: path, location: location)
        }
    }

    private struct Compiler {
        let path: String
        var diagnostics: [LocalizationDiagnostic] = []
        /// Warnings and the offsets they are about, located together at the end.
        var warnings: [(message: String, offset: Int)] = []
        var depth = 0

        mutating func warn(_ message: String, at node: JSONDocument.Node) {
            warnings.append((message, node.byteRange.lowerBound))
        }

        /// `argument` is the substitution being compiled (its `%arg` replacement), if any.
        mutating func compile(_ node: JSONDocument.Node, key: String, argument: (number: Int?, specifier: String)?) -> LocalizedValue? {
            guard node.kind == .object else {
                warn("a localization of \"\(key)\" is \(node.kind), not an object; skipped", at: node)
                return nil
            }
            depth += 1
            defer { depth -= 1 }
            guard depth < 32 else {
                warn("variations of \"\(key)\" are nested too deeply; skipped", at: node)
                return nil
            }
            var base: LocalizedValue?
            if let unit = node["stringUnit"] {
                guard let value = unit["value"]?.stringValue else {
                    warn("the stringUnit of \"\(key)\" has no string \"value\"; skipped", at: unit)
                    return nil
                }
                base = .text(replacingArgument(in: value, argument))
            } else if let variations = node["variations"] {
                if let plural = variations["plural"], plural.kind == .object {
                    var forms: [PluralCategory: LocalizedValue] = [:]
                    for member in plural.members {
                        guard let category = PluralCategory(rawValue: member.key) else {
                            warn("\"\(member.key)\" is not a plural category (zero, one, two, few, many, other); skipped", at: member.keyNode)
                            continue
                        }
                        if let form = compile(member.value, key: key, argument: argument) { forms[category] = form }
                    }
                    if forms[.other] == nil { warn("the plural variation of \"\(key)\" has no 'other' form", at: plural) }
                    base = .plural(.init(argumentIndex: argument?.number.map { $0 - 1 }, valueType: argument?.specifier, forms: forms))
                } else if let device = variations["device"], device.kind == .object {
                    var forms: [String: LocalizedValue] = [:]
                    for member in device.members {
                        if let form = compile(member.value, key: key, argument: argument) { forms[member.key] = form }
                    }
                    base = .device(forms)
                } else {
                    warn("the variations of \"\(key)\" are neither \"plural\" nor \"device\"; skipped", at: variations)
                    return nil
                }
            }
            guard let base else {
                warn("a localization of \"\(key)\" has neither \"stringUnit\" nor \"variations\"; skipped", at: node)
                return nil
            }
            guard let substitutions = node["substitutions"], substitutions.kind == .object else { return base }
            var variables: [String: LocalizedValue] = [:]
            for member in substitutions.members {
                let substitution = member.value
                // Without argNum, the variable's place in the format decides its argument.
                let number = substitution["argNum"]?.int64Value.map(Int.init)
                if let number, !(1...1024).contains(number) {
                    warn("the substitution '\(member.key)' of \"\(key)\" has argNum \(number); it must be 1 or more", at: substitution)
                    continue
                }
                let specifier = substitution["formatSpecifier"]?.stringValue ?? "@"
                if let value = compile(substitution, key: key, argument: (number, specifier)) {
                    variables[member.key] = value
                }
            }
            return .substitution(format: base, variables: variables)
        }

        /// In a substitution's forms `%arg` stands for the argument: `%<argNum>$<specifier>`, or
        /// without argNum `%<specifier>`, which binds to the variable's own argument.
        func replacingArgument(in text: String, _ argument: (number: Int?, specifier: String)?) -> String {
            guard let argument, text.contains("%arg") else { return text }
            let replacement = argument.number.map { "%\($0)$\(argument.specifier)" } ?? "%\(argument.specifier)"
            var result = ""
            var rest = Substring(text)
            while let range = rest.firstRange(of: "%arg") {
                result += rest[..<range.lowerBound]
                result += replacement
                rest = rest[range.upperBound...]
            }
            return result + rest
        }
    }
}
