import HeraldJSON

/// The old-style ("NeXTSTEP") property-list grammar that `.strings` files use, following
/// CoreFoundation's `CFOldStylePList.c` (CoreFoundation's old-style property list parser):
///
/// ```
/// file      := ws* [ '{' dict-body '}' | dict-body ] ws*
/// dict-body := ( string ws* ( '=' ws* value ws* )? ';' )*
/// value     := string | '{' dict-body '}' | '(' array ')' | '<' hex '>'
/// string    := '"' … '"' | "'" … "'" | [A-Za-z0-9_$/:.-]+
/// ws        := U+0009…U+000D | U+0020 | U+2028 | U+2029 | // comment | /* comment */
/// ```
///
/// Parsing works on UTF-16 code units, as CoreFoundation does, so `\U` escapes that form a
/// surrogate pair make one character.
struct OldStylePropertyListParser {
    /// A key that appeared more than once (the last value wins).
    struct Duplicate: Sendable, Hashable {
        var key: String
        var location: SourceLocation
    }

    /// What a successful parse found besides the values.
    struct Result: Sendable {
        var dictionary: PropertyListDictionary
        var duplicates: [Duplicate]
        /// Where a string held half a surrogate pair (shown as U+FFFD).
        var loneSurrogates: [SourceLocation]
        /// Where reading stopped before the end of the file, and what was there.
        var stoppedEarly: (location: SourceLocation, found: String)?
    }

    private let text: DecodedText
    private let units: [UInt16]
    private let path: String
    private var index = 0
    private var depth = 0
    private var duplicates: [Duplicate] = []
    private var loneSurrogates: [SourceLocation] = []
    private var stoppedEarly: (location: SourceLocation, found: String)?
    /// Repeated keys and lone surrogates come in file order: located walking forward.
    private var cursor = UnitCursor()

    static let maximumDepth = 512

    init(text: DecodedText, path: String) {
        self.text = text
        self.units = text.units
        self.path = path
    }

    /// Parses a whole `.strings` file into its dictionary.
    ///
    /// Like CoreFoundation, an unbraced table ends silently at the first character that cannot
    /// start a key (a stray `}`, `~`, a no-break space): the entries before it are the table and
    /// the rest of the file is ignored. ``Result/stoppedEarly`` records where, so the caller can
    /// warn; a file whose very first token is not a key is not a table at all.
    ///
    /// - Throws: ``LocalizationFileError`` at the first syntax error; CoreFoundation abandons the
    ///   whole table there, so no partial result is returned.
    mutating func parseStringsFile() throws(LocalizationFileError) -> Result {
        skipWhitespace()
        let dictionary: PropertyListDictionary
        if index < units.count, units[index] == UInt16(ascii: "{") {
            let open = index
            index += 1
            dictionary = try parseDictionaryBody(closingAt: open)
            skipWhitespace()
            if index < units.count {
                throw error(at: index, "unexpected \(describeUnit(at: index)) after the closing '}' of the table")
            }
        } else {
            if index < units.count, units[index] == UInt16(ascii: "(") || units[index] == UInt16(ascii: "<") {
                throw error(at: index, "a .strings file must be a dictionary of \"key\" = \"value\"; entries, not \(units[index] == UInt16(ascii: "(") ? "an array" : "data")")
            }
            dictionary = try parseDictionaryBody(closingAt: nil)
        }
        return Result(dictionary: dictionary, duplicates: duplicates, loneSurrogates: loneSurrogates, stoppedEarly: stoppedEarly)
    }

    // MARK: Structure

    /// Entries until `}` (when `open` is the position of the `{`) or the end of the file.
    private mutating func parseDictionaryBody(closingAt open: Int?) throws(LocalizationFileError) -> PropertyListDictionary {
        var dictionary = PropertyListDictionary()
        while true {
            skipWhitespace()
            guard index < units.count else {
                if let open {
                    throw error(at: index, "missing '}' to close the dictionary opened at \(position(of: open))")
                }
                return dictionary
            }
            if units[index] == UInt16(ascii: "}"), open != nil {
                index += 1
                return dictionary
            }
            let keyStart = index
            let parsedKey: String?
            do {
                parsedKey = try parseString()
            } catch {
                // An unterminated string where a key should be ends an unbraced table. In braces,
                // CoreFoundation resumes just after the opening quote and accepts a '}' there.
                if open == nil, dictionary.count > 0 {
                    stoppedEarly = (text.location(ofUnit: keyStart), "a string that is never closed")
                    return dictionary
                }
                guard open != nil else { throw error }
                index = keyStart + 1
                skipWhitespace()
                guard index < units.count, units[index] == UInt16(ascii: "}") else { throw error }
                index += 1
                return dictionary
            }
            guard let key = parsedKey else {
                if open == nil, dictionary.count > 0 || !duplicates.isEmpty {
                    // CoreFoundation ends an unbraced table here, keeping what it read.
                    stoppedEarly = (text.location(ofUnit: index), describeUnit(at: index))
                    return dictionary
                }
                throw error(at: index, "expected a key (a quoted string, or letters, digits and _$/:.-), found \(describeUnit(at: index))")
            }
            skipWhitespace()
            let value: PropertyListValue
            if index < units.count, units[index] == UInt16(ascii: ";") {
                // `"KEY";` means the value is the key itself.
                value = .string(key)
            } else if index < units.count, units[index] == UInt16(ascii: "=") {
                index += 1
                skipWhitespace()
                guard index < units.count else {
                    throw error(at: index, "expected a value after '=' for key \"\(key)\", found the end of the file")
                }
                value = try parseValue(for: key)
                let valueEnd = index
                skipWhitespace()
                guard index < units.count, units[index] == UInt16(ascii: ";") else {
                    let found = index < units.count ? describeUnit(at: index) : "the end of the file"
                    throw error(at: valueEnd, "missing ';' after the value for key \"\(key)\" (found \(found))")
                }
            } else {
                let found = index < units.count ? describeUnit(at: index) : "the end of the file"
                throw error(at: index, "expected '=' or ';' after the key \"\(key)\", found \(found)")
            }
            index += 1  // ';'
            if dictionary.set(value, forKey: key) {
                duplicates.append(Duplicate(key: key, location: cursor.location(ofUnit: keyStart, in: text)))
            }
        }
    }

    private mutating func parseValue(for key: String) throws(LocalizationFileError) -> PropertyListValue {
        let start = index
        switch units[index] {
        case UInt16(ascii: "{"), UInt16(ascii: "("):
            try enter(at: start)
            defer { depth -= 1 }
            index += 1
            if units[start] == UInt16(ascii: "{") { return .dictionary(try parseDictionaryBody(closingAt: start)) }
            return .array(try parseArray(openedAt: start))
        case UInt16(ascii: "<"):
            index += 1
            return .data(try parseData(openedAt: start))
        default:
            guard let string = try parseString() else {
                throw error(at: index, "expected a value for key \"\(key)\" (a string, '{', '(' or '<'), found \(describeUnit(at: index))")
            }
            return .string(string)
        }
    }

    private mutating func enter(at position: Int) throws(LocalizationFileError) {
        depth += 1
        if depth > Self.maximumDepth {
            throw error(at: position, "values are nested more than \(Self.maximumDepth) deep")
        }
    }

    private mutating func parseArray(openedAt open: Int) throws(LocalizationFileError) -> [PropertyListValue] {
        var elements: [PropertyListValue] = []
        while true {
            skipWhitespace()
            guard index < units.count else {
                throw error(at: index, "missing ')' to close the array opened at \(position(of: open))")
            }
            if units[index] == UInt16(ascii: ")") {
                index += 1
                return elements
            }
            elements.append(try parseValue(for: "(array element)"))
            skipWhitespace()
            guard index < units.count else { continue }
            if units[index] == UInt16(ascii: ",") {
                index += 1
            } else if units[index] != UInt16(ascii: ")") {
                throw error(at: index, "expected ',' or ')' in the array opened at \(position(of: open)), found \(describeUnit(at: index))")
            }
        }
    }

    /// Hexadecimal byte pairs; whitespace (space, tab, CR, LF, U+2028, U+2029) may separate
    /// pairs but not the two digits of one byte.
    private mutating func parseData(openedAt open: Int) throws(LocalizationFileError) -> [UInt8] {
        var bytes: [UInt8] = []
        while index < units.count {
            let unit = units[index]
            if unit == UInt16(ascii: ">") {
                index += 1
                return bytes
            }
            if unit == 0x20 || unit == 0x0A || unit == 0x09 || unit == 0x0D || unit == 0x2028 || unit == 0x2029 {
                index += 1
                continue
            }
            guard let high = Self.hexValue(unit) else {
                throw error(at: index, "expected hexadecimal digits or '>' in data, found \(describeUnit(at: index))")
            }
            guard index + 1 < units.count, let low = Self.hexValue(units[index + 1]) else {
                throw error(at: index, "odd number of hexadecimal digits in the data opened at \(position(of: open)); each byte is two digits")
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        throw error(at: index, "missing '>' to close the data opened at \(position(of: open))")
    }

    // MARK: Strings

    /// A quoted or unquoted string at `index`, or `nil` when none starts there.
    private mutating func parseString() throws(LocalizationFileError) -> String? {
        guard index < units.count else { return nil }
        let unit = units[index]
        if unit == UInt16(ascii: "\"") || unit == UInt16(ascii: "'") {
            return try parseQuotedString(quote: unit)
        }
        guard Self.isUnquotedUnit(unit) else { return nil }
        let start = index
        while index < units.count, Self.isUnquotedUnit(units[index]) { index += 1 }
        return String(decoding: units[start..<index], as: UTF16.self)
    }

    private mutating func parseQuotedString(quote: UInt16) throws(LocalizationFileError) -> String {
        let open = index
        index += 1
        var result: [UInt16] = []
        var runStart = index
        while index < units.count {
            let unit = units[index]
            if unit == quote {
                // Most strings have no escapes: decode the slice directly.
                let string: String
                var replaced = false
                if result.isEmpty {
                    string = String(utf16Units: units[runStart..<index], replacedLoneSurrogate: &replaced)
                } else {
                    result.append(contentsOf: units[runStart..<index])
                    string = String(utf16Units: result, replacedLoneSurrogate: &replaced)
                }
                index += 1
                if replaced { loneSurrogates.append(cursor.location(ofUnit: open, in: text)) }
                return string
            }
            if unit == UInt16(ascii: "\\") {
                result.append(contentsOf: units[runStart..<index])
                index += 1
                guard index < units.count else { break }
                result.append(parseEscape())
                runStart = index
                continue
            }
            index += 1
        }
        throw error(at: open, "unterminated string: the quote opened here is never closed")
    }

    /// The unit an escape stands for; `index` is just after the backslash.
    private mutating func parseEscape() -> UInt16 {
        let unit = units[index]
        index += 1
        switch unit {
        case UInt16(ascii: "a"): return 0x07
        case UInt16(ascii: "b"): return 0x08
        case UInt16(ascii: "f"): return 0x0C
        case UInt16(ascii: "n"): return 0x0A
        case UInt16(ascii: "r"): return 0x0D
        case UInt16(ascii: "t"): return 0x09
        case UInt16(ascii: "v"): return 0x0B
        case UInt16(ascii: "U"):
            // Up to four hexadecimal digits make one UTF-16 unit; with none the value is 0, as
            // in CoreFoundation.
            var value: UInt16 = 0
            var digits = 0
            while digits < 4, index < units.count, let nibble = Self.hexValue(units[index]) {
                value = value << 4 | UInt16(nibble)
                index += 1
                digits += 1
            }
            return value
        case UInt16(ascii: "0")...UInt16(ascii: "7"):
            // One to three octal digits name a byte in the NeXTSTEP encoding; CoreFoundation
            // accumulates them in a byte, so \427 wraps to 0x17 and \777 to 0xFF.
            var value = UInt8(truncatingIfNeeded: unit - UInt16(ascii: "0"))
            var digits = 1
            while digits < 3, index < units.count, (UInt16(ascii: "0")...UInt16(ascii: "7")).contains(units[index]) {
                value = value &<< 3 &+ UInt8(truncatingIfNeeded: units[index] - UInt16(ascii: "0"))
                index += 1
                digits += 1
            }
            return NeXTSTEPEncoding.unit(for: value)
        default:
            // `\"`, `\\`, `\'`, a backslash before a real newline, and any other character stand
            // for that character; a lowercase `\u` is a plain `u`.
            return unit
        }
    }

    // MARK: Whitespace and comments

    private mutating func skipWhitespace() {
        while index < units.count {
            let unit = units[index]
            if Self.isWhitespaceUnit(unit) {
                index += 1
            } else if unit == UInt16(ascii: "/"), index + 1 < units.count, units[index + 1] == UInt16(ascii: "/") {
                index += 2
                while index < units.count, !Self.isLineEnd(units[index]) { index += 1 }
            } else if unit == UInt16(ascii: "/"), index + 1 < units.count, units[index + 1] == UInt16(ascii: "*") {
                index += 2
                // Comments do not nest; an unterminated one runs to the end of the file.
                while index < units.count, !(units[index] == UInt16(ascii: "*") && index + 1 < units.count && units[index + 1] == UInt16(ascii: "/")) {
                    index += 1
                }
                index = min(index + 2, units.count)
            } else {
                return
            }
        }
    }

    // MARK: Character classes

    static func isWhitespaceUnit(_ unit: UInt16) -> Bool {
        (0x09...0x0D).contains(unit) || unit == 0x20 || unit == 0x2028 || unit == 0x2029
    }

    static func isLineEnd(_ unit: UInt16) -> Bool {
        unit == 0x0A || unit == 0x0D || unit == 0x2028 || unit == 0x2029
    }

    static func isUnquotedUnit(_ unit: UInt16) -> Bool {
        switch unit {
        case UInt16(ascii: "a")...UInt16(ascii: "z"), UInt16(ascii: "A")...UInt16(ascii: "Z"), UInt16(ascii: "0")...UInt16(ascii: "9"),
             UInt16(ascii: "_"), UInt16(ascii: "$"), UInt16(ascii: "/"), UInt16(ascii: ":"), UInt16(ascii: "."), UInt16(ascii: "-"):
            true
        default:
            false
        }
    }

    static func hexValue(_ unit: UInt16) -> UInt8? {
        switch unit {
        case UInt16(ascii: "0")...UInt16(ascii: "9"): UInt8(unit - UInt16(ascii: "0"))
        case UInt16(ascii: "a")...UInt16(ascii: "f"): UInt8(unit - UInt16(ascii: "a") + 10)
        case UInt16(ascii: "A")...UInt16(ascii: "F"): UInt8(unit - UInt16(ascii: "A") + 10)
        default: nil
        }
    }

    // MARK: Errors

    private func error(at unitIndex: Int, _ message: String) -> LocalizationFileError {
        LocalizationFileError(path: path, location: text.location(ofUnit: unitIndex), message: message)
    }

    private func position(of unitIndex: Int) -> String {
        let location = text.location(ofUnit: unitIndex)
        return "\(location.line):\(location.column)"
    }

    private func describeUnit(at unitIndex: Int) -> String {
        guard unitIndex < units.count else { return "the end of the file" }
        return describe(unit: units[unitIndex])
    }
}

/// `'x'` for a printable character, `U+XXXX` otherwise.
func describe(unit: UInt16) -> String {
    if let scalar = Unicode.Scalar(unit), unit >= 0x20, unit != 0x7F {
        return "'\(Character(scalar))'"
    }
    let hex = String(unit, radix: 16, uppercase: true)
    return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
}
