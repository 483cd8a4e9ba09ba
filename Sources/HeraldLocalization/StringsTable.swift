/// One strings table of one localization (such as `fr.lproj/Localizable`): the entries of its
/// `.strings` file, overridden by those of its `.stringsdict` file (`localizedUserNotificationString(forKey:arguments:)` in Apple's Foundation documentation), or the
/// table compiled from a String Catalog.
public struct StringsTable: Sendable {
    /// A file the table was read from.
    public struct Source: Sendable {
        /// The path as found.
        public var path: String
        /// How it was stored (`text (UTF-16LE, BOM)`, `binary`, `XML (UTF-8)`, `String Catalog`).
        public var format: String
        /// Why the file provides no strings, when it failed to parse.
        public var error: LocalizationFileError?
    }

    /// The table name (`Localizable`, `InfoPlist`).
    public var name: String
    /// The entries by key.
    public var entries: [String: LocalizedValue]
    /// The files read, in order.
    public var sources: [Source]
    /// Problems found while reading (duplicate keys, skipped entries, parse errors).
    public var diagnostics: [LocalizationDiagnostic]

    /// A table from entries in memory.
    public init(name: String = "Localizable", entries: [String: LocalizedValue], sources: [Source] = [], diagnostics: [LocalizationDiagnostic] = []) {
        self.name = name
        self.entries = entries
        self.sources = sources
        self.diagnostics = diagnostics
    }

    /// A table of plain strings in memory.
    public init(name: String = "Localizable", strings: [String: String]) {
        self.init(name: name, entries: strings.mapValues { .text($0) })
    }

    /// Whether a file of the table failed to parse (so, like the device, it gave no strings).
    public var hasUnreadableSource: Bool { sources.contains { $0.error != nil } }

    /// The first parse error, if any.
    public var firstError: LocalizationFileError? { sources.lazy.compactMap(\.error).first }

    /// The files, joined for messages.
    public var sourceDescription: String {
        sources.isEmpty ? name : sources.map(\.path).joined(separator: " + ")
    }

    /// Reads a `.strings` file (text, XML or binary). A file that fails to parse contributes no
    /// entries and records its error, as CoreFoundation abandons the whole table.
    public mutating func addStringsFile(bytes: [UInt8], path: String) {
        do {
            let result = try PropertyListReader.read(bytes, path: path)
            diagnostics += result.diagnostics
            guard case .dictionary(let dictionary) = result.value else {
                let error = LocalizationFileError(path: path, location: nil, message: "a .strings table must be a dictionary, not \(result.value.kindDescription)")
                recordFailure(error, path: path, format: result.format.description)
                return
            }
            for (key, value) in dictionary {
                if case .string(let text) = value {
                    entries[key] = .text(text)
                } else {
                    diagnostics.append(LocalizationDiagnostic(.warning, "the value of \"\(key)\" is \(value.kindDescription), not a string; lookups of it return the key", path: path))
                }
            }
            sources.append(Source(path: path, format: result.format.description, error: nil))
        } catch {
            recordFailure(error, path: path, format: "unreadable")
        }
    }

    /// Reads a `.stringsdict` file; its entries replace `.strings` entries with the same key.
    public mutating func addStringsDictionaryFile(bytes: [UInt8], path: String) {
        do {
            let result = try PropertyListReader.read(bytes, path: path)
            diagnostics += result.diagnostics
            let parsed = StringsDictionaryFile.entries(from: result.value, path: path)
            diagnostics += parsed.diagnostics
            entries.merge(parsed.entries) { _, new in new }
            sources.append(Source(path: path, format: result.format.description, error: nil))
        } catch {
            recordFailure(error, path: path, format: "unreadable")
        }
    }

    /// Adds catalog entries for keys this table does not have yet.
    mutating func addCatalogEntries(_ catalogEntries: [String: LocalizedValue], path: String) {
        entries.merge(catalogEntries) { existing, _ in existing }
        sources.append(Source(path: path, format: "String Catalog", error: nil))
    }

    private mutating func recordFailure(_ error: LocalizationFileError, path: String, format: String) {
        sources.append(Source(path: path, format: format, error: error))
        diagnostics.append(LocalizationDiagnostic(error))
    }
}
