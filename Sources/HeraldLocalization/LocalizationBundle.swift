/// An app's localized resources as the device sees them: its localizations, their strings
/// tables, the development region, the display name and the files it ships (for sounds).
///
/// Load one from disk with ``load(path:)`` (an app bundle or project directory with `*.lproj`
/// folders or `.xcstrings` catalogs, or a single table file), or build one in memory with
/// ``init(tables:developmentRegion:info:fileNames:)``.
public struct LocalizationBundle: Sendable {
    /// Where the bundle was loaded from (`nil` for one built in memory).
    public internal(set) var path: String?
    /// `CFBundleDevelopmentRegion` from `Info.plist`, or a catalog's `sourceLanguage`.
    public internal(set) var developmentRegion: String?
    /// The localizations the app offers, as named by their folders or catalogs (`en`, `fr-CA`,
    /// `zh-Hant`), without `Base`.
    public internal(set) var localizations: [String]
    /// The `Info.plist` dictionary, if one was found.
    public internal(set) var info: PropertyListDictionary?
    /// Problems found while loading (unreadable files, duplicate localizations).
    public internal(set) var diagnostics: [LocalizationDiagnostic] = []

    /// Tables by localization, then by table name.
    var tables: [String: [String: StringsTable]]
    /// `Base.lproj` tables, used for the development region when its own folder lacks them.
    var baseTables: [String: StringsTable] = [:]
    /// Names of the files the bundle ships, for sound lookups; `nil` when unknown.
    var fileNames: Set<String>?
    /// A single table file applies whatever the language.
    var isSingleTable = false

    /// A bundle built in memory.
    ///
    /// - Parameters:
    ///   - tables: tables by localization, then by table name (`Localizable`).
    ///   - developmentRegion: the app's development region.
    ///   - info: the `Info.plist` dictionary (display name).
    ///   - fileNames: the file names the app ships (for sounds); `nil` when unknown.
    public init(tables: [String: [String: StringsTable]], developmentRegion: String? = nil, info: PropertyListDictionary? = nil, fileNames: Set<String>? = nil) {
        self.tables = tables
        self.developmentRegion = developmentRegion
        self.info = info
        self.fileNames = fileNames
        self.localizations = tables.keys.sorted()
    }

    /// The table `name` of `localization` (`Base.lproj`'s for the development region when the
    /// region's folder lacks it; the only table of a single-file bundle).
    public func table(_ name: String, for localization: String) -> StringsTable? {
        if isSingleTable { return tables.values.first?[name] }
        if let table = tables[localization]?[name] { return table }
        if let developmentRegion, LanguageTag(localization) == LanguageTag(developmentRegion) { return baseTables[name] }
        return nil
    }

    /// Whether the app ships a file with this name; `nil` when the bundle does not know its
    /// files (a single table, or one built without file names).
    public func containsFile(named name: String) -> Bool? {
        fileNames.map { $0.contains(name) }
    }

    /// The name shown on notifications: `CFBundleDisplayName` (localized through
    /// `InfoPlist.strings` when the localization has one), then `CFBundleName`.
    public func displayName(for localization: String?) -> String? {
        for key in ["CFBundleDisplayName", "CFBundleName"] {
            if let localization, case .text(let name)? = table("InfoPlist", for: localization)?.entries[key], !name.isEmpty {
                return name
            }
            if case .string(let name)? = info?[key], !name.isEmpty, !name.contains("$(") { return name }
        }
        return nil
    }

    /// The localizations to search for the user's languages (see ``LanguageMatcher``).
    public func searchOrder(for preferredLanguages: [String]) -> [String] {
        if isSingleTable { return localizations }
        return LanguageMatcher.searchOrder(preferred: preferredLanguages, available: localizations, developmentRegion: developmentRegion)
    }
}
