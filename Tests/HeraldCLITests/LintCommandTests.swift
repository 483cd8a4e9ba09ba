import Foundation
import HeraldJSON
import HeraldLint
import HeraldTestSupport
import Testing

@Suite("herald lint", .ownThreads)
struct LintCommandTests {
    @Test("a clean seed example: summary only, exit 0")
    func clean() throws {
        let result = try HeraldProcess.run(["lint", Fixtures.url("seeds/listing-1-alert.json").path])
        #expect(result.status == 0)
        #expect(result.output == "1 file linted: 0 errors, 0 warnings, 0 infos\n")
    }

    @Test("the fifth seed example: compiler-style lines, exit 1")
    func malformed() throws {
        let path = Fixtures.url("seeds/legacy-example-5-malformed.json").path
        let result = try HeraldProcess.run(["lint", path])
        #expect(result.status == 1)
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "\(path):4:5: error: the body is not JSON: expected ',' or '}' after an object member, found '\"' (is a ',' missing before this key?) [invalid-json]")
        #expect(lines.contains { $0.hasPrefix("\(path):11:18: warning: \"jane.appleseed@apple.com\" is an e-mail address") && $0.hasSuffix("[sensitive-email]") })
        #expect(lines.last == "1 file linted: 1 error, 1 warning, 1 info")
    }

    @Test("warnings pass unless --strict")
    func strict() throws {
        let body = Array(#"{"aps":{"content_available":1}}"#.utf8)
        #expect(try HeraldProcess.run(["lint"], stdin: body).status == 0)
        #expect(try HeraldProcess.run(["lint", "--strict"], stdin: body).status == 1)
        #expect(try HeraldProcess.run(["lint", "--disable", "unknown-aps-key", "--strict"], stdin: body).status == 0)
    }

    @Test("headers: findings name the header and have no line")
    func headers() throws {
        let result = try HeraldProcess.run(["lint", "--push-type", "background", "--priority", "10", "-"], stdin: Array(#"{"aps":{"content-available":1}}"#.utf8))
        #expect(result.status == 1)
        #expect(result.output.hasPrefix("<stdin>: error: apns-priority is 10; background pushes must use priority 5 [background-priority]\n"))
    }

    @Test("--format json is the documented document, read by Python's json")
    func json() throws {
        let result = try HeraldProcess.run(["lint", "--format", "json", "--priority", "7", Fixtures.url("seeds/legacy-example-2.json").path])
        #expect(result.status == 1)
        let values = try ExternalTools.pythonJSON(result.stdout, [
            "d['files'][0]['bytes']", "d['files'][0]['limit']",
            "d['files'][0]['diagnostics'][0]", "d['files'][0]['diagnostics'][1]", "d['summary']",
        ])
        #expect(values[0] == "216")
        #expect(values[1] == "4096")
        #expect(values[2] == #"{"header": "apns-priority", "message": "apns-priority \"7\" is not 10, 5 or 1", "rule": "priority-invalid", "severity": "error"}"#)
        // A finding about a key points at the key: line 6, column 7 is `"action-loc-key"`.
        #expect(values[3].hasPrefix(#"{"column": 7, "line": 6, "message": "\"action-loc-key\" is a legacy key"#), "\(values[3])")
        #expect(values[3].hasSuffix(#""pointer": "/aps/alert/action-loc-key", "rule": "legacy-alert-key", "severity": "info", "target": "key"}"#), "\(values[3])")
        #expect(values[4] == #"{"errors": 1, "files": 1, "infos": 1, "warnings": 0}"#)
    }

    @Test("--format sarif is SARIF 2.1.0 with the catalog as rules, read by Python's json")
    func sarif() throws {
        let result = try HeraldProcess.run(["lint", "--format", "sarif", Fixtures.url("seeds/legacy-example-5-malformed.json").path])
        let values = try ExternalTools.pythonJSON(result.stdout, [
            "d['version']", "d['runs'][0]['tool']['driver']['name']", "d['runs'][0]['columnKind']",
            "len(d['runs'][0]['tool']['driver']['rules'])",
            "[r['ruleId'] == d['runs'][0]['tool']['driver']['rules'][r['ruleIndex']]['id'] for r in d['runs'][0]['results']]",
            "sorted(set(r['level'] for r in d['runs'][0]['results']) - {'error', 'warning', 'note'})",
            "[r['locations'][0]['physicalLocation']['region']['startLine'] for r in d['runs'][0]['results']]",
        ])
        #expect(values[0] == #""2.1.0""#)
        #expect(values[1] == #""herald""#)
        #expect(values[2] == #""unicodeCodePoints""#)
        #expect(values[3] == String(LintCatalog.rules.count))
        #expect(values[4] == "[true, true, true]")
        #expect(values[5] == "[]")
        #expect(values[6] == "[4, 6, 11]", "\(values[6])")
    }

    @Test("--jsonl: PATH:LINENO, blank lines skipped, CRLF tolerated; same output with 1 or 4 jobs")
    func jsonl() throws {
        var text = ""
        for index in 1...3000 {
            switch index % 5 {
            case 0: text += #"{"aps":{"badge":-1}}"# + "\r\n"
            case 1: text += "\n"
            case 2: text += #"{"aps":{"alert":"ok \#(index)"}}"# + "\n"
            case 3: text += #"{"aps":{"content_available":1},"mail":"a\#(index)@example.com"}"# + "\n"
            default: text += #"{"aps":"# + "\n"
            }
        }
        let one = try HeraldProcess.run(["lint", "--jsonl", "--jobs", "1"], stdin: Array(text.utf8))
        let four = try HeraldProcess.run(["lint", "--jsonl", "--jobs", "4"], stdin: Array(text.utf8))
        #expect(one.status == 1)
        #expect(one.stdout == four.stdout)
        let lines = one.output.split(separator: "\n").map(String.init)
        #expect(lines[0] == "<stdin>:3:9: warning: \"content_available\" is not a key of aps, so it is ignored; did you mean \"content-available\"? [unknown-aps-key]")
        #expect(lines[1] == "<stdin>:3:39: warning: \"a3@example.com\" is an e-mail address; custom data should not carry customer information [sensitive-email]")
        #expect(lines[2] == "<stdin>:4:8: error: the body is not JSON: unexpected end of input; expected a JSON value [invalid-json]")
        #expect(lines[3] == "<stdin>:5:17: error: badge -1 is not a whole number from 0 up; 0 clears the badge [badge-invalid]")
        // Per five lines: one blank, one clean, one with two warnings, two with an error each.
        #expect(lines.last == "2400 payloads linted: 1200 errors, 1200 warnings, 0 infos")
        let json = try HeraldProcess.run(["lint", "--jsonl", "--format", "json"], stdin: Array(text.utf8))
        let document = try JSONDocument(parsing: json.stdout)
        #expect(document.root["files"]?.count == 1800)
        #expect(document.root["files"]?[0]?["path"]?.stringValue == "<stdin>:3")
        #expect(document.root["summary"]?["files"]?.int64Value == 2400)
    }

    @Test("--rules lists the catalog; markdown is the committed reference")
    func rules() throws {
        let text = try HeraldProcess.run(["lint", "--rules"])
        #expect(text.status == 0)
        #expect(text.output.contains("background-priority"))
        let markdown = try HeraldProcess.run(["lint", "--rules", "--format", "markdown"])
        let committed = try String(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("docs/lint-rules.md"), encoding: .utf8)
        #expect(markdown.output == committed)
    }

    @Test("usage and I/O problems exit 2")
    func usage() throws {
        let missing = try HeraldProcess.run(["lint", "/nonexistent.json"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("cannot read '/nonexistent.json'"))
        let badRule = try HeraldProcess.run(["lint", "--disable", "no-such-rule"])
        #expect(badRule.status == 2)
        #expect(badRule.stderr.contains("'no-such-rule' is not a rule id"))
        #expect(try HeraldProcess.run(["lint", "--format", "xml"]).status == 2)
        #expect(try HeraldProcess.run(["lint", "--format", "markdown", "x.json"]).status == 2)
    }

    @Test("several files: the readable ones are linted, the unreadable one is reported, exit 2")
    func unreadableAmongSeveral() throws {
        let good = Fixtures.url("seeds/legacy-example-2.json").path
        let result = try HeraldProcess.run(["lint", good, "/nonexistent.json", good])
        #expect(result.status == 2)
        #expect(result.stderr.contains("cannot read '/nonexistent.json'"))
        #expect(result.output.components(separatedBy: "[legacy-alert-key]").count == 3, "\(result.output)")
        #expect(result.output.contains("2 files linted"), "\(result.output)")
    }

    @Test(".apns simulator files: their tooling keys belong there")
    func simulatorFiles() throws {
        let directory = try TemporaryDirectory()
        let body = #"{"Simulator Target Bundle":"com.example.MyApp","aps":{"alert":"Hi"},"WatchKit Simulator Actions":[]}"#
        try directory.write("push.apns", body)
        try directory.write("push.json", body)
        let apns = try HeraldProcess.run(["lint", directory.path("push.apns")])
        #expect(apns.status == 0 && !apns.output.contains("simulator"), "\(apns.output)")
        let json = try HeraldProcess.run(["lint", directory.path("push.json")])
        #expect(json.output.contains("[simulator-target-bundle]") && json.output.contains("[watchkit-simulator-actions]"), "\(json.output)")
    }

    @Test("--rules --format sarif is a SARIF log whose driver rules are the catalog")
    func rulesAsSARIF() throws {
        let result = try HeraldProcess.run(["lint", "--rules", "--format", "sarif"])
        #expect(result.status == 0)
        let values = try ExternalTools.pythonJSON(result.stdout, [
            "d['version']", "[r['id'] for r in d['runs'][0]['tool']['driver']['rules']]", "d['runs'][0]['results']",
        ])
        #expect(values[0] == #""2.1.0""#)
        #expect(values[1] == "[" + LintCatalog.rules.map { "\"\($0.id.rawValue)\"" }.joined(separator: ", ") + "]")
        #expect(values[2] == "[]")
    }

    @Test("output that cannot be written is an error, exit 2")
    func failedWrite() throws {
        let shell = try ExternalTools.require("sh", package: "dash")
        let seed = Fixtures.url("seeds/legacy-example-2.json").path
        for command in [["lint", seed], ["fmt", seed]] {
            let result = try ExternalTools.execute(shell, ["-c", "exec \"$0\" \"$@\" > /dev/full", HeraldProcess.executable.path] + command)
            #expect(result.status == 2, "\(command)")
            #expect(result.stderr.contains("cannot write to standard output: No space left on device"), "\(result.stderr)")
        }
        let preview = try HeraldProcess.run(["preview", "--output", "/dev/full", seed])
        #expect(preview.status == 2)
        #expect(preview.stderr.contains("cannot write '/dev/full'"), "\(preview.stderr)")
    }
}
