import HeraldJSON
import Testing
import HeraldTestSupport

@Suite("JSON parser", .ownThreads)
struct JSONParserTests {
    @Test("keeps member order, duplicate keys and number text")
    func keepsEverything() throws {
        let document = try JSONDocument(parsing: #"{"b":1.0,"a":[1e2,-0,3],"b":"x"}"#)
        let members = Array(document.root.members)
        #expect(members.map(\.key) == ["b", "a", "b"])
        #expect(members[0].value.number?.text == "1.0")
        #expect(document.root["a"]?[0]?.number?.text == "1e2")
        #expect(document.root["a"]?[1]?.number?.text == "-0")
        // The last duplicate wins for lookups, as in most readers.
        #expect(document.root["b"]?.stringValue == "x")
        #expect(document.root.value.objectValue?.duplicateKeys == ["b"])
    }

    @Test("children and tokens: each copy iterates on its own, counts what is left, and a container of the other kind has none")
    func childSequences() throws {
        let document = try JSONDocument(parsing: #"{"a":{"deep":[1,[2,3]]},"b":[true,null,{"c":4}],"d":"x"}"#)
        var members = document.root.members
        let untouched = members
        #expect(members.next()?.key == "a")
        #expect(members.underestimatedCount == 2)
        #expect(members.map(\.key) == ["b", "d"])
        #expect(untouched.map(\.key) == ["a", "b", "d"])
        let array = try #require(document.root["b"])
        var elements = array.elements
        #expect(elements.underestimatedCount == 3)
        #expect(elements.next()?.kind == .bool)
        #expect(elements.map(\.kind) == [.null, .object])
        #expect(array.elements.map(\.kind) == [.bool, .null, .object])
        // Siblings after a nested child are found however deep it is.
        #expect(document.root["a"]?["deep"]?.elements.map(\.kind) == [.number, .array])
        #expect(Array(document.root.elements).isEmpty && Array(array.members).isEmpty)
        #expect(document.root.elements.underestimatedCount == 0)
        var tokens = document.tokens(in: array)
        #expect(tokens.underestimatedCount == 6)
        _ = tokens.next()
        #expect(tokens.map(\.kind) == [.bool, .null, .object, .string, .number])
        #expect(tokens.underestimatedCount == 5)
    }

    @Test("number views")
    func numbers() throws {
        let document = try JSONDocument(parsing: "[5, 5.0, 5e0, -9223372036854775808, 9223372036854775808, 0.5, 1e400]")
        let values = Array(document.root.elements)
        #expect(values[0].int64Value == 5)
        #expect(values[1].int64Value == nil)
        #expect(values[1].number?.integralValue == 5)
        #expect(values[2].number?.integralValue == 5)
        #expect(values[3].int64Value == .min)
        #expect(values[4].int64Value == nil)
        #expect(values[4].doubleValue == 9223372036854775808.0)
        #expect(values[5].doubleValue == 0.5)
        #expect(values[5].number?.integralValue == nil)
        #expect(values[6].doubleValue == .infinity)
        #expect(values[6].number?.text == "1e400")
    }

    @Test("strings decode every escape and raw UTF-8")
    func strings() throws {
        let document = try JSONDocument(parsing: #"["a\"b\\c\/d\b\f\n\r\t", "caf\u00e9 \ud83d\ude00", "안녕 😀", ""]"#)
        let values = Array(document.root.elements).map { $0.stringValue }
        #expect(values[0] == "a\"b\\c/d\u{08}\u{0C}\n\r\t")
        #expect(values[1] == "café 😀")
        #expect(values[2] == "안녕 😀")
        #expect(values[3] == "")
        #expect(document.root[1]?.stringHasEscapes == true)
        #expect(document.root[2]?.stringHasEscapes == false)
        #expect(document.root[1]?.stringEquals("café 😀") == true)
        #expect(document.root[2]?.stringEquals("안녕 😀") == true)
        #expect(document.root[2]?.stringEquals("안녕") == false)
    }

    @Test("every value knows its line and column")
    func locations() throws {
        let text = "{\n  \"aps\" : {\n    \"alert\" : \"안녕\", \"badge\": 5\n  }\r\n}"
        let document = try JSONDocument(parsing: text)
        let aps = try #require(document.root["aps"])
        #expect(aps.location == SourceLocation(offset: 12, line: 2, column: 11))
        let badge = try #require(aps["badge"])
        // Columns count scalars: the two Hangul syllables are 6 bytes but 2 columns.
        #expect(badge.location.line == 3)
        #expect(badge.location.column == 30)
        let alert = try #require(aps["alert"])
        #expect(alert.location.column == 15)
        #expect(alert.sourceText == "\"안녕\"")
    }

    @Test("scalars at the top level and surrounding whitespace")
    func topLevelScalars() throws {
        #expect(try JSONDocument(parsing: " true ").root.boolValue == true)
        #expect(try JSONDocument(parsing: "null").root.isNull)
        #expect(try JSONDocument(parsing: "\t\r\n\"x\"\n").root.stringValue == "x")
        #expect(try JSONDocument(parsing: "-12").root.int64Value == -12)
    }

    struct Rejection: Sendable, CustomStringConvertible {
        var input: [UInt8]
        var line: Int
        var column: Int
        var fragment: String
        var description: String { String(decoding: input, as: UTF8.self) }

        init(_ text: String, _ line: Int, _ column: Int, _ fragment: String) {
            self.input = Array(text.utf8)
            self.line = line
            self.column = column
            self.fragment = fragment
        }

        init(bytes: [UInt8], _ line: Int, _ column: Int, _ fragment: String) {
            self.input = bytes
            self.line = line
            self.column = column
            self.fragment = fragment
        }
    }

    static let rejections: [Rejection] = [
        Rejection("", 1, 1, "unexpected end of input; expected a JSON value"),
        Rejection("   ", 1, 4, "expected a JSON value"),
        Rejection("{\"a\":1,}", 1, 7, "trailing comma before '}' is not allowed; remove this ','"),
        Rejection("[1,]", 1, 3, "trailing comma before ']' is not allowed; remove this ','"),
        Rejection("[1 2]", 1, 4, "expected ',' or ']' after an array element, found '2' (is a ',' missing before this element?)"),
        Rejection("{\"a\" 1}", 1, 6, "expected ':' after an object key, found '1'"),
        Rejection("{\"a\":1 \"b\":2}", 1, 8, "expected ',' or '}' after an object member, found '\"' (is a ',' missing before this key?)"),
        Rejection("{a:1}", 1, 2, "object keys and strings must be quoted"),
        Rejection("{'a':1}", 1, 2, "JSON strings use straight double quotes"),
        Rejection("[\"a\" // c\n]", 1, 6, "comments are not allowed"),
        Rejection("[/* c */]", 1, 2, "comments are not allowed"),
        Rejection("[NaN]", 1, 2, "NaN and Infinity are not JSON numbers"),
        Rejection("[Infinity]", 1, 2, "NaN and Infinity"),
        Rejection("[01]", 1, 2, "leading zeros are not allowed"),
        Rejection("[-01]", 1, 3, "leading zeros are not allowed"),
        Rejection("[+1]", 1, 2, "no leading '+'"),
        Rejection("[.5]", 1, 2, "need a digit before '.'"),
        Rejection("[1.]", 1, 4, "expected a digit after '.'"),
        Rejection("[1e]", 1, 4, "expected a digit after the exponent mark"),
        Rejection("[-]", 1, 3, "expected a digit after '-'"),
        Rejection("[\"a\u{01}\"]", 1, 4, "unescaped control character U+0001"),
        Rejection("[\"a\nb\"]", 1, 4, "unescaped control character U+000A"),
        Rejection(#"["\x"]"#, 1, 3, "invalid escape '\\x'"),
        Rejection(#"["\u12"]"#, 1, 3, "invalid \\u escape"),
        Rejection(#"["\ud800"]"#, 1, 3, "lone surrogate \\uD800"),
        Rejection(#"["\udc00"]"#, 1, 3, "lone surrogate \\uDC00"),
        Rejection(#"["\ud800\u0041"]"#, 1, 3, "lone surrogate \\uD800"),
        Rejection("[\"abc", 1, 6, "expected '\"' to close the string that starts at 1:2"),
        Rejection("[1] [2]", 1, 5, "unexpected '[' after the top-level value"),
        Rejection("tru", 1, 4, "expected 'true'"),
        Rejection("True", 1, 1, "expected a JSON value, found 'T'"),
        Rejection("{\n  \"sound\" : “chime.aiff\"\n}", 2, 13, "found '“' (U+201C) (typographic quotes are not JSON"),
        Rejection("[1\u{0C}]", 1, 3, "found U+000C"),
        Rejection("[1\u{A0}]", 1, 3, "only space, tab, CR and LF are JSON whitespace"),
        Rejection(bytes: [0x5B, 0x22, 0xC3, 0x28, 0x22, 0x5D], 1, 3, "invalid UTF-8"),
        Rejection(bytes: [0x5B, 0x22, 0xC0, 0xAF, 0x22, 0x5D], 1, 3, "invalid UTF-8"),
        Rejection(bytes: [0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D], 1, 3, "invalid UTF-8"),
        Rejection(bytes: [0x5B, 0x22, 0xF4, 0x90, 0x80, 0x80, 0x22, 0x5D], 1, 3, "invalid UTF-8"),
        Rejection(bytes: [0x5B, 0xFF, 0x5D], 1, 2, "invalid UTF-8"),
        Rejection(bytes: [0xEF, 0xBB, 0xBF, 0x5B, 0x5D], 1, 1, "UTF-8 byte order mark"),
        Rejection(bytes: [0xFF, 0xFE, 0x5B, 0x00, 0x5D, 0x00], 1, 1, "UTF-16 little-endian byte order mark"),
    ]

    @Test("rejects what RFC 8259 rejects, saying what was expected and where", arguments: rejections)
    func rejects(_ rejection: Rejection) {
        do {
            _ = try JSONDocument(parsing: rejection.input)
            Issue.record("accepted \(rejection)")
        } catch {
            #expect(error.location.line == rejection.line, "\(error)")
            #expect(error.location.column == rejection.column, "\(error)")
            #expect(error.message.contains(rejection.fragment), "\(error.message)")
        }
    }

    @Test("nesting limit: accepts the limit, rejects one deeper, survives very deep input")
    func depthLimit() throws {
        func nested(_ depth: Int) -> [UInt8] {
            Array(repeating: UInt8(ascii: "["), count: depth) + Array(repeating: UInt8(ascii: "]"), count: depth)
        }
        _ = try JSONDocument(parsing: nested(512))
        #expect(throws: JSONParseError.self) { try JSONDocument(parsing: nested(513)) }
        do {
            _ = try JSONDocument(parsing: nested(1_000_000))
            Issue.record("accepted a million levels")
        } catch {
            #expect(error.reason == .tooDeep(limit: 512))
            #expect(error.location.column == 513)
        }
        let shallow = JSONParser(options: .init(maximumDepth: 2))
        #expect(throws: JSONParseError.self) { try shallow.parse(Array("[[[]]]".utf8)) }
        _ = try shallow.parse(Array("[[]]".utf8))
    }

    @Test("size limit")
    func sizeLimit() throws {
        let parser = JSONParser(options: .init(maximumInputSize: 8))
        _ = try parser.parse(Array("[1,2,3]".utf8))
        do {
            _ = try parser.parse(Array("[1,2,3,4]".utf8))
            Issue.record("accepted 9 bytes")
        } catch {
            #expect(error.reason == .tooLarge(size: 9, limit: 8))
            #expect(error.message == "input is 9 bytes, over the 8-byte limit")
        }
    }

    @Test("diagnose reports a missing comma and carries on to the next error")
    func diagnose() {
        let text = "{\n\"a\" : 1\n\"b\" : [1 2],\n\"c\" : “x\"\n}"
        let errors = JSONParser().diagnose(Array(text.utf8))
        #expect(errors.map(\.location.description) == ["3:1", "3:10", "4:7"])
        #expect(errors.last?.message.contains("typographic quotes") == true)
        #expect(JSONParser().diagnose(Array("{\"a\":[1,2]}".utf8)).isEmpty)
        #expect(JSONParser().diagnose(Array("[1 2 3]".utf8)).count == 2)
    }

    @Test("error description is LINE:COLUMN: message")
    func errorDescription() {
        do {
            _ = try JSONDocument(parsing: "{\n\"a\" 1}")
        } catch {
            #expect(error.description == "2:5: expected ':' after an object key, found '1'")
        }
    }
}

@Suite("Recovering parse", .ownThreads)
struct RecoveringParseTests {
    @Test("a missing comma: one error and a document with every member")
    func missingComma() throws {
        let (document, errors) = JSONParser().parseRecovering(Array("{\"a\":1 \"b\":[1 2]}".utf8))
        #expect(errors.count == 2)
        let root = try #require(document?.root)
        #expect(root.members.map(\.key) == ["a", "b"])
        #expect(root["b"]?.count == 2)
    }

    @Test("typographic quotes: the error, and the string read to its closing quote")
    func typographicQuotes() throws {
        let text = "{\n\"sound\" : “chime.aiff\",\n“title” : “안녕”\n\"x\":1}"
        let (document, errors) = JSONParser().parseRecovering(Array(text.utf8))
        #expect(errors.map(\.location.description) == ["2:11", "3:1", "3:11", "4:1"])
        let root = try #require(document?.root)
        #expect(root["sound"]?.stringValue == "chime.aiff")
        #expect(root["title"]?.stringValue == "안녕")
        #expect(root["x"]?.int64Value == 1)
        #expect(root.value == ["sound": "chime.aiff", "title": "안녕", "x": 1])
    }

    @Test("trailing commas: reported at the comma, and the document keeps every member")
    func trailingComma() throws {
        let text = "{\n  \"a\" : [1, 2,],\n  \"b\" : 3,\n}"
        let (document, errors) = JSONParser().parseRecovering(Array(text.utf8))
        #expect(errors.map(\.location.description) == ["2:14", "3:10"])
        #expect(errors.map(\.message) == ["trailing comma before ']' is not allowed; remove this ','",
                                          "trailing comma before '}' is not allowed; remove this ','"])
        #expect(try #require(document).root.value == ["a": [1, 2], "b": 3])
        #expect(throws: JSONParseError.self) { try JSONDocument(parsing: text) }
    }

    /// Past a limit, errors are counted and not described: those described are the first of the
    /// unlimited pass, word for word and place for place, and the document is the same. Every
    /// kind of recovered mistake is in the text, with a fatal one at the end in the second case.
    @Test("errors past a limit are counted, the first ones unchanged", arguments: [false, true])
    func describedErrorsStopAtALimit(fatalEnding: Bool) throws {
        let mistakes = (0..<60).map { index in
            [#""k\#(index)":1 "#, #""a\#(index)":[1 2,],"#, "“t\(index)”:“x”,", #""b\#(index)":[1,],"#][index % 4]
        }
        let text = "{" + mistakes.joined() + #""end":true"# + (fatalEnding ? " : 2}" : "}")
        // The package entry point, with its located errors worded as the public one words them.
        func parse(describingAtMost limit: Int) -> (document: JSONDocument?, errors: [JSONParseError], undescribed: Int) {
            text.utf8.withContiguousStorageIfAvailable { utf8 in
                let result = JSONParser().parseRecovering(UnsafeRawBufferPointer(utf8), describingAtMost: limit)
                let errors = result.recovered.map { $0.error(in: utf8) } + (result.failure.map { [$0] } ?? [])
                return (result.document, errors, result.undescribed)
            }!
        }
        let everything = parse(describingAtMost: .max)
        #expect(everything.undescribed == 0 && everything.errors.count > 60)
        for limit in [0, 1, 17, everything.errors.count] {
            let limited = parse(describingAtMost: limit)
            let described = fatalEnding ? limited.errors.dropLast() : limited.errors[...]
            let expected = (fatalEnding ? everything.errors.dropLast() : everything.errors[...]).prefix(limit)
            #expect(described.map(\.message) == expected.map(\.message))
            #expect(described.map(\.location) == expected.map(\.location))
            #expect(limited.errors.count + limited.undescribed == everything.errors.count)
            if fatalEnding { #expect(limited.errors.last?.message == everything.errors.last?.message && limited.document == nil) }
            #expect(limited.document?.root.value == everything.document?.root.value)
        }
    }

    @Test("an unrecoverable error gives no document")
    func unrecoverable() {
        let (document, errors) = JSONParser().parseRecovering(Array("{\"a\":1 : 2}".utf8))
        #expect(document == nil)
        #expect(errors.count == 1)
        let (valid, none) = JSONParser().parseRecovering(Array("[1]".utf8))
        #expect(valid != nil && none.isEmpty)
    }
}

/// A message after a prefix, built in one allocation for the errors a body holds many of, reads
/// as the prefix and the message written out by hand.
@Suite("Parse error messages after a prefix", .ownThreads)
struct ParseErrorPrefixTests {
    static let location = SourceLocation(offset: 0, line: 1, column: 1)

    @Test func messagesAfterAPrefix() {
        let hinted = JSONParseError(reason: .unexpectedCharacter(found: "'“' (U+201C)", expected: "a string", hint: "a typographic quote"), location: Self.location)
        #expect(hinted.message(after: "the body is not JSON: ") == "the body is not JSON: expected a string, found '“' (U+201C) (a typographic quote)")
        #expect(hinted.message == "expected a string, found '“' (U+201C) (a typographic quote)")
        let plain = JSONParseError(reason: .unexpectedCharacter(found: "'='", expected: "':' after an object key", hint: nil), location: Self.location)
        #expect(plain.message(after: "p: ") == "p: expected ':' after an object key, found '='")
        #expect(plain.message == "expected ':' after an object key, found '='")
        let others: [(JSONParseError.Reason, String)] = [
            (.leadingZero, "leading zeros are not allowed in numbers"),
            (.tooDeep(limit: 3), "arrays and objects are nested more than 3 deep"),
            (.unexpectedEndOfInput(expected: "'}'"), "unexpected end of input; expected '}'"),
        ]
        for (reason, text) in others {
            let error = JSONParseError(reason: reason, location: Self.location)
            #expect(error.message == text)
            #expect(error.message(after: "p: ") == "p: " + text)
        }
    }
}
