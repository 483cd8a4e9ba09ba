/// Writes a `.strings` table as UTF-8 text that CoreFoundation (and ``PropertyListReader``)
/// reads back to the same strings: every key and value quoted, `"` and `\` escaped, control
/// characters written as `\n`, `\t`, … or `\U00XX`.
///
/// ```swift
/// StringsFileWriter.write([("GREETING", "Hello, %@!")])
/// // "\"GREETING\" = \"Hello, %@!\";\n"
/// ```
public enum StringsFileWriter {
    /// The table's text, one `"key" = "value";` line per entry, in the order given.
    public static func write(_ entries: some Sequence<(String, String)>) -> String {
        var text = ""
        for (key, value) in entries {
            text += "\(quote(key)) = \(quote(value));\n"
        }
        return text
    }

    /// A quoted string literal in old-style property-list syntax.
    public static func quote(_ string: String) -> String {
        var result = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case "\u{07}": result += "\\a"
            case "\u{08}": result += "\\b"
            case "\u{0B}": result += "\\v"
            case "\u{0C}": result += "\\f"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    result += "\\U" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}
