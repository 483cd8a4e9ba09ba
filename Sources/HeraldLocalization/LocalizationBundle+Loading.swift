extension LocalizationBundle {
    /// The tables a push notification can use: `Localizable` for alert text and `InfoPlist`
    /// for the app's display name.
    static let tableNames: Set<String> = ["Localizable", "InfoPlist"]

    /// Folders never searched for resources in a project tree.
    static let skippedDirectories: Set<String> = ["node_modules", "Pods", "Carthage", "DerivedData", "build", ".build"]

    static let maximumSearchDepth = 8

    /// Loads a bundle from `path`:
    /// - a directory: an app bundle or an Xcode project tree, searched (up to eight levels, skipping
    ///   hidden folders, `build`, `DerivedData`, `Pods`, `Carthage` and `node_modules`) for
    ///   `*.lproj` folders with `Localizable.strings`/`.stringsdict`/`InfoPlist.strings`,
    ///   `Localizable.xcstrings`/`InfoPlist.xcstrings` catalogs, and the shallowest `Info.plist`;
    /// - a file: one `.strings`, `.stringsdict` or `.xcstrings` table, used as the `Localizable`
    ///   table whatever its name. A `.strings` or `.stringsdict` file inside `xx.lproj` belongs to
    ///   that localization; otherwise it is used whatever the language.
    ///
    /// Tables that fail to parse are kept, empty, with their error (as on the device).
    ///
    /// - Throws: ``LocalizationFileError`` when the path does not exist, or a directory has no
    ///   localizations, catalogs or `Info.plist` at all.
    public static func load(path: String) throws(LocalizationFileError) -> LocalizationBundle {
        switch FileSystem.kind(of: path) {
        case .directory?:
            return try loadDirectory(path)
        case .file?:
            return try loadTableFile(path)
        case nil:
            throw LocalizationFileError(path: path, location: nil, message: "no such file or directory")
        }
    }

    private static func loadTableFile(_ path: String) throws(LocalizationFileError) -> LocalizationBundle {
        let name = FileSystem.lastComponent(path)
        let bytes = try FileSystem.read(path)
        let folder = FileSystem.lastComponent(FileSystem.parent(path))
        let localization = folder.hasSuffix(".lproj") ? String(folder.dropLast(6)) : nil
        var bundle = LocalizationBundle(tables: [:])
        bundle.path = path
        if name.hasSuffix(".xcstrings") {
            let catalog = try StringCatalog(bytes: bytes, path: path)
            // One catalog given on its own is the table to look keys up in, whatever its name
            // (as a lone .strings file is); only an InfoPlist catalog keeps its role.
            let tableName = name == "InfoPlist.xcstrings" ? "InfoPlist" : "Localizable"
            bundle.addCatalog(catalog, tableName: tableName, path: path)
            bundle.developmentRegion = catalog.sourceLanguage
            bundle.localizations = catalog.languages
            return bundle
        }
        var table = StringsTable(name: "Localizable", entries: [:])
        if name.hasSuffix(".stringsdict") {
            table.addStringsDictionaryFile(bytes: bytes, path: path)
        } else if name.hasSuffix(".strings") || name.hasSuffix(".plist") {
            table.addStringsFile(bytes: bytes, path: path)
        } else {
            throw LocalizationFileError(path: path, location: nil, message: "expected a .strings, .stringsdict or .xcstrings file, or a bundle directory")
        }
        var key = localization ?? "*"
        if localization == "Base" {
            // As in a bundle without a development region: Base.lproj holds English, Xcode's
            // default (its plural rules: 1 is "one"), so the table reads the same either way.
            key = "en"
            bundle.developmentRegion = "en"
            bundle.diagnostics.append(LocalizationDiagnostic(
                .info, "a table in Base.lproj holds the development language's strings: taken as English, Xcode's default"))
        }
        bundle.tables = [key: ["Localizable": table]]
        bundle.localizations = [key]
        bundle.isSingleTable = true
        return bundle
    }

    private static func loadDirectory(_ root: String) throws(LocalizationFileError) -> LocalizationBundle {
        var lprojFolders: [(path: String, depth: Int)] = []
        var catalogs: [String] = []
        var infoPlist: (path: String, depth: Int)?
        var fileNames: Set<String> = []
        var diagnostics: [LocalizationDiagnostic] = []

        func scan(_ directory: String, depth: Int) {
            for entry in FileSystem.list(directory) where !entry.name.hasPrefix(".") {
                let path = FileSystem.join(directory, entry.name)
                switch entry.kind {
                case .directory?:
                    if entry.name.hasSuffix(".lproj") {
                        lprojFolders.append((path, depth))
                        for file in FileSystem.list(path) where file.kind == .file { fileNames.insert(file.name) }
                    } else if !skippedDirectories.contains(entry.name), depth < maximumSearchDepth {
                        scan(path, depth: depth + 1)
                    }
                case .file?:
                    fileNames.insert(entry.name)
                    if entry.name.hasSuffix(".xcstrings"), tableNames.contains(String(entry.name.dropLast(10))) {
                        catalogs.append(path)
                    } else if entry.name == "Info.plist", depth < infoPlist?.depth ?? .max {
                        infoPlist = (path, depth)
                    }
                case nil:
                    break
                }
            }
        }
        scan(root, depth: 0)
        guard !lprojFolders.isEmpty || !catalogs.isEmpty || infoPlist != nil else {
            throw LocalizationFileError(
                path: root, location: nil,
                message: "no localizations found: expected *.lproj folders (such as en.lproj/Localizable.strings), Localizable.xcstrings, or Info.plist")
        }

        var bundle = LocalizationBundle(tables: [:], fileNames: fileNames)
        bundle.path = root
        if let infoPlist {
            do {
                let bytes = try FileSystem.read(infoPlist.path)
                let result = try PropertyListReader.read(bytes, path: infoPlist.path)
                if case .dictionary(let dictionary) = result.value {
                    bundle.info = dictionary
                } else {
                    diagnostics.append(LocalizationDiagnostic(.warning, "Info.plist holds \(result.value.kindDescription), not a dictionary; ignored", path: infoPlist.path))
                }
            } catch {
                diagnostics.append(LocalizationDiagnostic(error, severity: .warning))
            }
        }
        if case .string(let region)? = bundle.info?["CFBundleDevelopmentRegion"], !region.contains("$(") {
            bundle.developmentRegion = region
        }

        // Shallower folders first, so an app's own resources win over nested ones.
        var seen: [String: String] = [:]
        var hasBase = false
        for folder in lprojFolders.sorted(by: { ($0.depth, $0.path) < ($1.depth, $1.path) }) {
            let localization = String(FileSystem.lastComponent(folder.path).dropLast(6))
            if let earlier = seen[localization] {
                // Several targets' resources (an app and its extensions): say whose are used.
                diagnostics.append(LocalizationDiagnostic(
                    .warning, "\(folder.path) is ignored: \(earlier) already provides \(localization) (the shallowest folder wins); give one target's folder with --bundle to choose"))
                continue
            }
            seen[localization] = folder.path
            var tables: [String: StringsTable] = [:]
            for file in FileSystem.list(folder.path) where file.kind == .file {
                let isDictionary = file.name.hasSuffix(".stringsdict")
                guard isDictionary || file.name.hasSuffix(".strings") else { continue }
                let tableName = String(file.name.dropLast(isDictionary ? 12 : 8))
                guard tableNames.contains(tableName) else { continue }
                let path = FileSystem.join(folder.path, file.name)
                var table = tables[tableName] ?? StringsTable(name: tableName, entries: [:])
                do {
                    let bytes = try FileSystem.read(path)
                    if isDictionary { table.addStringsDictionaryFile(bytes: bytes, path: path) } else { table.addStringsFile(bytes: bytes, path: path) }
                } catch {
                    table.sources.append(StringsTable.Source(path: path, format: "unreadable", error: error))
                    table.diagnostics.append(LocalizationDiagnostic(error))
                }
                tables[tableName] = table
            }
            if localization == "Base" {
                hasBase = true
                bundle.baseTables = tables
            } else {
                bundle.tables[localization] = tables
            }
        }

        var catalogFolders: [String: String] = [:]
        for path in catalogs.sorted(by: { ($0.split(separator: "/").count, $0) < ($1.split(separator: "/").count, $1) }) {
            let name = FileSystem.lastComponent(path)
            if let earlier = catalogFolders[name] {
                diagnostics.append(LocalizationDiagnostic(
                    .warning, "\(path) is ignored: \(earlier) is also a \(name) (the shallowest wins); give one target's folder with --bundle to choose"))
                continue
            }
            catalogFolders[name] = path
            do {
                let catalog = try StringCatalog(bytes: try FileSystem.read(path), path: path)
                bundle.addCatalog(catalog, tableName: String(FileSystem.lastComponent(path).dropLast(10)), path: path)
                if bundle.developmentRegion == nil { bundle.developmentRegion = catalog.sourceLanguage }
            } catch {
                diagnostics.append(LocalizationDiagnostic(error))
            }
        }

        if hasBase, bundle.developmentRegion == nil {
            // Xcode makes new projects with English as the development region: Base.lproj then
            // holds English (its plural rules: 1 is "one").
            bundle.developmentRegion = "en"
            diagnostics.append(LocalizationDiagnostic(
                .info, "no development region is given (CFBundleDevelopmentRegion in Info.plist, or a catalog's sourceLanguage): Base.lproj is taken as English, Xcode's default"))
        }
        var localizations = Array(bundle.tables.keys)
        if case .array(let declared)? = bundle.info?["CFBundleLocalizations"] {
            for case .string(let name) in declared where !localizations.contains(name) { localizations.append(name) }
        }
        // Base holds the development language's resources (CoreFoundation's bundle localization lookup).
        if hasBase, let region = bundle.developmentRegion,
           !localizations.contains(where: { LanguageTag($0) == LanguageTag(region) }) {
            localizations.append(region)
        }
        bundle.localizations = localizations.sorted()
        bundle.diagnostics = diagnostics
        return bundle
    }

    private mutating func addCatalog(_ catalog: StringCatalog, tableName: String, path: String) {
        diagnostics += catalog.diagnostics
        for (language, entries) in catalog.tables {
            var table = tables[language]?[tableName] ?? StringsTable(name: tableName, entries: [:])
            table.addCatalogEntries(entries, path: path)
            tables[language, default: [:]][tableName] = table
        }
    }
}
