import HeraldLocalization
import HeraldTestSupport
import Testing

/// XML and binary property lists, checked against Python's `plistlib` as an independent writer.
@Suite(.ownThreads) struct PropertyListTests {
    static let sampleJSON = """
        {
          "ascii": "plain text", "unicode": "日本語 é 😀", "long": "a string longer than fifteen characters",
          "empty": "", "int": 42, "negative": -7, "big": 1099511627776, "real": 0.25, "yes": true, "no": false,
          "date": {"$date": 1700000000}, "data": {"$data": "AAEC/w=="},
          "array": ["one", 2, ["nested"]], "dict": {"inner": "x"},
          "many": [\((0..<300).map(String.init).joined(separator: ","))]
        }
        """

    static var sampleValue: PropertyListValue {
        var dictionary = PropertyListDictionary()
        let entries: [(String, PropertyListValue)] = [
            ("array", .array([.string("one"), .integer(2), .array([.string("nested")])])),
            ("ascii", .string("plain text")), ("big", .integer(1_099_511_627_776)), ("data", .data([0, 1, 2, 255])),
            ("date", .date(1_700_000_000 - CivilDate.referenceDateUnixSeconds)), ("dict", .dictionary({ var d = PropertyListDictionary(); d.set(.string("x"), forKey: "inner"); return d }())),
            ("empty", .string("")), ("int", .integer(42)), ("long", .string("a string longer than fifteen characters")),
            ("many", .array((0..<300).map { .integer(Int64($0)) })), ("negative", .integer(-7)), ("no", .boolean(false)),
            ("real", .real(0.25)), ("unicode", .string("日本語 é 😀")), ("yes", .boolean(true)),
        ]
        for (key, value) in entries { dictionary.set(value, forKey: key) }
        return .dictionary(dictionary)
    }

    @Test(arguments: ["BINARY", "XML"])
    func readsWhatPlistlibWrites(format: String) throws {
        let bytes = try ExternalTools.plistlib(json: Self.sampleJSON, format: format)
        let result = try PropertyListReader.read(bytes, path: "sample.plist")
        #expect(result.value == Self.sampleValue)
        #expect(result.format == (format == "BINARY" ? .binary : .xml(.utf8)))
    }

    @Test func binaryStringsTableReadsLikeText() throws {
        let bytes = try ExternalTools.plistlib(json: #"{"GAME_PLAY_REQUEST_FORMAT": "%@ and %@ have invited you to play Monopoly", "PLAY": "Jouer à ça"}"#, format: "BINARY")
        var table = StringsTable(entries: [:])
        table.addStringsFile(bytes: bytes, path: "fr.lproj/Localizable.strings")
        #expect(table.entries["PLAY"] == .text("Jouer à ça"))
        #expect(table.sources.first?.format == "binary")
        #expect(!table.hasUnreadableSource)
    }

    @Test func xmlEntitiesCDATACommentsAndShortForms() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <!-- a comment before the root -->
            <plist version="1.0">
            <dict>
                <key>entities</key><string>&lt;b&gt; &amp; &quot;q&quot; &apos;a&apos; &#233; &#x1F600;</string>
                <key>cdata</key><string><![CDATA[<raw> & text]]></string>
                <key>commented</key><string>a<!-- hidden -->b</string>
                <key>empty</key><string/>
                <key>hex</key><integer>0x1F</integer>
                <key>negative</key><integer>-12</integer>
                <key>true</key><true/>
                <key>emptyArray</key><array/>
                <key>date</key><date>2001-01-02T00:00:00Z</date>
            </dict>
            </plist>
            """
        let dictionary = try #require(try PropertyListReader.read(Array(xml.utf8), path: "x.plist").value.dictionaryValue)
        #expect(dictionary["entities"] == .string("<b> & \"q\" 'a' é 😀"))
        #expect(dictionary["cdata"] == .string("<raw> & text"))
        #expect(dictionary["commented"] == .string("ab"))
        #expect(dictionary["empty"] == .string(""))
        #expect(dictionary["hex"] == .integer(31))
        #expect(dictionary["negative"] == .integer(-12))
        #expect(dictionary["true"] == .boolean(true))
        #expect(dictionary["emptyArray"] == .array([]))
        #expect(dictionary["date"] == .date(86_400))
    }

    @Test(arguments: [
        ("<plist><dict><key>a</key><string>x</strin></dict></plist>", 1, 35, "expected </string>"),
        ("<plist><dict><key>a</key></dict></plist>", 1, 26, "has no value"),
        ("<plist><dict><string>x</string></dict></plist>", 1, 14, "expected <key>"),
        ("<plist>\n  <array>\n    <foo/>\n  </array>\n</plist>", 3, 5, "unknown element <foo>"),
        ("<plist><integer>12a</integer></plist>", 1, 8, "<integer> must hold"),
        ("<plist><string>a &nbsp; b</string></plist>", 1, 18, "unknown reference"),
        ("<plist><dict>", 1, 14, "missing </dict>"),
        ("<plist><string>x</string><string>y</string></plist>", 1, 26, "missing </plist>"),
    ] as [(String, Int, Int, String)])
    func xmlErrorsSayWhereAndWhat(xml: String, line: Int, column: Int, message: String) {
        do {
            _ = try PropertyListReader.read(Array(xml.utf8), path: "x.plist")
            Issue.record("expected an error for \(xml)")
        } catch {
            #expect(error.location?.line == line, "\(error)")
            #expect(error.location?.column == column, "\(error)")
            #expect(error.message.contains(message), "\(error)")
        }
    }

    /// A binary property list by hand: objects, then the offset table, then the trailer.
    static func binary(objects: [[UInt8]], top: UInt64 = 0, offsetSize: UInt8 = 1, referenceSize: UInt8 = 1) -> [UInt8] {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let tableOffset = bytes.count
        for offset in offsets {
            for shift in stride(from: Int(offsetSize) - 1, through: 0, by: -1) { bytes.append(UInt8((offset >> (8 * shift)) & 0xFF)) }
        }
        func be64(_ value: UInt64) -> [UInt8] { (0..<8).reversed().map { UInt8((value >> (8 * UInt64($0))) & 0xFF) } }
        bytes += [0, 0, 0, 0, 0, 0, offsetSize, referenceSize] + be64(UInt64(objects.count)) + be64(top) + be64(UInt64(tableOffset))
        return bytes
    }

    @Test func handBuiltBinaryReads() throws {
        // { "k": "v" } with an int array: dict(1) -> key 1, value 2.
        let bytes = Self.binary(objects: [[0xD1, 1, 2], [0x51, 0x6B], [0xA2, 3, 4], [0x10, 7], [0x22] + Array([0x3F, 0x80, 0, 0])])
        let dictionary = try #require(try PropertyListReader.read(bytes, path: "b.plist").value.dictionaryValue)
        #expect(dictionary["k"] == .array([.integer(7), .real(1.0)]))
    }

    @Test(arguments: [
        ("self-containing array", binary(objects: [[0xA1, 0]]), "contains itself"),
        ("reference past the objects", binary(objects: [[0xA1, 5]]), "past the"),
        ("dictionary with a non-string key", binary(objects: [[0xD1, 1, 1], [0x10, 1]]), "not a string"),
        ("string longer than the file", binary(objects: [[0x5F, 0x10, 30]]), "runs past"),
        ("length claimed past the file", binary(objects: [[0xAF, 0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0]]), "claims"),
        ("unknown marker", binary(objects: [[0x90]]), "unknown marker"),
        ("bad offset size", binary(objects: [[0x08]], offsetSize: 9), "must be 1 to 8"),
        ("top object out of range", binary(objects: [[0x08]], top: 3), "top object"),
        ("truncated", Array(binary(objects: [[0x08]]).prefix(20)), "too short"),
    ] as [(String, [UInt8], String)])
    func malformedBinaryIsAnErrorNotACrash(name: String, bytes: [UInt8], message: String) {
        do {
            _ = try PropertyListReader.read(bytes, path: "b.plist")
            Issue.record("\(name): expected an error")
        } catch {
            #expect(error.message.contains(message), "\(name): \(error)")
        }
    }

    @Test func sharedReferencesDoNotMultiplyWork() throws {
        // 60 levels of arrays each holding the next one twice: 2^60 leaves if expanded.
        var objects: [[UInt8]] = []
        for level in 0..<60 { objects.append([0xA2, UInt8(level + 1), UInt8(level + 1)]) }
        objects.append([0x51, 0x78])
        let value = try PropertyListReader.read(Self.binary(objects: objects), path: "b.plist").value
        guard case .array(let top) = value else { Issue.record("expected an array"); return }
        #expect(top.count == 2)
    }
}
