import HeraldJSON
import Testing
import HeraldTestSupport

@Suite("JSON writer", .ownThreads)
struct JSONWriterTests {
    @Test("escapes only quote, backslash and C0 controls; raw UTF-8; no slash escape")
    func escaping() {
        let value: JSONValue = ["k": "a\"b\\c/d\u{08}\u{0C}\n\r\t\u{01}\u{1F}\u{7F} é 안녕 😀 \u{2028}"]
        #expect(value.compactString == #"{"k":"a\"b\\c/d\b\f\n\r\t\u0001\u001f"# + "\u{7F} é 안녕 😀 \u{2028}\"}")
    }

    @Test("compact and pretty layouts")
    func layouts() {
        let value: JSONValue = ["aps": ["alert": "Hi", "badge": 1], "empty": [:], "list": [], "xs": [1, [2], ["a": nil]]]
        #expect(value.compactString == #"{"aps":{"alert":"Hi","badge":1},"empty":{},"list":[],"xs":[1,[2],{"a":null}]}"#)
        #expect(value.prettyString == """
        {
          "aps": {
            "alert": "Hi",
            "badge": 1
          },
          "empty": {},
          "list": [],
          "xs": [
            1,
            [
              2
            ],
            {
              "a": null
            }
          ]
        }
        """)
    }

    @Test("streaming writer with static keys, integers and booleans")
    func streaming() {
        var writer = JSONWriter(output: JSONBytes())
        writer.beginObject()
        writer.key("aps" as StaticString)
        writer.beginObject()
        writer.key("badge" as StaticString)
        writer.integer(-9223372036854775807 - 1)
        writer.key("n")
        writer.integer(0)
        writer.key("t")
        writer.bool(true)
        writer.endObject()
        writer.key("x")
        writer.number(0.1)
        writer.endObject()
        #expect(String(decoding: writer.output.bytes, as: UTF8.self) == #"{"aps":{"badge":-9223372036854775808,"n":0,"t":true},"x":0.1}"#)
    }

    @Test("byte counter agrees with the bytes written")
    func counter() throws {
        let document = try JSONDocument(parsing: #"{ "aps" : { "alert" : "안녕 \u00e9" }, "n": [1, 2.50] }"#)
        let bytes = document.compactBytes()
        #expect(document.compactByteCount == bytes.count)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"aps":{"alert":"안녕 é"},"n":[1,2.50]}"#)
    }

    @Test("doubles are written in shortest form", arguments: [
        (25.0, "25"), (0.5, "0.5"), (0.1, "0.1"), (-3.0, "-3"), (1e-5, "1e-05"), (1e300, "1e+300"),
        (9007199254740993.0, "9007199254740992"), (1.5e16, "1.5e+16"),
    ])
    func doubles(_ value: Double, _ text: String) throws {
        let number = try #require(JSONNumber(value))
        #expect(number.text == text)
        // Whatever the text, it must be valid JSON that reads back as the same Double.
        #expect(JSONNumber(text: number.text) != nil)
        #expect(number.doubleValue == value)
    }

    @Test("non-finite doubles are not JSON numbers")
    func nonFinite() {
        #expect(JSONNumber(Double.nan) == nil)
        #expect(JSONNumber(Double.infinity) == nil)
        #expect(JSONNumber(text: "1.") == nil)
        #expect(JSONNumber(text: "01") == nil)
        #expect(JSONNumber(text: "-0.0e+5") != nil)
    }
}
