/// The three property-list formats a localization file can arrive in.
public enum PropertyListFormat: Sendable, Hashable, CustomStringConvertible {
    /// Old-style text, as in a `.strings` source file, in the detected text encoding.
    case text(TextEncoding, byteOrderMark: Bool)
    /// An XML property list.
    case xml(TextEncoding)
    /// A binary property list (`bplist00`).
    case binary

    /// `text (UTF-16LE, BOM)`, `XML (UTF-8)`, `binary`.
    public var description: String {
        switch self {
        case .text(let encoding, let bom): "text (\(encoding)\(bom ? ", BOM" : ""))"
        case .xml(let encoding): "XML (\(encoding))"
        case .binary: "binary"
        }
    }
}

/// Reads property lists in any of the three formats, detecting which one as CoreFoundation does:
/// `bplist0` magic for binary, an XML prolog or `<plist` for XML, old-style text otherwise.
public enum PropertyListReader {
    /// What a read produced.
    public struct Result: Sendable {
        /// The top-level value.
        public var value: PropertyListValue
        /// The format found.
        public var format: PropertyListFormat
        /// Problems that did not stop the read (duplicate keys, half surrogate pairs).
        public var diagnostics: [LocalizationDiagnostic]
    }

    /// Reads `bytes`, naming the file `path` in errors.
    ///
    /// - Throws: ``LocalizationFileError`` with the position and what was expected. Old-style
    ///   text must be a dictionary (the only form a `.strings` table takes); a zero-length file is
    ///   an error, as it is for CoreFoundation.
    public static func read(_ bytes: [UInt8], path: String) throws(LocalizationFileError) -> Result {
        guard !bytes.isEmpty else {
            throw LocalizationFileError(path: path, location: nil, message: "the file is empty (0 bytes); CoreFoundation rejects an empty property list, so it provides no strings")
        }
        if BinaryPropertyListParser.looksLikeBinary(bytes) {
            var parser = BinaryPropertyListParser(bytes: bytes, path: path)
            return Result(value: try parser.parse(), format: .binary, diagnostics: [])
        }
        let text = try DecodedText(decoding: bytes, path: path)
        if XMLPropertyListParser.looksLikeXML(text.units) {
            var parser = XMLPropertyListParser(text: text, path: path)
            return Result(value: try parser.parse(), format: .xml(text.encoding), diagnostics: [])
        }
        guard !text.units.isEmpty else {
            throw LocalizationFileError(path: path, location: nil, message: "the file holds only a byte-order mark; CoreFoundation rejects an empty property list, so it provides no strings")
        }
        var parser = OldStylePropertyListParser(text: text, path: path)
        let parsed = try parser.parseStringsFile()
        var diagnostics: [LocalizationDiagnostic] = []
        for duplicate in parsed.duplicates {
            diagnostics.append(LocalizationDiagnostic(
                .warning, "the key \"\(duplicate.key)\" is defined again here; the last definition wins",
                path: path, location: duplicate.location))
        }
        if let stop = parsed.stoppedEarly {
            diagnostics.append(LocalizationDiagnostic(
                .warning, "reading stops at \(stop.found), which cannot start a key: like CoreFoundation, Herald keeps the \(parsed.dictionary.count) entr\(parsed.dictionary.count == 1 ? "y" : "ies") before it and ignores the rest of the file",
                path: path, location: stop.location))
        }
        for location in parsed.loneSurrogates {
            diagnostics.append(LocalizationDiagnostic(
                .warning, "this string holds half of a surrogate pair (write non-BMP characters as two \\U escapes, e.g. \\UD83D\\UDE00); the device shows U+FFFD",
                path: path, location: location))
        }
        return Result(value: .dictionary(parsed.dictionary), format: .text(text.encoding, byteOrderMark: text.hasByteOrderMark), diagnostics: diagnostics)
    }
}
