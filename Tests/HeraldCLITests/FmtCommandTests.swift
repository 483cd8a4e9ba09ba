import Foundation
import HeraldJSON
import HeraldTestSupport
import Testing

@Suite("herald fmt", .ownThreads)
struct FmtCommandTests {
    @Test("round trip on every well-formed seed example", arguments: Fixtures.seedPayloads)
    func roundTrip(_ path: String) throws {
        let source = try Fixtures.bytes(path)
        let first = try HeraldProcess.run(["fmt", Fixtures.url(path).path])
        #expect(first.status == 0)
        #expect(first.stdout == (try JSONDocument(parsing: source)).compactBytes())
        #expect(first.stdout.first == UInt8(ascii: "{") && first.stdout.last == UInt8(ascii: "}"))
        // The compact form is a fixed point: formatting it again changes nothing.
        let second = try HeraldProcess.run(["fmt", "-"], stdin: first.stdout)
        #expect(second.status == 0)
        #expect(second.stdout == first.stdout)
        let size = try HeraldProcess.run(["fmt", "--size"], stdin: source)
        #expect(size.output == "\(first.stdout.count)\n")
        let pretty = try HeraldProcess.run(["fmt", "--pretty", Fixtures.url(path).path])
        #expect(try JSONDocument(parsing: pretty.stdout).compactBytes() == first.stdout)
    }

    @Test("the seed example missing a comma: FILE:LINE:COLUMN error, exit 1")
    func missingComma() throws {
        let path = Fixtures.url("seeds/legacy-example-5-malformed.json").path
        let result = try HeraldProcess.run(["fmt", path])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "\(path):4:5: error: expected ',' or '}' after an object member, found '\"' (is a ',' missing before this key?)\n")
    }

    @Test("the seed example with typographic quotes: both errors, exit 1")
    func typographicQuotes() throws {
        let result = try HeraldProcess.run(["fmt"], stdin: Fixtures.bytes("seeds/summary-example-typographic-malformed.json"))
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("<stdin>:4:1: error: expected ',' or '}'") == true)
        #expect(lines.last == "<stdin>:9:11: error: expected a JSON value, found '“' (U+201C) (typographic quotes are not JSON; use straight double quotes '\"')")
    }

    @Test("canonical strings: \\u escapes become UTF-8, slashes stay unescaped")
    func canonicalStrings() throws {
        let result = try HeraldProcess.run(["fmt"], stdin: Array(#"{ "aps" : { "alert" : "caf\u00e9 \/ \ud83d\ude00 \"q\"" } }"#.utf8))
        #expect(result.output == #"{"aps":{"alert":"café / 😀 \"q\""}}"#)
    }

    @Test("unreadable input and bad arguments exit 2 with a clear message")
    func usageErrors() throws {
        let missing = try HeraldProcess.run(["fmt", "/nonexistent/payload.json"])
        #expect(missing.status == 2)
        #expect(missing.stderr == "herald: error: cannot read '/nonexistent/payload.json': No such file or directory\n")
        let directory = try HeraldProcess.run(["fmt", "/"])
        #expect(directory.status == 2)
        #expect(directory.stderr.contains("Is a directory"))
        let badFlag = try HeraldProcess.run(["fmt", "--bogus"])
        #expect(badFlag.status == 2)
        #expect(badFlag.stderr.contains("Unknown option '--bogus'"))
        let conflicting = try HeraldProcess.run(["fmt", "--pretty", "--size"])
        #expect(conflicting.status == 2)
    }

    @Test("empty input is a syntax error, not a crash")
    func emptyInput() throws {
        let result = try HeraldProcess.run(["fmt"], stdin: [])
        #expect(result.status == 1)
        #expect(result.stderr == "<stdin>:1:1: error: unexpected end of input; expected a JSON value\n")
    }

    @Test("--help teaches")
    func help() throws {
        let result = try HeraldProcess.run(["fmt", "--help"])
        #expect(result.status == 0)
        #expect(result.output.contains("herald fmt --size payload.json"))
    }
}
