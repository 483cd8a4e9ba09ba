@testable import HeraldLint
import HeraldJSON
import Testing

/// Messages joined in one allocation read exactly as concatenation (the oracle), for parts that
/// are empty, ASCII, not ASCII, short enough to be stored inline and long; and the findings
/// whose messages are joined so read as they always did.
@Suite(.ownThreads) struct MessageTests {
    static let pieces = ["", "\"", "custom7", "é", "日本語のキー", "😀 and more", String(repeating: "x", count: 15), String(repeating: "long text ", count: 30)]

    @Test func joinedIsConcatenation() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let parts = (0..<7).map { _ in Self.pieces.randomElement(using: &generator)! }
            let joined = Message.joined(parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], parts[6])
            #expect(joined == parts.joined(), "\(parts)")
            #expect(joined.utf8.count == parts.map(\.utf8.count).reduce(0, +))
            #expect(Message.joined(parts[0], parts[1], parts[2]) == parts[0] + parts[1] + parts[2])
        }
    }

    @Test("the messages built by joining, word for word", arguments: [
        (#"{"aps":{"alert":"x","ticket":1}}"#, RuleID.unknownAPSKey,
         #""ticket" is not an Apple key; it reaches the app inside aps, but a future Apple key of that name would change its meaning: move it beside aps"#),
        (#"{"aps":{"alert":{"body":"x","colour":1}}}"#, RuleID.unknownAlertKey, #""colour" is not a key of the alert dictionary, so it is ignored"#),
        (#"{"aps":{"alert":"x"},"gift":null}"#, RuleID.customValueNull,
         #"custom key "gift" is null; custom values are dictionaries, arrays, strings, numbers or Booleans: omit the key instead"#),
        (#"{"aps":{"alert":"x"},"apiKey":"x"}"#, RuleID.sensitiveKeyName,
         #"custom key "apiKey" is named like a secret; keep secrets out of payloads or encrypt them for a service extension"#),
        (#"{"aps":{"alert":{"loc-key":"K","loc-args":[12]}}}"#, RuleID.locArgsNotStrings, #""loc-args" elements must be strings, found a number; write "12""#),
        (#"{"aps":{"alert":{"loc-key":"K","loc-args":[true]}}}"#, RuleID.locArgsNotStrings, #""loc-args" elements must be strings, found a boolean; write a string"#),
    ])
    func messages(_ body: String, _ rule: RuleID, _ message: String) throws {
        let finding = try #require(Linter().lint(body).diagnostics.first { $0.rule == rule }, "\(body)")
        #expect(finding.message == message)
    }
}

/// With more than a few findings a report makes each message and pointer when it is read
/// (``FindingOrigin``): what is read is what the few-findings path makes at once, for every
/// rule whose messages are deferred, for keys with escapes and outside ASCII, from any thread,
/// after the report and the linter are gone.
@Suite("Findings read when asked", .ownThreads)
struct DeferredFindingTests {
    /// A body holding one finding of `rule` about `key` (written as `spelled`, escapes and all),
    /// its pointer, and the message the finding says.
    struct Case: Sendable, CustomStringConvertible {
        let rule: RuleID
        let body: @Sendable (String) -> String
        let pointer: String
        let message: String
        var description: String { "\(rule) \(pointer)" }
    }

    static let cases: [Case] = [
        Case(rule: .unknownAPSKey, body: { #"{"aps":{"alert":"x",\#($0)"t\u0069cket":1}}"# }, pointer: "/aps/ticket",
             message: #""ticket" is not an Apple key; it reaches the app inside aps, but a future Apple key of that name would change its meaning: move it beside aps"#),
        Case(rule: .unknownAPSKey, body: { #"{"aps":{"alert":"x",\#($0)"soudn":1}}"# }, pointer: "/aps/soudn",
             message: #""soudn" is not a key of aps, so it is ignored; did you mean "sound"?"#),
        Case(rule: .unknownAlertKey, body: { #"{"aps":{"alert":{"body":"x","couleur-clé":1}},\#($0)"z":1}"# }, pointer: "/aps/alert/couleur-clé",
             message: #""couleur-clé" is not a key of the alert dictionary, so it is ignored"#),
        Case(rule: .unknownAlertKey, body: { #"{"aps":{"alert":{"body":"x","titel":1}},\#($0)"z":1}"# }, pointer: "/aps/alert/titel",
             message: #""titel" is not a key of the alert dictionary, so it is ignored; did you mean "title"?"#),
        Case(rule: .unknownSoundKey, body: { #"{"aps":{"alert":"x","sound":{"name":"a","volumen":1}},\#($0)"z":1}"# }, pointer: "/aps/sound/volumen",
             message: #""volumen" is not a key of the sound dictionary, so it is ignored; did you mean "volume"?"#),
        Case(rule: .customValueNull, body: { #"{"aps":{"alert":"x"},\#($0)"g\u00eft":null}"# }, pointer: "/gït",
             message: #"custom key "gït" is null; custom values are dictionaries, arrays, strings, numbers or Booleans: omit the key instead"#),
        Case(rule: .sensitiveKeyName, body: { #"{"aps":{"alert":"x"},\#($0)"apiKey":"x"}"# }, pointer: "/apiKey",
             message: #"custom key "apiKey" is named like a secret; keep secrets out of payloads or encrypt them for a service extension"#),
        Case(rule: .appleKeyOutsideAPS, body: { #"{"aps":{"alert":"x"},\#($0)"badge":1}"# }, pointer: "/badge",
             message: #""badge" is an aps key; beside aps the system ignores it: move it into aps"#),
        Case(rule: .appleKeyOutsideAPS, body: { #"{"aps":{"alert":"x"},\#($0)"loc-key":"s"}"# }, pointer: "/loc-key",
             message: #""loc-key" is an alert key; beside aps the system ignores it: move it into the "alert" dictionary inside aps"#),
        Case(rule: .duplicateKey, body: { #"{"aps":{"alert":"x"},\#($0)"k~/":1,"k~/":2}"# }, pointer: "/k~0~1",
             message: #"the key "k~/" appears more than once in this object; readers disagree on which value wins"#),
    ]

    /// Findings of other rules to go with the case's own: six custom keys that are null.
    static let others = (0..<6).map { #""pad\#($0)":null,"# }.joined()

    static func finding(_ report: LintReport, _ testCase: Case) -> LintDiagnostic? {
        report.diagnostics.first { $0.rule == testCase.rule && $0.pointer?.description == testCase.pointer }
    }

    @Test("a finding reads the same alone and among many", arguments: cases)
    func deferredReadsAsImmediate(_ testCase: Case) throws {
        let alone = Linter().lint(testCase.body(""))
        let among = Linter().lint(testCase.body(Self.others))
        #expect(alone.diagnostics.count <= 4, "the few-findings path: \(alone.diagnostics.map(\.message))")
        #expect(among.diagnostics.count > 4, "the deferred path")
        let immediate = try #require(Self.finding(alone, testCase), "\(alone.diagnostics.map { "\($0.rule) \($0.pointer?.description ?? "")" })")
        let deferred = try #require(Self.finding(among, testCase), "\(among.diagnostics.map { "\($0.rule) \($0.pointer?.description ?? "")" })")
        #expect(immediate.message == testCase.message)
        #expect(deferred.message == testCase.message)
        #expect(deferred.subject == immediate.subject)
        #expect(deferred.isAboutKey == immediate.isAboutKey)
        // The pointer names the value in the document (the oracle: resolving it from the root).
        let pointer = try #require(deferred.pointer)
        let node = try #require(among.document?.resolve(pointer))
        let keyOffset = try #require(deferred.location?.offset)
        #expect(deferred.isAboutKey ? node.byteRange.lowerBound > keyOffset : node.byteRange.lowerBound == keyOffset)
        // The pad findings (inside aps or beside it, as the case puts them) name their own keys.
        let pads = among.diagnostics.filter { $0.pointer?.tokens.last?.hasPrefix("pad") == true }
        #expect(pads.map { $0.pointer?.tokens.last } == (0..<6).map { "pad\($0)" })
        #expect(zip(pads, 0..<6).allSatisfy { pad, index in pad.message.contains("\"pad\(index)\"") }, "\(pads.map(\.message))")
    }

    @Test("equal findings are equal and hash alike; setting a message or subject replaces it")
    func equalityAndSetters() throws {
        let body = #"{"aps":{"alert":"x","# + (0..<12).map { #""k\#($0)":1"# }.joined(separator: ",") + "}}"
        let first = Linter().lint(body).diagnostics
        let second = Linter().lint(body).diagnostics
        #expect(first == second)
        #expect(Set(first) == Set(second) && Set(first).count == first.count)
        var changed = try #require(first.first { $0.rule == .unknownAPSKey })
        let original = changed
        changed.message = "replaced"
        #expect(changed.message == "replaced" && changed.pointer == original.pointer && changed != original)
        changed.subject = .header("apns-topic")
        #expect(changed.header == "apns-topic" && changed.pointer == nil && !changed.isAboutKey)
        #expect(original.message.hasPrefix("\"k0\" is not an Apple key") && original.pointer == "/aps/k0")
    }

    /// The report, its linter and its bytes are gone when the findings are read, and they are
    /// read from many tasks at once: each reads what one reader alone reads.
    @Test("findings are read after the report is gone, from many tasks at once")
    func readConcurrentlyAfterTheReport() async throws {
        func findings() -> [LintDiagnostic] {
            let bytes = Array((#"{"aps":{"alert":{"title":"T","# + (0..<150).map { #""c\#($0)":1"# }.joined(separator: ",") + "}}}").utf8)
            return Linter().lint(bytes).diagnostics
        }
        let diagnostics = findings()
        let expected = (0..<100).map { #"/aps/alert/c\#($0)"# }
        let read = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask { diagnostics.filter { !$0.message.contains("not listed") }.compactMap { $0.pointer?.description }.filter { $0.hasPrefix("/aps/alert/c") } }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(read.count == 8 && read.allSatisfy { $0 == expected })
        #expect(diagnostics.first { $0.rule == .unknownAlertKey }?.message == #""c0" is not a key of the alert dictionary, so it is ignored"#)
    }

    /// Objects of more than 16 members keep each member's key from the first walk: an Apple
    /// key at any position, past the first 16 too, is still known (a misaligned record would
    /// call it unknown, or miss its type).
    @Test("Apple keys are known at every position of a large object", arguments: [3, 16, 17, 40])
    func appleKeysAtEveryPosition(customs: Int) throws {
        var members = (0..<customs).map { #""c\#($0)":1"# }
        members.insert(#""badge":"x""#, at: customs / 2)
        members.append(#""sound":1"#)
        members.append(#""alert":{"title":"T",\#((0..<customs).map { #""a\#($0)":1"# }.joined(separator: ",")),"body":2}"#)
        let report = Linter(configuration: LintConfiguration(maximumFindingsPerRule: 1_000)).lint("{\"aps\":{" + members.joined(separator: ",") + "}}")
        let typed = report.diagnostics.filter { $0.rule == .keyType }.compactMap { $0.pointer?.description }
        #expect(Set(typed) == ["/aps/badge", "/aps/sound", "/aps/alert/body"], "\(typed)")
        #expect(report.diagnostics.filter { $0.rule == .unknownAPSKey }.count == customs)
        #expect(report.diagnostics.filter { $0.rule == .unknownAlertKey }.count == customs)
        #expect(!report.diagnostics.contains { ($0.rule == .unknownAPSKey || $0.rule == .unknownAlertKey) && ["badge", "sound", "alert", "title", "body"].contains($0.pointer?.tokens.last ?? "") })
    }
}

/// Syntax errors the recovering parser carries past are kept as a kind and an offset and worded
/// when read (``MessageText/syntax(_:in:after:)``): each reads as the message written out here
/// by hand, as the public recovering parse words it, at the same place, after the report, the
/// linter and the bytes are gone, and from many tasks at once.
@Suite("Syntax errors read when asked", .ownThreads)
struct DeferredSyntaxErrorTests {
    static let typographic = "typographic quotes are not JSON; use straight double quotes '\"'"
    /// A body, and the messages of its syntax findings in order, with no prefix.
    static let cases: [(body: String, messages: [String])] = [
        (#"{"aps":{"alert":“Hi”}}"#, ["expected a JSON value, found '“' (U+201C) (\(typographic))"]),
        (#"{“aps”:{"alert":"Hi"}}"#, ["expected a string key or '}', found '“' (U+201C) (\(typographic))"]),
        (#"{"aps":{"alert":"Hi"},“k”:1}"#, ["expected a string key, found '“' (U+201C) (\(typographic))"]),
        (#"{"aps":{"alert":"Hi"},"k":„x“}"#, ["expected a JSON value, found '„' (U+201E) (\(typographic))"]),
        (#"{"aps":{"alert":"Hi"} "k":1}"#, [#"expected ',' or '}' after an object member, found '"' (is a ',' missing before this key?)"#]),
        (#"{"aps":{"alert":"Hi"},"k":[1 "é" 3]}"#, [
            #"expected ',' or ']' after an array element, found '"' (is a ',' missing before this element?)"#,
            "expected ',' or ']' after an array element, found '3' (is a ',' missing before this element?)",
        ]),
        (#"{"aps":{"alert":"Hi"},}"#, ["trailing comma before '}' is not allowed; remove this ','"]),
        (#"{"aps":{"alert":"Hi"},"k":[1,]}"#, ["trailing comma before ']' is not allowed; remove this ','"]),
        (#"{"aps":{"alert":"日本"} “k”:1}"#, [
            "expected ',' or '}' after an object member, found '“' (U+201C) (is a ',' missing before this key?)",
            "expected a string key, found '“' (U+201C) (\(typographic))",
        ]),
    ]

    /// The syntax findings of `body`, read after everything that made them is gone.
    static func syntaxFindings(_ body: String) -> [LintDiagnostic] {
        let bytes = Array(body.utf8)
        return Linter().lint(bytes).diagnostics.filter { $0.rule == .invalidJSON }
    }

    @Test("each kind reads as written by hand and as the public parse words it", arguments: 0..<cases.count)
    func readsAsTheEagerMessage(_ index: Int) throws {
        let (body, messages) = Self.cases[index]
        let findings = Self.syntaxFindings(body)
        #expect(findings.map(\.message) == messages.map { "the body is not JSON: " + $0 }, "\(body)")
        let (document, errors) = JSONParser().parseRecovering(Array(body.utf8))
        #expect(document != nil, "recovered from, so the messages are deferred")
        #expect(findings.map(\.message) == errors.map { "the body is not JSON: " + $0.message })
        #expect(findings.map(\.location) == errors.map(\.location))
    }

    /// Ninety errors of every kind at once, read from eight tasks: each task reads what the
    /// public parse says, in order.
    @Test("many syntax errors read from many tasks at once")
    func readConcurrently() async throws {
        let mistakes = (0..<90).map { index in
            [#""k\#(index)":1 "#, #""a\#(index)":[1 2,],"#, "“t\(index)”:“x”,", #""b\#(index)":[1,],"#][index % 4]
        }
        let body = "{" + mistakes.joined() + #""end":true}"#
        let findings = Self.syntaxFindings(body).filter { !$0.message.contains("not listed") }
        let expected = JSONParser().parseRecovering(Array(body.utf8)).errors.prefix(100).map { "the body is not JSON: " + $0.message }
        #expect(expected.count == 100 && Set(expected).count > 4)
        let read = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 { group.addTask { findings.map(\.message) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(read.count == 8 && read.allSatisfy { $0 == Array(expected) })
    }

    /// A body the parser cannot carry on through has no document to read from later: the errors
    /// before the fatal one are worded at once, and the fatal one last.
    @Test("without a document every error is worded at once")
    func noDocument() throws {
        let findings = Self.syntaxFindings(#"{"aps":{"alert":"Hi"} "k":[1,] : 2}"#)
        #expect(findings.map(\.message) == [
            #"the body is not JSON: expected ',' or '}' after an object member, found '"' (is a ',' missing before this key?)"#,
            "the body is not JSON: trailing comma before ']' is not allowed; remove this ','",
            "the body is not JSON: expected ',' or '}' after an object member, found ':'",
        ])
    }
}
