import HeraldJSON
import HeraldLint
import HeraldProtocol
import Testing
import HeraldTestSupport

@Suite("Messages and locations", .ownThreads)
struct LintMessageTests {
    @Test("size messages state the figures")
    func sizeMessage() throws {
        // 4161 bytes: {"aps":{"alert":"…"}} is 20 bytes of structure.
        let body = #"{"aps":{"alert":""# + String(repeating: "a", count: 4141) + #""}}"#
        #expect(body.utf8.count == 4161)
        let report = Linter().lint(body, context: LintContext(pushType: "alert"))
        let diagnostic = try #require(report.diagnostics.first { $0.rule == .payloadTooLarge })
        #expect(diagnostic.message == "4161 bytes, over the 4096-byte limit for alert pushes")
        #expect(diagnostic.pointer == .root)
        #expect(report.limit == 4096 && report.byteCount == 4161)
        #expect(report.apnsRejection == .payloadTooLarge)
        let voip = Linter().lint(body, context: LintContext(pushType: "voip"))
        #expect(!voip.diagnostics.contains { $0.rule == .payloadTooLarge })
        #expect(voip.limit == 5120)
    }

    @Test("a body near its limit says its share, rounded down", arguments: [(3_700, "alert", 4_096), (4_090, "alert", 4_096), (4_700, "voip", 5_120), (3_690, nil as String?, 4_096)])
    func nearLimitMessage(size: Int, pushType: String?, limit: Int) throws {
        let body = #"{"aps":{"alert":""# + String(repeating: "a", count: size - 20) + #""}}"#
        #expect(body.utf8.count == size)
        let report = Linter().lint(body, context: LintContext(pushType: pushType))
        let diagnostic = try #require(report.diagnostics.first { $0.rule == .payloadNearLimit })
        // Worked out by hand: 3,700 of 4,096 is 90.33%, 4,090 is 99.85%, 4,700 of 5,120 is 91.80%, 3,690 is 90.09%.
        let share = [3_700: 90, 4_090: 99, 4_700: 91, 3_690: 90][size]!
        let scope = pushType.map { "\($0) pushes" } ?? "device pushes (5120 for voip)"
        #expect(diagnostic.message == "\(size) bytes, \(share)% of the \(limit)-byte limit for \(scope)")
        #expect(diagnostic.location == SourceLocation(offset: 0, line: 1, column: 1) && diagnostic.pointer == .root)
        let pretty = Linter().lint("{ " + body.dropFirst().dropLast() + " }", context: LintContext(pushType: pushType))
        let noted = try #require(pretty.diagnostics.first { $0.rule == .payloadNearLimit })
        #expect(noted.message == "\(size + 2) bytes, \((size + 2) * 100 / limit)% of the \(limit)-byte limit for \(scope); compact, it would be \(size) bytes (herald fmt)")
    }

    @Test("a date of a hundred digits is named, not converted to a year out of range")
    func hugeDate() throws {
        // Found by FuzzLint: the year of 1.1e99 seconds trapped converting to Int.
        let digits = "1" + String(repeating: "1", count: 99)
        let report = Linter().lint(#"{"aps":{"event":"end","timestamp":1700000000,"dismissal-date":"# + digits + #","content-state":{}}}"#,
                                   context: LintContext(pushType: "liveactivity"))
        let diagnostic = try #require(report.diagnostics.first { $0.rule == .dateInMilliseconds })
        #expect(diagnostic.message == "\"dismissal-date\": \(digits) is in a year past 999,999,999 as seconds; it looks like milliseconds (divide by 1000)")
        let plausible = Linter().lint(#"{"aps":{"event":"end","timestamp":1700000000,"dismissal-date":1700000000000,"content-state":{}}}"#,
                                      context: LintContext(pushType: "liveactivity"))
        #expect(plausible.diagnostics.first { $0.rule == .dateInMilliseconds }?.message.contains("1700000000000 is in the year 55840 as seconds") == true)
    }

    @Test("a pretty body over the limit says how big its compact form is")
    func compactNote() throws {
        let body = "{\n" + String(repeating: " ", count: 4100) + "\"aps\" : { \"alert\" : \"Hi\" }\n}"
        let diagnostic = try #require(Linter().lint(body).diagnostics.first { $0.rule == .payloadTooLarge })
        #expect(diagnostic.message.hasSuffix("; compact, it would be 22 bytes (herald fmt)"))
    }

    @Test("did-you-mean for near misses of Apple keys", arguments: [
        ("content_available", "content-available"), ("contentAvailable", "content-available"), ("thread_id", "thread-id"),
        ("threadId", "thread-id"), ("mutableContent", "mutable-content"), ("Badge", "badge"), ("sounds", "sound"),
        ("interruption_level", "interruption-level"), ("relevance-scor", "relevance-score"),
        // Not ASCII: compared by scalar. Separators at both ends and doubled: dropped.
        ("sóund", "sound"), ("Bädge", "badge"), ("_thread__id_", "thread-id"), ("CATEGORY", "category"),
    ])
    func suggestions(_ key: String, _ suggestion: String) throws {
        let report = Linter().lint(#"{"aps":{"alert":"x",""# + key + #"":1}}"#)
        let diagnostic = try #require(report.diagnostics.first { $0.rule == .unknownAPSKey })
        #expect(diagnostic.message.contains("did you mean \"\(suggestion)\"?"), "\(diagnostic.message)")
        #expect(diagnostic.pointer?.description == "/aps/\(key)")
    }

    @Test("a key too long to be a respelling gets no suggestion, ASCII or not", arguments: [
        String(repeating: "sound", count: 13), String(repeating: "sóund", count: 11), String(repeating: "a", count: 64) + "sound",
    ])
    func noSuggestionForLongKeys(_ key: String) throws {
        let report = Linter().lint(#"{"aps":{"alert":"x",""# + key + #"":1}}"#)
        let diagnostic = try #require(report.diagnostics.first { $0.rule == .unknownAPSKey })
        #expect(!diagnostic.message.contains("did you mean"), "\(diagnostic.message)")
        #expect(diagnostic.pointer?.description == "/aps/\(key)")
    }

    @Test("an alert key inside aps is pointed to the alert dictionary")
    func alertKeyInAPS() throws {
        let diagnostic = try #require(Linter().lint(#"{"aps":{"title":"Hi","body":"x"}}"#).diagnostics.first { $0.rule == .unknownAPSKey })
        #expect(diagnostic.message.contains("\"title\" belongs in alert"))
    }

    @Test("header findings carry the header, come first, and map to APNs reasons")
    func headers() throws {
        let context = LintContext(pushType: "alert", priority: "7", collapseID: String(repeating: "x", count: 65), isRequest: true)
        let report = Linter().lint(#"{"aps":{"alert":"x"}}"#, context: context)
        #expect(report.diagnostics.first?.header != nil)
        let priority = try #require(report.diagnostics.first { $0.rule == .priorityInvalid })
        #expect(priority.header == "apns-priority")
        #expect(priority.location == nil)
        // The collapse id comes before the priority in APNs's (pushy's) order of checks.
        #expect(report.apnsRejection == .badCollapseID)
    }

    @Test("a clean payload has no findings and no rejection")
    func clean() {
        let report = Linter().lint(#"{"aps":{"alert":{"title":"Game Request","body":"Bob wants to play poker"},"badge":5,"sound":"default"},"gameID":"12345678"}"#,
                                   context: LintContext(pushType: "alert", priority: "10", topic: "com.example.app", isRequest: true))
        #expect(report.diagnostics.isEmpty, "\(report.diagnostics.map(\.message))")
        #expect(report.apnsRejection == nil)
    }

    @Test("background priority defaults: absent header means 10 only when the headers are complete")
    func defaultPriority() {
        let body = #"{"aps":{"content-available":1}}"#
        #expect(Linter().lint(body, context: LintContext(pushType: "background", topic: "t", isRequest: true)).diagnostics.contains { $0.rule == .backgroundPriority })
        #expect(!Linter().lint(body, context: LintContext(pushType: "background")).diagnostics.contains { $0.rule == .backgroundPriority })
        #expect(Linter().lint(body, context: LintContext(priority: "10")).diagnostics.contains { $0.rule == .backgroundPriority })
    }

    @Test("sensitive data recognisers")
    func sensitive() {
        func rules(_ body: String) -> Set<RuleID> { Set(Linter().lint(body).diagnostics.map(\.rule)) }
        #expect(rules(#"{"aps":{},"c":"4012-8888-8888-1881"}"#).contains(.sensitiveCardNumber))
        #expect(rules(#"{"aps":{},"c":"378282246310005"}"#).contains(.sensitiveCardNumber))
        #expect(!rules(#"{"aps":{},"c":"4012888888881882"}"#).contains(.sensitiveCardNumber))  // fails Luhn
        #expect(!rules(#"{"aps":{},"ts":1700000000005}"#).contains(.sensitiveCardNumber))     // timestamp
        #expect(rules(#"{"aps":{},"to":"Contact: bob.smith+news@mail.example.co.uk."}"#).contains(.sensitiveEmail))
        #expect(!rules(#"{"aps":{},"to":"user@localhost"}"#).contains(.sensitiveEmail))
        #expect(rules(#"{"aps":{},"h":"authorization: BEARER abcdefghijklmnopqrstuvwxyz"}"#).contains(.sensitiveToken))
        #expect(rules(#"{"aps":{},"k":"sk_live_4eC39HqLyjWDarjtT1zdp7dc"}"#).contains(.sensitiveToken))
        #expect(rules(#"{"aps":{},"api_key":"x"}"#).contains(.sensitiveKeyName))
        #expect(!rules(#"{"aps":{},"pinned":true,"spinner":"x"}"#).contains(.sensitiveKeyName))
        // Alert text is not custom data.
        #expect(!rules(#"{"aps":{"alert":"Mail from jane@example.com"}}"#).contains(.sensitiveEmail))
        // The short names only as the whole key, in any case or spelling; three letters that are
        // none of them are nothing.
        for key in ["ssn", "CVV", "cvc", "pin", "pwd", "Pin"] {
            #expect(rules(#"{"aps":{},"\#(key)":"1234"}"#).contains(.sensitiveKeyName), "\(key)")
        }
        for key in ["ssh", "cv", "pinx", "pwn", "abc"] {
            #expect(!rules(#"{"aps":{},"\#(key)":"1234"}"#).contains(.sensitiveKeyName), "\(key)")
        }
    }

    /// Every member beside `aps` is scanned, before, between and after repeated `aps` keys, and
    /// nothing inside either `aps`.
    @Test("the sensitive-data scan covers each custom member around every aps")
    func sensitiveScanCoversEveryCustomMember() {
        let body = #"{"a":"ann@example.org","aps":{"x":"in@aps.example"},"b":{"c":["bob@example.org"]},"aps":{"y":"again@aps.example"},"d":"dan@example.org"}"#
        let quoted = Linter().lint(body).diagnostics.filter { $0.rule == .sensitiveEmail }.map { String($0.message.prefix { $0 != " " }) }
        #expect(quoted == [#""ann@example.org""#, #""bob@example.org""#, #""dan@example.org""#])
    }

    /// The address a finding quotes is the one in the value, decoded, whether the value is read
    /// in place or through its escapes; the 100th listed is the 100th in the payload.
    @Test("an e-mail finding quotes the address, in place or decoded")
    func emailFindingsQuoteTheAddress() throws {
        func quoted(_ body: String) -> [String] {
            Linter().lint(body).diagnostics.filter { $0.rule == .sensitiveEmail && !$0.message.contains("not listed") }
                .map { String($0.message.prefix { $0 != ";" }) }
        }
        #expect(quoted(#"{"aps":{},"to":"Contact: bob.smith+news@mail.example.co.uk."}"#) == [#""bob.smith+news@mail.example.co.uk" is an e-mail address"#])
        #expect(quoted(#"{"aps":{},"to":"é Contact: bob.smith@example.com, thanks"}"#) == [#""bob.smith@example.com" is an e-mail address"#])
        #expect(quoted(#"{"aps":{},"k1":{"to":["x","ann@example.org"]}}"#) == [#""ann@example.org" is an e-mail address"#])
        let many = (0..<150).map { #""user\#($0)@example.com""# }.joined(separator: ",")
        let listed = quoted(#"{"aps":{},"people":[\#(many)]}"#)
        #expect(listed.count == 100 && listed.last == #""user99@example.com" is an e-mail address"#)
    }
}

@Suite("Duplicate keys and shadowed values", .ownThreads)
struct ShadowedValueTests {
    @Test("findings are about the value readers use: the last of a repeated key")
    func lastWins() throws {
        let body = #"{"aps":{"badge":"x","badge":2,"alert":{"loc-key":"%@ %@","loc-args":["a"]},"alert":"Hi"}}"#
        let report = Linter().lint(body)
        let rules = report.diagnostics.map(\.rule)
        // The shadowed badge (a string) and the shadowed alert (a format with too few arguments)
        // are not reported; the repetitions are.
        #expect(!rules.contains(.keyType))
        #expect(!rules.contains(.formatMissingArguments))
        #expect(rules.filter { $0 == .duplicateKey }.count == 2)
        for diagnostic in report.diagnostics {
            let pointer = try #require(diagnostic.pointer)
            #expect(report.document?.resolve(pointer) != nil)
        }
    }

    @Test("the last aps is the one analysed")
    func lastAPS() {
        let rules = Set(Linter().lint(#"{"aps":{"badge":-1},"aps":{"badge":1}}"#).diagnostics.map(\.rule))
        #expect(rules == [.duplicateKey])
    }
}
