import HeraldLocalization
import Testing
import HeraldTestSupport

/// Encoding detection of reference §8.4: the same table in every encoding reads the same.
@Suite(.ownThreads) struct TextEncodingTests {
    static let text = """
        /* Français, 日本語, emoji */
        "GREETING" = "Bonjour %@ 👋";
        "KANJI" = "日本語の通知";
        """
    static let expected: [String: String] = ["GREETING": "Bonjour %@ 👋", "KANJI": "日本語の通知"]

    enum Encoding: String, CaseIterable {
        case utf8, utf8BOM, utf16LE, utf16LEBOM, utf16BE, utf16BEBOM, utf32LEBOM, utf32BEBOM
    }

    static func encode(_ text: String, _ encoding: Encoding) -> [UInt8] {
        func utf16(_ littleEndian: Bool) -> [UInt8] {
            text.utf16.flatMap { littleEndian ? [UInt8($0 & 0xFF), UInt8($0 >> 8)] : [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        }
        func utf32(_ littleEndian: Bool) -> [UInt8] {
            text.unicodeScalars.flatMap { scalar -> [UInt8] in
                let v = scalar.value
                let bytes = [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
                return littleEndian ? bytes.reversed() : bytes
            }
        }
        switch encoding {
        case .utf8: return Array(text.utf8)
        case .utf8BOM: return [0xEF, 0xBB, 0xBF] + Array(text.utf8)
        case .utf16LE: return utf16(true)
        case .utf16LEBOM: return [0xFF, 0xFE] + utf16(true)
        case .utf16BE: return utf16(false)
        case .utf16BEBOM: return [0xFE, 0xFF] + utf16(false)
        case .utf32LEBOM: return [0xFF, 0xFE, 0x00, 0x00] + utf32(true)
        case .utf32BEBOM: return [0x00, 0x00, 0xFE, 0xFF] + utf32(false)
        }
    }

    @Test(arguments: Encoding.allCases)
    func everyEncodingReadsTheSame(encoding: Encoding) throws {
        let result = try PropertyListReader.read(Self.encode(Self.text, encoding), path: "L.strings")
        var strings: [String: String] = [:]
        for (key, value) in try #require(result.value.dictionaryValue) { strings[key] = value.stringValue }
        #expect(strings == Self.expected)
        let expectedFormat: PropertyListFormat = switch encoding {
        case .utf8: .text(.utf8, byteOrderMark: false)
        case .utf8BOM: .text(.utf8, byteOrderMark: true)
        case .utf16LE: .text(.utf16LittleEndian, byteOrderMark: false)
        case .utf16LEBOM: .text(.utf16LittleEndian, byteOrderMark: true)
        case .utf16BE: .text(.utf16BigEndian, byteOrderMark: false)
        case .utf16BEBOM: .text(.utf16BigEndian, byteOrderMark: true)
        case .utf32LEBOM: .text(.utf32LittleEndian, byteOrderMark: true)
        case .utf32BEBOM: .text(.utf32BigEndian, byteOrderMark: true)
        }
        #expect(result.format == expectedFormat)
    }

    @Test(arguments: [Encoding.utf8, .utf16LEBOM, .utf16BE, .utf32BEBOM])
    func errorPositionsAreInCharactersWhateverTheEncoding(encoding: Encoding) throws {
        // Line 2 is missing its semicolon after the value; the column counts characters.
        let text = "\"日本\" = \"語\";\n\"😀\" = \"x\"\n\"b\" = \"c\";"
        do {
            _ = try PropertyListReader.read(Self.encode(text, encoding), path: "L.strings")
            Issue.record("expected an error")
        } catch {
            #expect(error.location?.line == 2)
            #expect(error.location?.column == 10)
            // The byte offset is in the file's own encoding.
            let prefix = "\"日本\" = \"語\";\n\"😀\" = \"x\""
            let bom = [Encoding.utf16LEBOM: 2, .utf32BEBOM: 4][encoding] ?? 0
            let isUTF16 = encoding == .utf16LEBOM || encoding == .utf16BE
            let unit = isUTF16 ? prefix.utf16.count * 2 : encoding == .utf32BEBOM ? prefix.unicodeScalars.count * 4 : prefix.utf8.count
            #expect(error.location?.offset == bom + unit)
        }
    }

    @Test func invalidUTF8IsAnErrorWithItsPosition() throws {
        let bytes = Array("\"a\" = \"1\";\n\"b\" = \"".utf8) + [0xC3, 0x28] + Array("\";".utf8)
        do {
            _ = try PropertyListReader.read(bytes, path: "L.strings")
            Issue.record("expected an error")
        } catch {
            #expect(error.location?.line == 2)
            #expect(error.location?.column == 8)
            #expect(error.message.contains("not valid UTF-8"))
        }
    }

    @Test func truncatedUTF16IsAnError() {
        let bytes: [UInt8] = [0xFF, 0xFE, 0x22, 0x00, 0x61]
        #expect(throws: LocalizationFileError.self) { try PropertyListReader.read(bytes, path: "L.strings") }
    }

    @Test func utf16ByteOrderMarkWinsOverANulDetection() throws {
        // "A" in UTF-16BE with a BOM has a 00 in its third byte, not in the first two.
        let result = try PropertyListReader.read([0xFE, 0xFF, 0x00, 0x41, 0x00, 0x3B], path: "L.strings")
        #expect(result.value.dictionaryValue?["A"] == .string("A"))
    }
}
