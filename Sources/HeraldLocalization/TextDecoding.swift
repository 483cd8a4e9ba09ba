import HeraldJSON

/// The text encodings a property-list or `.strings` file can use, as CoreFoundation detects them.
public enum TextEncoding: String, Sendable, Hashable, CustomStringConvertible {
    /// UTF-8 (the default when nothing else matches).
    case utf8 = "UTF-8"
    /// UTF-16, little-endian.
    case utf16LittleEndian = "UTF-16LE"
    /// UTF-16, big-endian.
    case utf16BigEndian = "UTF-16BE"
    /// UTF-32, little-endian.
    case utf32LittleEndian = "UTF-32LE"
    /// UTF-32, big-endian.
    case utf32BigEndian = "UTF-32BE"

    /// The name, such as `UTF-16LE`.
    public var description: String { rawValue }
}

extension TextEncoding {
    /// The bytes of the encoding's byte-order mark, when the file has one.
    func byteOrderMarkWidth(present: Bool) -> Int {
        guard present else { return 0 }
        switch self {
        case .utf8: return 3
        case .utf16LittleEndian, .utf16BigEndian: return 2
        case .utf32LittleEndian, .utf32BigEndian: return 4
        }
    }
}

/// A text file decoded to UTF-16 code units, the unit CoreFoundation's property-list parsers
/// work in, remembering how it was encoded so positions can be reported in the file's terms.
///
/// Detection follows `CFPropertyList.c` (CoreFoundation's old-style property list parser): a UTF-32 byte-order mark, then a UTF-8
/// mark (`EF BB BF`), then a UTF-16 mark; with no mark, a `00` byte in the first two bytes means
/// UTF-16 without a mark (big-endian when the first byte is `00`), and anything else is UTF-8.
struct DecodedText: Sendable {
    /// The text without its byte-order mark. Lone surrogates in UTF-16 input are kept.
    let units: [UInt16]
    let encoding: TextEncoding
    let hasByteOrderMark: Bool

    /// Decodes `bytes`.
    ///
    /// - Throws: ``LocalizationFileError`` for bytes that are not valid in the detected encoding,
    ///   with the line and column where the text stops being valid.
    init(decoding bytes: [UInt8], path: String) throws(LocalizationFileError) {
        let count = bytes.count
        if count >= 4, bytes[0] == 0x00, bytes[1] == 0x00, bytes[2] == 0xFE, bytes[3] == 0xFF {
            (encoding, hasByteOrderMark) = (.utf32BigEndian, true)
        } else if count >= 4, bytes[0] == 0xFF, bytes[1] == 0xFE, bytes[2] == 0x00, bytes[3] == 0x00 {
            (encoding, hasByteOrderMark) = (.utf32LittleEndian, true)
        } else if count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            (encoding, hasByteOrderMark) = (.utf8, true)
        } else if count >= 2, bytes[0] == 0xFE, bytes[1] == 0xFF {
            (encoding, hasByteOrderMark) = (.utf16BigEndian, true)
        } else if count >= 2, bytes[0] == 0xFF, bytes[1] == 0xFE {
            (encoding, hasByteOrderMark) = (.utf16LittleEndian, true)
        } else if count >= 2, bytes[0] == 0x00 {
            (encoding, hasByteOrderMark) = (.utf16BigEndian, false)
        } else if count >= 2, bytes[1] == 0x00 {
            (encoding, hasByteOrderMark) = (.utf16LittleEndian, false)
        } else {
            (encoding, hasByteOrderMark) = (.utf8, false)
        }
        switch encoding {
        case .utf8:
            units = try Self.decodeUTF8(bytes, from: encoding.byteOrderMarkWidth(present: hasByteOrderMark), path: path)
        case .utf16LittleEndian, .utf16BigEndian:
            // UTF-16 and UTF-32 keep loops of their own: one loop over a unit width read UTF-16
            // 40% slower (Benchmarks: localization, "read .strings … UTF-16LE").
            let start = encoding.byteOrderMarkWidth(present: hasByteOrderMark)
            guard (count - start) % 2 == 0 else {
                throw LocalizationFileError(
                    path: path, location: nil,
                    message: "the file looks like \(encoding) but has an odd number of bytes (\(count)); it is truncated or not UTF-16")
            }
            let littleEndian = encoding == .utf16LittleEndian
            var result: [UInt16] = []
            result.reserveCapacity((count - start) / 2)
            var index = start
            while index < count {
                let first = UInt16(bytes[index]), second = UInt16(bytes[index + 1])
                result.append(littleEndian ? first | second << 8 : first << 8 | second)
                index += 2
            }
            units = result
        case .utf32LittleEndian, .utf32BigEndian:
            let start = encoding.byteOrderMarkWidth(present: hasByteOrderMark)
            guard (count - start) % 4 == 0 else {
                throw LocalizationFileError(
                    path: path, location: nil,
                    message: "the file has a \(encoding) byte-order mark but its length (\(count) bytes) is not a multiple of 4")
            }
            let littleEndian = encoding == .utf32LittleEndian
            var result: [UInt16] = []
            result.reserveCapacity((count - start) / 4)
            var index = start
            while index < count {
                let b = (UInt32(bytes[index]), UInt32(bytes[index + 1]), UInt32(bytes[index + 2]), UInt32(bytes[index + 3]))
                let value = littleEndian ? b.0 | b.1 << 8 | b.2 << 16 | b.3 << 24 : b.0 << 24 | b.1 << 16 | b.2 << 8 | b.3
                guard let scalar = Unicode.Scalar(value) else {
                    throw Self.invalid("0x\(String(value, radix: 16, uppercase: true)) is not a Unicode scalar value (\(encoding))",
                                       after: result, byteOffset: index, path: path)
                }
                result.append(contentsOf: UTF16.encode(scalar)!)
                index += 4
            }
            units = result
        }
    }

    /// The line and column of the unit at `index`, with its byte offset in the original file.
    func location(ofUnit index: Int) -> SourceLocation {
        let clamped = max(0, min(index, units.count))
        let bom = byteOrderMarkWidth
        let byteOffset: Int
        switch encoding {
        case .utf16LittleEndian, .utf16BigEndian:
            byteOffset = bom + clamped * 2
        case .utf8, .utf32LittleEndian, .utf32BigEndian:
            var bytes = 0
            var position = 0
            while position < clamped {
                let unit = units[position]
                let width: Int
                if UTF16.isLeadSurrogate(unit), position + 1 < units.count, UTF16.isTrailSurrogate(units[position + 1]) {
                    width = 4
                    position += 2
                } else {
                    width = encoding == .utf8 ? (unit < 0x80 ? 1 : unit < 0x800 ? 2 : 3) : 4
                    position += 1
                }
                bytes += width
            }
            byteOffset = bom + bytes
        }
        return Self.location(ofUnit: clamped, in: units, byteOffset: byteOffset)
    }

    /// The width of the byte-order mark in the file.
    var byteOrderMarkWidth: Int { encoding.byteOrderMarkWidth(present: hasByteOrderMark) }

    /// The error for text that stops being valid at `byteOffset`, once `units` are decoded.
    static func invalid(_ message: String, after units: [UInt16], byteOffset: Int, path: String) -> LocalizationFileError {
        LocalizationFileError(path: path, location: location(ofUnit: units.count, in: units, byteOffset: byteOffset), message: message)
    }

    /// Lines end at LF, CR, CRLF, U+2028 and U+2029; columns count Unicode scalars.
    static func location(ofUnit index: Int, in units: [UInt16], byteOffset: Int) -> SourceLocation {
        var line = 1
        var lineStart = 0
        var position = 0
        while position < index {
            let unit = units[position]
            if unit == 0x0A || unit == 0x2028 || unit == 0x2029 {
                line += 1
                lineStart = position + 1
            } else if unit == 0x0D {
                if position + 1 < units.count, units[position + 1] == 0x0A, position + 1 < index { position += 1 }
                line += 1
                lineStart = position + 1
            }
            position += 1
        }
        var column = 1
        for position in lineStart..<index where !UTF16.isTrailSurrogate(units[position]) { column += 1 }
        return SourceLocation(offset: byteOffset, line: line, column: column)
    }

    private static func decodeUTF8(_ bytes: [UInt8], from start: Int, path: String) throws(LocalizationFileError) -> [UInt16] {
        var result: [UInt16] = []
        result.reserveCapacity(bytes.count - start)
        var index = start
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte < 0x80 {
                // Copy an ASCII run at once.
                var end = index + 1
                while end < count, bytes[end] < 0x80 { end += 1 }
                result.append(contentsOf: bytes[index..<end].lazy.map { UInt16($0) })
                index = end
                continue
            }
            var scalarValue: UInt32 = 0
            var length = 0
            if byte & 0xE0 == 0xC0, byte >= 0xC2 {
                scalarValue = UInt32(byte & 0x1F); length = 2
            } else if byte & 0xF0 == 0xE0 {
                scalarValue = UInt32(byte & 0x0F); length = 3
            } else if byte & 0xF8 == 0xF0, byte <= 0xF4 {
                scalarValue = UInt32(byte & 0x07); length = 4
            }
            var valid = length > 0 && index + length <= count
            if valid {
                for offset in 1..<length {
                    let continuation = bytes[index + offset]
                    guard continuation & 0xC0 == 0x80 else { valid = false; break }
                    scalarValue = scalarValue << 6 | UInt32(continuation & 0x3F)
                }
            }
            if valid {
                // Reject overlong forms, surrogates and values past U+10FFFF.
                let minimum: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
                valid = scalarValue >= minimum && scalarValue <= 0x10FFFF && !(0xD800...0xDFFF).contains(scalarValue)
            }
            guard valid, let scalar = Unicode.Scalar(scalarValue) else {
                throw Self.invalid("byte 0x\(String(byte, radix: 16, uppercase: true)) is not valid UTF-8; save the file as UTF-8 or UTF-16 with a byte-order mark",
                                   after: result, byteOffset: index, path: path)
            }
            result.append(contentsOf: UTF16.encode(scalar)!)
            index += length
        }
        return result
    }
}

extension String {
    /// A string from UTF-16 units, reporting whether a lone surrogate had to be replaced by U+FFFD.
    ///
    /// Transcodes to UTF-8 in one pass straight into the string's storage (the generic
    /// `String(decoding:as: UTF16.self)` path is several times slower on array slices).
    init(utf16Units units: some Collection<UInt16>, replacedLoneSurrogate: inout Bool) {
        var replaced = false
        let capacity = units.count * 3
        let transcode = { (buffer: UnsafeMutableBufferPointer<UInt8>) -> Int in
            var written = 0
            var iterator = units.makeIterator()
            var pending: UInt16? = iterator.next()
            while let unit = pending {
                pending = iterator.next()
                var scalar = UInt32(unit)
                if unit < 0x80 {
                    buffer[written] = UInt8(unit)
                    written += 1
                    continue
                }
                if UTF16.isLeadSurrogate(unit), let next = pending, UTF16.isTrailSurrogate(next) {
                    scalar = 0x10000 + (UInt32(unit - 0xD800) << 10) + UInt32(next - 0xDC00)
                    pending = iterator.next()
                } else if unit & 0xF800 == 0xD800 {
                    scalar = 0xFFFD
                    replaced = true
                }
                if scalar < 0x800 {
                    buffer[written] = UInt8(0xC0 | scalar >> 6)
                    buffer[written + 1] = UInt8(0x80 | scalar & 0x3F)
                    written += 2
                } else if scalar < 0x10000 {
                    buffer[written] = UInt8(0xE0 | scalar >> 12)
                    buffer[written + 1] = UInt8(0x80 | scalar >> 6 & 0x3F)
                    buffer[written + 2] = UInt8(0x80 | scalar & 0x3F)
                    written += 3
                } else {
                    buffer[written] = UInt8(0xF0 | scalar >> 18)
                    buffer[written + 1] = UInt8(0x80 | scalar >> 12 & 0x3F)
                    buffer[written + 2] = UInt8(0x80 | scalar >> 6 & 0x3F)
                    buffer[written + 3] = UInt8(0x80 | scalar & 0x3F)
                    written += 4
                }
            }
            return written
        }
        // A surrogate pair (2 units) becomes 4 bytes, any other unit at most 3: 3 per unit suffices.
        self = String(unsafeUninitializedCapacity: Swift.max(capacity, 1), initializingUTF8With: transcode)
        if replaced { replacedLoneSurrogate = true }
    }
}

extension UInt16 {
    /// The code unit of an ASCII character, for comparing UTF-16 text.
    init(ascii scalar: Unicode.Scalar) {
        self = UInt16(scalar.value)
    }
}

/// Walks a decoded text forward, keeping the line, the column and the byte offset of where it
/// stands: locations asked for in increasing order (a table's repeated keys, its lone
/// surrogates) cost one pass over the text in all, where ``DecodedText/location(ofUnit:)``
/// scans from the start each time. Asking for an earlier unit starts again from the beginning.
struct UnitCursor {
    private var position = 0
    private var bytes = 0
    private var line = 1
    private var column = 1

    mutating func location(ofUnit target: Int, in text: DecodedText) -> SourceLocation {
        let units = text.units
        let target = max(0, min(target, units.count))
        if target < position { self = UnitCursor() }
        let utf16 = text.encoding == .utf16LittleEndian || text.encoding == .utf16BigEndian
        while position < target {
            let unit = units[position]
            if unit == 0x0D, position + 1 < units.count, units[position + 1] == 0x0A {
                if position + 1 == target {
                    // On the LF of a CRLF: the next line, without consuming the pair yet.
                    let offset = text.byteOrderMarkWidth + (utf16 ? target * 2 : bytes + 1)
                    return SourceLocation(offset: offset, line: line + 1, column: 1)
                }
                position += 2
                bytes += utf16 ? 4 : text.encoding == .utf8 ? 2 : 8
                line += 1
                column = 1
                continue
            }
            if UTF16.isLeadSurrogate(unit), position + 1 < units.count, UTF16.isTrailSurrogate(units[position + 1]) {
                position += 2
                bytes += 4
                column += 1
                continue
            }
            position += 1
            bytes += utf16 ? 2 : text.encoding == .utf8 ? (unit < 0x80 ? 1 : unit < 0x800 ? 2 : 3) : 4
            if unit == 0x0A || unit == 0x0D || unit == 0x2028 || unit == 0x2029 {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        // UTF-16 counts bytes by unit (a lone half of a pair too), as DecodedText does.
        return SourceLocation(offset: text.byteOrderMarkWidth + (utf16 ? target * 2 : bytes), line: line, column: column)
    }
}
