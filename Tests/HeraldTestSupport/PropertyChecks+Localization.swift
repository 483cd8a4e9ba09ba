import HeraldDevice
import HeraldJSON
import HeraldLocalization
import HeraldPayload
import HeraldProtocol

extension PropertyChecks {
    /// Positions in a reader's error must lie inside the file.
    static func checkPosition(_ error: LocalizationFileError, size: Int) -> [String] {
        guard let location = error.location else { return [] }
        var violations: [String] = []
        if location.line < 1 || location.column < 1 { violations.append("error position \(location) is not 1-based") }
        if location.offset < 0 || location.offset > size { violations.append("error offset \(location.offset) is outside the \(size)-byte file") }
        return violations
    }

    /// `.strings` (any encoding or format): reading never fails uncleanly, and a table of
    /// strings written back with ``StringsFileWriter`` reads the same in UTF-8 and in UTF-16LE.
    public static func stringsFile(_ bytes: [UInt8]) -> [String] {
        let result: PropertyListReader.Result
        do {
            result = try PropertyListReader.read(bytes, path: "fuzz.strings")
        } catch {
            return checkPosition(error, size: bytes.count)
        }
        guard case .text = result.format, case .dictionary(let dictionary) = result.value else { return [] }
        var strings: [(String, String)] = []
        for (key, value) in dictionary {
            if case .string(let text) = value { strings.append((key, text)) }
        }
        // An empty table writes an empty file, which CoreFoundation (and Herald) reject.
        guard !strings.isEmpty else { return [] }
        let written = StringsFileWriter.write(strings)
        let expected = Dictionary(strings, uniquingKeysWith: { _, last in last })
        var violations: [String] = []
        let utf16: [UInt8] = [0xFF, 0xFE] + written.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        for (name, encoded) in [("UTF-8", Array(written.utf8)), ("UTF-16LE", utf16)] {
            guard !encoded.isEmpty else { continue }
            do {
                let again = try PropertyListReader.read(encoded, path: "written.strings")
                var reread: [String: String] = [:]
                for (key, value) in again.value.dictionaryValue ?? PropertyListDictionary() { reread[key] = value.stringValue }
                if reread != expected { violations.append("the written table reads back differently in \(name)") }
            } catch {
                violations.append("the written table does not parse in \(name): \(error)")
            }
        }
        return violations
    }

    /// Property lists of every format: a clean result or a clean error, and every value
    /// reachable (with a budget, since shared references may describe huge trees).
    public static func propertyList(_ bytes: [UInt8]) -> [String] {
        do {
            let result = try PropertyListReader.read(bytes, path: "fuzz.plist")
            var budget = 100_000
            touch(result.value, budget: &budget)
            // A stringsdict reading of the same value must not fail either.
            var table = StringsTable(entries: [:])
            table.addStringsDictionaryFile(bytes: bytes, path: "fuzz.stringsdict")
            for (_, value) in table.entries.prefix(16) {
                _ = value.resolve(arguments: ["1", "Ada", "0"], language: "ru")
            }
            return []
        } catch {
            return checkPosition(error, size: bytes.count)
        }
    }

    private static func touch(_ value: PropertyListValue, budget: inout Int) {
        budget -= 1
        guard budget > 0 else { return }
        switch value {
        case .array(let elements): for element in elements { touch(element, budget: &budget) }
        case .dictionary(let dictionary): for (_, element) in dictionary { touch(element, budget: &budget) }
        default: break
        }
    }

    /// String Catalogs: compile cleanly or fail with a position, and every compiled entry
    /// resolves and formats for a few argument lists.
    public static func stringCatalog(_ bytes: [UInt8]) -> [String] {
        let catalog: StringCatalog
        do {
            catalog = try StringCatalog(bytes: bytes, path: "fuzz.xcstrings")
        } catch {
            return checkPosition(error, size: bytes.count)
        }
        let formatter = LocalizedStringFormatter()
        for (language, table) in catalog.tables.prefix(8) {
            for (_, value) in table.prefix(32) {
                for arguments in [[], ["1"], ["0", "Ada"], ["2.5", "x", "y"]] {
                    let resolved = value.resolve(arguments: arguments, language: language)
                    _ = formatter.format(resolved.format, arguments: arguments, selectorArguments: resolved.selectorArguments)
                }
            }
        }
        return []
    }

    /// The formatter: input is a format and up to eight arguments separated by NUL bytes.
    /// Formats without `%` come back unchanged; markers change the text only when the device
    /// would show a gap (an error); a `%#@v@` variable binds without failing.
    public static func formatter(_ bytes: [UInt8]) -> [String] {
        let parts = bytes.split(separator: UInt8(0), omittingEmptySubsequences: false).prefix(9).map { String(decoding: $0, as: UTF8.self) }
        guard let format = parts.first else { return [] }
        let arguments = Array(parts.dropFirst())
        var violations: [String] = []
        let plain = LocalizedStringFormatter().format(format, arguments: arguments)
        let marked = LocalizedStringFormatter(options: .init(marksProblems: true)).format(format, arguments: arguments)
        // Bytes, not Characters: "%" followed by a combining mark is one Character.
        if !format.utf8.contains(UInt8(ascii: "%")), plain.text != format { violations.append("a format without % changed") }
        // Foundation drops a `%` that starts no specifier and keeps what follows it.
        if format.utf8.first == UInt8(ascii: "%"), format.unicodeScalars.count == 2,
           let second = format.unicodeScalars.last, second.value >= 0x80, plain.text != String(second) {
            violations.append("'%' before a non-ASCII scalar lost the scalar")
        }
        if !plain.diagnostics.contains(where: { $0.severity == .error }), plain.text != marked.text {
            violations.append("markers changed the text without an error")
        }
        let value = LocalizedValue.substitution(format: .text(format), variables: [
            "v": .plural(.init(forms: [.zero: .text(arguments.first ?? ""), .one: .text("%d one"), .other: .text(arguments.last ?? "%@")])),
        ])
        for language in ["en", "ar", "pl"] {
            let resolved = value.resolve(arguments: arguments, language: language)
            _ = LocalizedStringFormatter().format(resolved.format, arguments: arguments, selectorArguments: resolved.selectorArguments)
        }
        return violations
    }

    /// A small bundle for preview checks: English and French tables with plain, plural and
    /// device entries. Built per call: held in a global, LeakSanitizer cannot follow Swift's
    /// tagged enum payload pointers and reports the tables as leaked.
    static func makePreviewBundle() -> LocalizationBundle {
        let english: [String: LocalizedValue] = [
            "GAME_PLAY_REQUEST_FORMAT": .text("%@ and %@ have invited you to play Monopoly"), "PLAY": .text("Play"),
            "COUNT": .substitution(format: .text("%#@n@ from %@"), variables: ["n": .plural(.init(forms: [.one: .text("%@ message"), .other: .text("%@ messages")]))]),
        ]
        let french: [String: LocalizedValue] = ["GAME_PLAY_REQUEST_FORMAT": .text("%2$@ et %1$@ vous invitent"), "PLAY": .device(["iphone": .text("Jouer"), "other": .text("Jeu")])]
        return LocalizationBundle(
            tables: ["en": ["Localizable": StringsTable(entries: english)], "fr": ["Localizable": StringsTable(entries: french)]],
            developmentRegion: "en", fileNames: ["chime.aiff"])
    }

    /// Preview: any JSON renders (or is refused as not an object) without failing; the HTML
    /// never carries markup from the payload; the JSON output parses; the text view draws; a
    /// device simulation replaces by collapse ID.
    public static func preview(_ bytes: [UInt8]) -> [String] {
        guard let document = try? JSONDocument(parsing: bytes, options: options) else { return [] }
        var violations: [String] = []
        let bundle = makePreviewBundle()
        for languages in [["en"], ["fr-CA", "en"]] {
            let renderer = NotificationRenderer(bundle: bundle, preferredLanguages: languages)
            guard let rendered = try? renderer.render(document: document) else { continue }
            let html = NotificationHTMLRenderer().render(rendered)
            if html.contains("<script") || html.contains("<img") || html.contains("<iframe") { violations.append("payload markup reached the HTML") }
            if (try? JSONDocument(parsing: rendered.jsonValue.compactBytes())) == nil { violations.append("the JSON output does not parse") }
            _ = NotificationTextRenderer(width: 30, usesColor: true).render(rendered)
            if let payload = try? Payload(document: document) {
                var device = SimulatedDevice(renderer: renderer)
                device.receive(.init(payload: payload, headers: APNsRequestHeaders(collapseID: try? CollapseID("c"))), at: 1)
                device.receive(.init(payload: payload, headers: APNsRequestHeaders(collapseID: try? CollapseID("c"))), at: 2)
                if device.notificationCount > 1 { violations.append("two pushes with one collapse ID are both shown") }
            }
        }
        return violations
    }
}
