import HeraldJSON

/// XML property lists (`<?xml …?><plist version="1.0">…</plist>`), as `.stringsdict` files,
/// `Info.plist` and XML-compiled `.strings` tables use them.
///
/// The reader handles the prolog (XML declaration, comments, `DOCTYPE`), entity and character
/// references, CDATA sections and comments inside text, and every plist element. It works on
/// the decoded UTF-16 text so positions match the old-style reader's.
struct XMLPropertyListParser {
    private let text: DecodedText
    private let units: [UInt16]
    private let path: String
    private var index = 0
    private var depth = 0

    init(text: DecodedText, path: String) {
        self.text = text
        self.units = text.units
        self.path = path
    }

    /// Whether decoded text starts like an XML property list (after whitespace).
    static func looksLikeXML(_ units: [UInt16]) -> Bool {
        var index = 0
        while index < units.count, OldStylePropertyListParser.isWhitespaceUnit(units[index]) { index += 1 }
        let rest = units[index...].prefix(9)
        for prefix in ["<?xml", "<!DOCTYPE", "<plist", "<!--"] where rest.starts(with: prefix.utf16) {
            return true
        }
        return false
    }

    /// Parses the document's single top-level value.
    mutating func parse() throws(LocalizationFileError) -> PropertyListValue {
        skipMisc()
        guard index < units.count, units[index] == UInt16(ascii: "<") else {
            throw error(at: index, "expected '<plist>' or a property-list element")
        }
        let start = index
        let tag = try readStartTag()
        let value: PropertyListValue
        if tag.name == "plist" {
            guard !tag.selfClosing else { throw error(at: start, "the <plist> element is empty; expected one value inside it") }
            skipMisc()
            value = try parseElement()
            skipMisc()
            try expectEndTag("plist", openedAt: start)
        } else {
            value = try parseElement(startingWith: tag, at: start)
        }
        skipMisc()
        if index < units.count {
            throw error(at: index, "unexpected content after the end of the property list")
        }
        return value
    }

    // MARK: Elements

    private struct StartTag {
        var name: String
        var selfClosing: Bool
    }

    private mutating func parseElement() throws(LocalizationFileError) -> PropertyListValue {
        guard index < units.count, units[index] == UInt16(ascii: "<") else {
            throw error(at: index, index < units.count ? "expected an element such as <string>, <dict> or <array>, found text" : "expected a value, found the end of the file")
        }
        let start = index
        if starts(with: "</") {
            throw error(at: index, "expected a value, found a closing tag")
        }
        let tag = try readStartTag()
        return try parseElement(startingWith: tag, at: start)
    }

    private mutating func parseElement(startingWith tag: StartTag, at start: Int) throws(LocalizationFileError) -> PropertyListValue {
        switch tag.name {
        case "dict":
            if tag.selfClosing { return .dictionary(PropertyListDictionary()) }
            try enter(at: start)
            defer { depth -= 1 }
            var dictionary = PropertyListDictionary()
            while try hasChild(of: "dict", openedAt: start) {
                let keyStart = index
                let keyTag = try readStartTag()
                guard keyTag.name == "key" else {
                    throw error(at: keyStart, "expected <key> in <dict>, found <\(keyTag.name)>")
                }
                let key = keyTag.selfClosing ? "" : try readText(closing: "key", openedAt: keyStart)
                skipMisc()
                guard index < units.count, !starts(with: "</") else {
                    throw error(at: index, "the key \"\(key)\" has no value")
                }
                dictionary.set(try parseElement(), forKey: key)
            }
            return .dictionary(dictionary)
        case "array":
            if tag.selfClosing { return .array([]) }
            try enter(at: start)
            defer { depth -= 1 }
            var elements: [PropertyListValue] = []
            while try hasChild(of: "array", openedAt: start) {
                elements.append(try parseElement())
            }
            return .array(elements)
        case "string":
            return .string(tag.selfClosing ? "" : try readText(closing: "string", openedAt: start))
        case "key":
            throw error(at: start, "<key> is only allowed directly inside <dict>")
        case "true", "false":
            if !tag.selfClosing {
                let content = try readText(closing: tag.name, openedAt: start)
                guard content.allSatisfy(\.isWhitespace) else {
                    throw error(at: start, "<\(tag.name)> must be empty, as in <\(tag.name)/>")
                }
            }
            return .boolean(tag.name == "true")
        case "integer":
            let content = tag.selfClosing ? "" : try readText(closing: "integer", openedAt: start)
            guard let value = Self.parseInteger(content.trimmingWhitespace()) else {
                throw error(at: start, "<integer> must hold a decimal or 0x hexadecimal integer, found \"\(content)\"")
            }
            return .integer(value)
        case "real":
            let content = (tag.selfClosing ? "" : try readText(closing: "real", openedAt: start)).trimmingWhitespace()
            let lowered = content.lowercased()
            let value: Double? = switch lowered {
            case "nan": .nan
            case "inf", "+inf", "infinity", "+infinity": .infinity
            case "-inf", "-infinity": -.infinity
            default: Double(content)
            }
            guard let value else {
                throw error(at: start, "<real> must hold a number, found \"\(content)\"")
            }
            return .real(value)
        case "date":
            let content = (tag.selfClosing ? "" : try readText(closing: "date", openedAt: start)).trimmingWhitespace()
            guard let seconds = Self.parseDate(content) else {
                throw error(at: start, "<date> must be an ISO 8601 UTC date like 2026-11-21T09:30:00Z, found \"\(content)\"")
            }
            return .date(seconds)
        case "data":
            let content = tag.selfClosing ? "" : try readText(closing: "data", openedAt: start)
            guard let bytes = Base64.decode(content) else {
                throw error(at: start, "<data> must hold base64 text")
            }
            return .data(bytes)
        default:
            throw error(at: start, "unknown element <\(tag.name)>; expected dict, array, string, integer, real, true, false, date or data")
        }
    }

    /// Steps over what may stand between a container's children: true before the next child,
    /// false once the container's end tag is read.
    private mutating func hasChild(of name: String, openedAt start: Int) throws(LocalizationFileError) -> Bool {
        skipMisc()
        if starts(with: "</") {
            try expectEndTag(name, openedAt: start)
            return false
        }
        guard index < units.count else {
            throw error(at: index, "missing </\(name)> for the <\(name)> opened at \(position(of: start))")
        }
        return true
    }

    private mutating func enter(at position: Int) throws(LocalizationFileError) {
        depth += 1
        if depth > OldStylePropertyListParser.maximumDepth {
            throw error(at: position, "elements are nested more than \(OldStylePropertyListParser.maximumDepth) deep")
        }
    }

    // MARK: Tags and text

    /// Reads `<name attributes…>` or `<name …/>` at `index`.
    private mutating func readStartTag() throws(LocalizationFileError) -> StartTag {
        let start = index
        index += 1  // '<'
        let nameStart = index
        while index < units.count, Self.isNameUnit(units[index]) { index += 1 }
        guard index > nameStart else {
            throw error(at: start, "expected an element name after '<'")
        }
        let name = String(decoding: units[nameStart..<index], as: UTF16.self)
        var quote: UInt16?
        while index < units.count {
            let unit = units[index]
            if let open = quote {
                if unit == open { quote = nil }
            } else if unit == UInt16(ascii: "\"") || unit == UInt16(ascii: "'") {
                quote = unit
            } else if unit == UInt16(ascii: ">") {
                index += 1
                return StartTag(name: name, selfClosing: false)
            } else if unit == UInt16(ascii: "/"), index + 1 < units.count, units[index + 1] == UInt16(ascii: ">") {
                index += 2
                return StartTag(name: name, selfClosing: true)
            } else if unit == UInt16(ascii: "<") {
                break
            }
            index += 1
        }
        throw error(at: start, "the tag <\(name) is not closed with '>'")
    }

    private mutating func expectEndTag(_ name: String, openedAt open: Int) throws(LocalizationFileError) {
        let start = index
        guard starts(with: "</") else {
            throw error(at: index, "missing </\(name)> for the <\(name)> opened at \(position(of: open))")
        }
        index += 2
        let nameStart = index
        while index < units.count, Self.isNameUnit(units[index]) { index += 1 }
        let found = String(decoding: units[nameStart..<index], as: UTF16.self)
        while index < units.count, OldStylePropertyListParser.isWhitespaceUnit(units[index]) { index += 1 }
        guard found == name, index < units.count, units[index] == UInt16(ascii: ">") else {
            throw error(at: start, "expected </\(name)> to close the <\(name)> opened at \(position(of: open)), found </\(found)>")
        }
        index += 1
    }

    /// Character data up to `</name>`, with references resolved, CDATA copied and comments
    /// dropped.
    private mutating func readText(closing name: String, openedAt open: Int) throws(LocalizationFileError) -> String {
        var result: [UInt16] = []
        while index < units.count {
            let unit = units[index]
            if unit == UInt16(ascii: "&") {
                result.append(contentsOf: try readReference())
            } else if unit == UInt16(ascii: "<") {
                if starts(with: "<![CDATA[") {
                    let cdataStart = index
                    index += 9
                    guard let end = find("]]>") else {
                        throw error(at: cdataStart, "unterminated CDATA section")
                    }
                    result.append(contentsOf: units[index..<end])
                    index = end + 3
                } else if starts(with: "<!--") {
                    let commentStart = index
                    guard let end = find("-->") else { throw error(at: commentStart, "unterminated comment") }
                    index = end + 3
                } else if starts(with: "</") {
                    try expectEndTag(name, openedAt: open)
                    var replaced = false
                    return String(utf16Units: result, replacedLoneSurrogate: &replaced)
                } else {
                    throw error(at: index, "unexpected element inside <\(name)>; escape '<' as &lt;")
                }
            } else {
                result.append(unit)
                index += 1
            }
        }
        throw error(at: index, "missing </\(name)> for the <\(name)> opened at \(position(of: open))")
    }

    private mutating func readReference() throws(LocalizationFileError) -> [UInt16] {
        let start = index
        index += 1
        let nameStart = index
        while index < units.count, units[index] != UInt16(ascii: ";"), index - nameStart < 12 { index += 1 }
        guard index < units.count, units[index] == UInt16(ascii: ";") else {
            throw error(at: start, "'&' must start a reference such as &amp; or &#233;")
        }
        let name = String(decoding: units[nameStart..<index], as: UTF16.self)
        index += 1
        switch name {
        case "lt": return [UInt16(ascii: "<")]
        case "gt": return [UInt16(ascii: ">")]
        case "amp": return [UInt16(ascii: "&")]
        case "quot": return [UInt16(ascii: "\"")]
        case "apos": return [UInt16(ascii: "'")]
        default:
            var value: UInt32?
            if name.hasPrefix("#x") || name.hasPrefix("#X") {
                value = UInt32(name.dropFirst(2), radix: 16)
            } else if name.hasPrefix("#") {
                value = UInt32(name.dropFirst(), radix: 10)
            }
            guard let value, let scalar = Unicode.Scalar(value), value != 0 else {
                throw error(at: start, "unknown reference &\(name); (XML defines &lt; &gt; &amp; &quot; &apos; and &#N;)")
            }
            return Array(String(scalar).utf16)
        }
    }

    /// Skips whitespace, the XML declaration and processing instructions, comments and DOCTYPE.
    private mutating func skipMisc() {
        while index < units.count {
            if OldStylePropertyListParser.isWhitespaceUnit(units[index]) {
                index += 1
            } else if starts(with: "<?") {
                index = (find("?>").map { $0 + 2 }) ?? units.count
            } else if starts(with: "<!--") {
                index = (find("-->").map { $0 + 3 }) ?? units.count
            } else if starts(with: "<!") {
                // DOCTYPE, possibly with an internal subset in brackets.
                var bracketDepth = 0
                index += 2
                while index < units.count {
                    let unit = units[index]
                    index += 1
                    if unit == UInt16(ascii: "[") { bracketDepth += 1 }
                    if unit == UInt16(ascii: "]") { bracketDepth -= 1 }
                    if unit == UInt16(ascii: ">"), bracketDepth <= 0 { break }
                }
            } else {
                return
            }
        }
    }

    private func starts(with prefix: String) -> Bool {
        units[index...].starts(with: prefix.utf16)
    }

    private func find(_ needle: String) -> Int? {
        let pattern = Array(needle.utf16)
        var position = index
        while position + pattern.count <= units.count {
            if units[position] == pattern[0], units[position..<(position + pattern.count)].elementsEqual(pattern) { return position }
            position += 1
        }
        return nil
    }

    private static func isNameUnit(_ unit: UInt16) -> Bool {
        OldStylePropertyListParser.isUnquotedUnit(unit) && unit != UInt16(ascii: "/") && unit != UInt16(ascii: "$")
    }

    // MARK: Scalars

    static func parseInteger(_ text: String) -> Int64? {
        var body = Substring(text)
        var negative = false
        if body.first == "-" { negative = true; body = body.dropFirst() } else if body.first == "+" { body = body.dropFirst() }
        let magnitude: UInt64?
        if body.hasPrefix("0x") || body.hasPrefix("0X") {
            magnitude = UInt64(body.dropFirst(2), radix: 16)
        } else {
            magnitude = UInt64(body, radix: 10)
        }
        guard let magnitude else { return nil }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        return Int64(exactly: magnitude) ?? Int64(bitPattern: magnitude)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` as seconds since 2001-01-01 (the reference date).
    static func parseDate(_ text: String) -> Double? {
        let scalars = Array(text.utf8)
        guard scalars.count == 20, scalars[4] == UInt8(ascii: "-"), scalars[7] == UInt8(ascii: "-"), scalars[10] == UInt8(ascii: "T"),
              scalars[13] == UInt8(ascii: ":"), scalars[16] == UInt8(ascii: ":"), scalars[19] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = scalars[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        let days = CivilDate.daysSinceUnixEpoch(year: year, month: month, day: day)
        let unix = Double(days * 86_400 + hour * 3600 + minute * 60 + second)
        return unix - CivilDate.referenceDateUnixSeconds
    }

    private func error(at unitIndex: Int, _ message: String) -> LocalizationFileError {
        LocalizationFileError(path: path, location: text.location(ofUnit: unitIndex), message: message)
    }

    private func position(of unitIndex: Int) -> String {
        let location = text.location(ofUnit: unitIndex)
        return "\(location.line):\(location.column)"
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(scalars[first...last])
    }
}

/// Calendar arithmetic for UTC dates (proleptic Gregorian), without Foundation.
public enum CivilDate {
    /// Seconds from 1970-01-01 to Apple's reference date 2001-01-01.
    public static let referenceDateUnixSeconds: Double = 978_307_200

    /// Days from 1970-01-01 to the given date (Howard Hinnant's `days_from_civil`).
    public static func daysSinceUnixEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day count from 1970-01-01 (`civil_from_days`).
    public static func civil(fromDaysSinceUnixEpoch days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` for Unix seconds (fractions dropped); `nil` outside years 0–9999.
    public static func iso8601(unixSeconds: Double) -> String? {
        guard unixSeconds.isFinite, abs(unixSeconds) < 253_402_300_800 else { return nil }
        let whole = Int(unixSeconds.rounded(.down))
        let days = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
        let secondsOfDay = whole - days * 86_400
        let (year, month, day) = civil(fromDaysSinceUnixEpoch: days)
        guard (0...9999).contains(year) else { return nil }
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondsOfDay / 3600, 2)):\(pad(secondsOfDay % 3600 / 60, 2)):\(pad(secondsOfDay % 60, 2))Z"
    }
}

/// Base64 as `<data>` elements hold it (whitespace ignored, padding optional).
enum Base64 {
    static func decode(_ text: String) -> [UInt8]? {
        var result: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        var padding = 0
        for byte in text.utf8 {
            let value: UInt32
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(byte - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(byte - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="): padding += 1; continue
            case 0x09, 0x0A, 0x0D, 0x20: continue
            default: return nil
            }
            guard padding == 0 else { return nil }
            buffer = buffer << 6 | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                result.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return padding <= 2 ? result : nil
    }
}
