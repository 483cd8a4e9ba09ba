import HeraldLocalization
import Testing
import HeraldTestSupport

/// The `.strings` grammar of reference §8.4, case by case.
@Suite(.ownThreads) struct StringsFileTests {
    /// Parses UTF-8 text and returns its string entries.
    func strings(_ text: String) throws -> [String: String] {
        let result = try PropertyListReader.read(Array(text.utf8), path: "Localizable.strings")
        guard case .dictionary(let dictionary) = result.value else {
            Issue.record("expected a dictionary")
            return [:]
        }
        var strings: [String: String] = [:]
        for (key, value) in dictionary { if case .string(let text) = value { strings[key] = text } }
        return strings
    }

    func parseError(_ text: String) -> LocalizationFileError? {
        do {
            _ = try PropertyListReader.read(Array(text.utf8), path: "Localizable.strings")
            return nil
        } catch {
            return error
        }
    }

    @Test func seedEntriesParse() throws {
        let sequential = try strings(#""GAME_PLAY_REQUEST_FORMAT" = "%@ and %@ have invited you to play Monopoly";"#)
        #expect(sequential == ["GAME_PLAY_REQUEST_FORMAT": "%@ and %@ have invited you to play Monopoly"])
        let positional = try strings(#""GAME_PLAY_REQUEST_FORMAT" = "%2$@ and %1$@ have invited you to play Monopoly";"#)
        #expect(positional["GAME_PLAY_REQUEST_FORMAT"] == "%2$@ and %1$@ have invited you to play Monopoly")
    }

    @Test func unquotedSingleQuotedAndShorthand() throws {
        let table = try strings("""
            unquoted_key.1 = value/with:colons-and$dollars;
            'single' = 'it\\'s';
            "KEY";
            'mixed' = "double";
            """)
        #expect(table["unquoted_key.1"] == "value/with:colons-and$dollars")
        #expect(table["single"] == "it's")
        #expect(table["KEY"] == "KEY")
        #expect(table["mixed"] == "double")
    }

    @Test func commentsOfBothKinds() throws {
        let table = try strings("""
            /* A block comment, with "quotes" and ; semicolons */
            "a" = "1"; // a line comment with "quotes"
            // "b" = "commented out";
            "c" /* between */ = /* tokens */ "3";
            "url" = http://example.com/path;
            """)
        #expect(table == ["a": "1", "c": "3", "url": "http://example.com/path"])
    }

    @Test func unterminatedBlockCommentRunsToTheEnd() throws {
        #expect(try strings("\"a\" = \"1\";\n/* never closed\n\"b\" = \"2\";") == ["a": "1"])
    }

    @Test func controlEscapes() throws {
        let table = try strings(#""k" = "a\ab\bf\fn\nr\rt\tv\v";"#)
        #expect(table["k"] == "a\u{07}b\u{08}f\u{0C}n\nr\rt\tv\u{0B}")
    }

    @Test func quoteBackslashAndOtherEscapes() throws {
        let table = try strings(#""k" = "say \"hi\" \\ \' \q";"#)
        #expect(table["k"] == #"say "hi" \ ' q"#)
    }

    @Test func backslashBeforeANewlineIsANewline() throws {
        #expect(try strings("\"k\" = \"line one\\\nline two\";")["k"] == "line one\nline two")
    }

    @Test func capitalUEscapesAreUTF16Units() throws {
        let table = try strings(#""k" = "caf\U00e9 \UD83D\UDE00 \U41 \u0041";"#)
        // \U takes up to four hex digits; a surrogate pair makes one character; lowercase \u is a plain u.
        #expect(table["k"] == "café 😀 A u0041")
    }

    @Test func octalEscapesAreNeXTSTEPBytes() throws {
        let table = try strings(#""k" = "\101\40\335\341\2563";"#)
        // 101 = 'A', 40 = space, 335 = é, 341 = Æ (NeXTSTEP), \256 is ﬁ then a literal 3.
        #expect(table["k"] == "A éÆﬁ3")
    }

    @Test func loneSurrogateIsReplacedAndReported() throws {
        let result = try PropertyListReader.read(Array(#""k" = "x\UD83Dy";"#.utf8), path: "L.strings")
        #expect(result.value.dictionaryValue?["k"] == .string("x\u{FFFD}y"))
        #expect(result.diagnostics.contains { $0.message.contains("surrogate") && $0.location?.line == 1 })
    }

    @Test func duplicateKeysLastWinsWithAWarning() throws {
        let result = try PropertyListReader.read(Array("\"k\" = \"first\";\n\"k\" = \"second\";\n".utf8), path: "L.strings")
        #expect(result.value.dictionaryValue?["k"] == .string("second"))
        let warning = try #require(result.diagnostics.first)
        #expect(warning.severity == .warning)
        #expect(warning.location?.line == 2 && warning.location?.column == 1)
    }

    @Test func bracedTableAndNestedValues() throws {
        let result = try PropertyListReader.read(Array("""
            {
                "s" = "text";
                "d" = { "inner" = "x"; };
                "a" = ( "one", "two", );
                "h" = <0fbd 77>;
            }
            """.utf8), path: "L.strings")
        let dictionary = try #require(result.value.dictionaryValue)
        #expect(dictionary["s"] == .string("text"))
        #expect(dictionary["a"] == .array([.string("one"), .string("two")]))
        #expect(dictionary["h"] == .data([0x0F, 0xBD, 0x77]))
        #expect(dictionary["d"]?.dictionaryValue?["inner"] == .string("x"))
    }

    @Test func whitespaceOnlyFileIsAnEmptyTable() throws {
        #expect(try strings(" \n\t/* only a comment */\n").isEmpty)
        #expect(try strings("\u{2028}\u{2029}").isEmpty)
    }

    @Test func zeroLengthFileIsAnError() {
        #expect(throws: LocalizationFileError.self) { try PropertyListReader.read([], path: "L.strings") }
    }

    @Test(arguments: [
        ("\"a\" = \"1\"\n\"b\" = \"2\";", 1, 10, "missing ';' after the value for key \"a\""),
        ("\"a\" = \"1\";\n\"b\" \"2\";", 2, 5, "expected '=' or ';' after the key \"b\""),
        ("\"a\" = \"unterminated;\n", 1, 7, "unterminated string"),
        ("\"a\" = ;", 1, 7, "expected a value for key \"a\""),
        ("= \"x\";", 1, 1, "expected a key"),
        ("{ \"a\" = \"1\";", 1, 13, "missing '}'"),
        ("{ \"a\" = \"1\"; } \"b\";", 1, 16, "after the closing '}'"),
        ("\"a\" = ( \"x\" \"y\" );", 1, 13, "expected ',' or ')'"),
        ("\"a\" = <0f1>;", 1, 10, "odd number of hexadecimal digits"),
        ("\"a\" = <0 f>;", 1, 8, "odd number of hexadecimal digits"),
        ("~ \"a\" = \"1\";", 1, 1, "expected a key"),
        ("\"first key never closed;", 1, 1, "unterminated string"),
        ("( \"an\", \"array\" )", 1, 1, "must be a dictionary"),
        ("\"a\" = <zz>;", 1, 8, "expected hexadecimal digits"),
        ("\"a\" = \"1\";\n\"é\" = \"2\"\n", 2, 10, "missing ';'"),
    ] as [(String, Int, Int, String)])
    func syntaxErrorsSayWhereAndWhat(text: String, line: Int, column: Int, message: String) throws {
        let error = try #require(parseError(text))
        #expect(error.location?.line == line, "\(error)")
        #expect(error.location?.column == column, "\(error)")
        #expect(error.message.contains(message), "\(error)")
        #expect(error.description.hasPrefix("Localizable.strings:\(line):\(column): "))
    }

    @Test(arguments: [("\"a\" = \"1\"; } \"b\" = \"2\";", 12), ("\"a\" = \"1\";\u{A0}\"b\" = \"2\";", 11), ("\"a\" = \"1\"; \"b = 2;", 12)])
    func unbracedTableStopsAtJunkLikeCoreFoundation(text: String, column: Int) throws {
        let result = try PropertyListReader.read(Array(text.utf8), path: "L.strings")
        #expect(result.value.dictionaryValue?.keys == ["a"])
        let warning = try #require(result.diagnostics.first)
        #expect(warning.severity == .warning)
        #expect(warning.message.contains("ignores the rest of the file"))
        #expect(warning.location?.column == column)
    }

    @Test func bracedTableResumesAfterAnUnterminatedKeyQuote() throws {
        // CoreFoundation resets to just after the quote and accepts the closing brace there.
        let result = try PropertyListReader.read(Array("{ \"a\" = \"1\"; '\n }".utf8), path: "L.strings")
        #expect(result.value.dictionaryValue?.keys == ["a"])
        #expect(throws: LocalizationFileError.self) { try PropertyListReader.read(Array("{ \"a\" = \"1\"; 'x }".utf8), path: "L.strings") }
    }

    @Test func byteOrderMarkAloneIsAnError() {
        #expect(throws: LocalizationFileError.self) { try PropertyListReader.read([0xEF, 0xBB, 0xBF], path: "L.strings") }
        #expect(throws: LocalizationFileError.self) { try PropertyListReader.read([0xFF, 0xFE], path: "L.strings") }
    }

    @Test func deepNestingIsAnErrorNotACrash() throws {
        let deep = "\"a\" = " + String(repeating: "(", count: 10_000) + String(repeating: ")", count: 10_000) + ";"
        let error = try #require(parseError(deep))
        #expect(error.message.contains("nested"))
    }

    @Test func writerRoundTrips() throws {
        let entries = [
            ("plain", "text"), ("quotes \"and\" \\", "line\nbreak\ttab"), ("control", "\u{01}\u{1F}\u{7F}"),
            ("unicode", "日本語 😀 é"), ("", "empty key"),
        ]
        let text = StringsFileWriter.write(entries)
        let table = try strings(text)
        #expect(table == Dictionary(uniqueKeysWithValues: entries))
    }
}
