import Foundation
import HeraldDevice
import HeraldJSON
import HeraldLocalization

/// Issue "Device": reading strings tables against Foundation's `PropertyListSerialization` (on
/// Linux, CoreFoundation's own C parsers), formatting against `String(format:)`, and a whole
/// preview against the Foundation pipeline a script would use.
enum LocalizationBenchmarks {
    /// A realistic table: 500 entries with comments, escapes and format specifiers.
    static let table: String = {
        var text = "/* Localizable.strings, generated for the benchmark */\n\n"
        for index in 0..<500 {
            text += "/* Notification \(index): shown when a friend acts */\n"
            text += "\"NOTIFICATION_\(index)_FORMAT\" = \"%1$@ sent you \\\"\(index)\\\" new items — tap to see them in %2$@ (\(index % 7 == 0 ? "café, 日本語" : "details")).\";\n"
        }
        return text
    }()

    static func run(rounds: Int) -> [Comparison] {
        let utf8 = Array(table.utf8)
        let utf16: [UInt8] = [0xFF, 0xFE] + table.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let dictionary = try! PropertyListSerialization.propertyList(from: Data(utf8), format: nil) as! [String: String]
        let binary = try! PropertyListSerialization.data(fromPropertyList: dictionary, format: .binary, options: 0)
        let binaryBytes = Array(binary)
        let utf8Data = Data(utf8), utf16Data = Data(utf16)

        var results: [Comparison] = []
        results.append(compare(
            "read .strings, 500 entries, UTF-8", bytesPerOperation: utf8.count, baselineName: "PropertyListSerialization",
            rounds: rounds,
            herald: { blackHole(try! PropertyListReader.read(utf8, path: "L.strings")) },
            baseline: { blackHole(try! PropertyListSerialization.propertyList(from: utf8Data, format: nil)) }))
        results.append(compare(
            "read .strings, 500 entries, UTF-16LE", bytesPerOperation: utf16.count, baselineName: "PropertyListSerialization",
            rounds: rounds,
            herald: { blackHole(try! PropertyListReader.read(utf16, path: "L.strings")) },
            baseline: { blackHole(try! PropertyListSerialization.propertyList(from: utf16Data, format: nil)) }))
        results.append(compare(
            "read binary plist, 500 entries", bytesPerOperation: binaryBytes.count, baselineName: "PropertyListSerialization",
            rounds: rounds,
            herald: { blackHole(try! PropertyListReader.read(binaryBytes, path: "L.strings")) },
            baseline: { blackHole(try! PropertyListSerialization.propertyList(from: binary, format: nil)) }))

        let format = "%2$@ and %1$@ have invited you to play Monopoly"
        let arguments = ["Jenna", "Frank"]
        let formatter = LocalizedStringFormatter()
        results.append(compare(
            "format \"%2$@ and %1$@ …\" with loc-args", bytesPerOperation: format.utf8.count, baselineName: "String(format:)",
            rounds: rounds,
            herald: { blackHole(formatter.format(format, arguments: arguments)) },
            baseline: { blackHole(String(format: format, arguments: arguments.map { $0 as NSString })) }))

        // A whole preview: payload bytes → localized body, with the seed payload and table.
        let payload = Array(#"{"aps":{"alert":{"loc-key":"GAME_PLAY_REQUEST_FORMAT","loc-args":["Jenna","Frank"]},"sound":"chime.aiff"},"acme":"foo"}"#.utf8)
        let payloadData = Data(payload)
        let strings = ["GAME_PLAY_REQUEST_FORMAT": format]
        let bundle = LocalizationBundle(tables: ["en": ["Localizable": StringsTable(strings: strings)]], developmentRegion: "en")
        let renderer = NotificationRenderer(bundle: bundle, preferredLanguages: ["en"])
        results.append(compare(
            "preview: seed payload bytes → rendered notification", bytesPerOperation: payload.count,
            baselineName: "JSONSerialization + dictionary + String(format:)", rounds: rounds,
            herald: { blackHole(try! renderer.render(document: JSONDocument(parsing: payload))) },
            baseline: {
                let object = try! JSONSerialization.jsonObject(with: payloadData) as! [String: Any]
                let alert = (object["aps"] as! [String: Any])["alert"] as! [String: Any]
                let key = alert["loc-key"] as! String
                let args = (alert["loc-args"] as! [String]).map { $0 as NSString }
                blackHole(String(format: strings[key] ?? key, arguments: args))
            }))
        return results
    }
}
