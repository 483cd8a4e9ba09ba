import Foundation
import HeraldJSON
import HeraldLint
import HeraldPayload
import HeraldTestSupport
import Testing

/// For any input: the linter does not crash, every diagnostic's pointer resolves in the document,
/// and its line:column points at the value the pointer names.
@Suite("Lint properties", .ownThreads)
struct LintPropertyTests {
    static func check(_ bytes: [UInt8], context: LintContext = .bodyOnly) -> [String] {
        PropertyChecks.lint(bytes, context: context)
    }

    static let contexts = PropertyChecks.lintContexts

    @Test("random payloads, pretty and compact", arguments: 0..<20)
    func randomPayloads(seed: Int) throws {
        var random = RandomJSON(seed: UInt64(seed) &+ 777)
        for round in 0..<40 {
            let payload = random.payload()
            let compact = try payload.encode()
            let pretty = try JSONDocument(parsing: compact).prettyBytes()
            let context = Self.contexts[round % Self.contexts.count]
            #expect(Self.check(compact, context: context) == [], "\(String(decoding: compact, as: UTF8.self))")
            #expect(Self.check(pretty, context: context) == [], "\(String(decoding: pretty, as: UTF8.self))")
        }
    }

    @Test("damaged payloads", arguments: 0..<20)
    func damaged(seed: Int) throws {
        var random = RandomJSON(seed: UInt64(seed) &+ 4040)
        for round in 0..<40 {
            let bytes = random.mutate(try random.payload().encode())
            #expect(Self.check(bytes, context: Self.contexts[round % Self.contexts.count]) == [], "\(bytes)")
        }
    }

    /// The location check itself: it passes the linter's own findings and fails each kind of
    /// wrong location, so the properties above can fail.
    @Test("the location check catches wrong locations")
    func locationCheckCanFail() throws {
        let body = "{\n  \"aps\" : {\n    \"badge\" : \"5\",\n    \"gameID\" : 1\n  }\n}"
        let report = Linter().lint(body)
        let document = try #require(report.document)
        let keyFinding = try #require(report.diagnostics.first { $0.rule == .unknownAPSKey })
        let valueFinding = try #require(report.diagnostics.first { $0.rule == .keyType })
        #expect(keyFinding.isAboutKey && keyFinding.location == SourceLocation(offset: 37, line: 4, column: 5))
        #expect(!valueFinding.isAboutKey && valueFinding.location == SourceLocation(offset: 28, line: 3, column: 15))
        #expect(PropertyChecks.lintLocations([keyFinding, valueFinding], in: document) == [])

        func moved(_ diagnostic: LintDiagnostic, to offset: Int, line: Int? = nil, column: Int? = nil) -> LintDiagnostic {
            var wrong = diagnostic
            let right = document.location(ofOffset: offset)
            wrong.location = SourceLocation(offset: offset, line: line ?? right.line, column: column ?? right.column)
            return wrong
        }
        var asValue = keyFinding
        asValue.subject = .value(try #require(keyFinding.pointer))
        let wrong: [(String, LintDiagnostic)] = [
            ("a key finding at its value", moved(keyFinding, to: 48)),
            ("a value finding at its key", moved(valueFinding, to: 18)),
            ("a key finding that claims to be about the value", asValue),
            ("a finding at the enclosing object", moved(valueFinding, to: 12)),
            ("a finding between tokens", moved(valueFinding, to: 27)),
            ("the right offset on the wrong line", moved(valueFinding, to: 28, line: 2)),
            ("the right offset in the wrong column", moved(valueFinding, to: 28, column: 16)),
        ]
        for (what, diagnostic) in wrong {
            #expect(PropertyChecks.lintLocations([diagnostic], in: document) != [], "\(what)")
        }
    }

    @Test("every rule example")
    func examples() {
        for rule in LintCatalog.rules {
            for example in rule.triggering + rule.nonTriggering {
                #expect(Self.check(Array(example.body.utf8), context: example.context) == [], "\(rule.id): \(example.body.prefix(100))")
            }
        }
    }
}

@Suite("Lint fuzz regressions", .ownThreads)
struct LintFuzzRegressionTests {
    static func inputs() -> [String] {
        Fixtures.fuzzInputs("FuzzLint")
    }

    @Test("saved inputs pass the lint contract", arguments: inputs())
    func replay(_ path: String) throws {
        let bytes = try Fixtures.bytes(path)
        let context = PropertyChecks.lintContexts[Int(bytes.first ?? 0) % PropertyChecks.lintContexts.count]
        #expect(PropertyChecks.lint(Array(bytes.dropFirst()), context: context) == [])
    }
}

/// A rule says at most `maximumFindingsPerRule` things about one payload, then how many more:
/// the work a finding costs (its message, place, suggestions) is paid for those listed only.
@Suite("Findings per rule", .ownThreads)
struct FindingsPerRuleTests {
    @Test("past the cap, one finding counts the rest", arguments: [(500, 100), (101, 100), (100, 100), (30, 10)])
    func cappedRulesCountWhatTheyLeaveOut(keys: Int, cap: Int) throws {
        let members = (0..<keys).map { #""custom\#($0)":1"# }.joined(separator: ",")
        let linter = Linter(configuration: LintConfiguration(maximumFindingsPerRule: cap))
        let report = linter.lint(#"{"aps":{"alert":"Hi",\#(members)}}"#)
        let unknown = report.diagnostics.filter { $0.rule == .unknownAPSKey }
        if keys <= cap {
            #expect(unknown.count == keys && !unknown.contains { $0.message.contains("not listed") })
            #expect(report.unlistedCount == 0)
        } else {
            #expect(unknown.count == cap + 1, "\(unknown.count)")
            #expect(report.unlistedCount == keys - cap)
            let summary = try #require(unknown.first { $0.message.contains("not listed") })
            #expect(summary.message.contains("and \(keys - cap) more finding"), "\(summary.message)")
            // Where the last listed one is; every listed one names its own key.
            #expect(Set(unknown.compactMap(\.pointer)).count == cap, "each listed finding points at its key")
        }
        // Other rules keep their own count.
        let both = linter.lint(#"{"aps":{"alert":"Hi",\#(members)},"email":"ann@example.com"}"#)
        #expect(both.diagnostics.contains { $0.rule == .sensitiveEmail })
    }

    /// Keys repeated in a random order, every value null: one finding per key, at its last
    /// occurrence (the only value readers keep), however the repetitions interleave, which is
    /// where the hidden-range lookup's remembered position is tried and missed.
    @Test("repeated keys in any order: one finding each, at the last", arguments: 0..<20)
    func interleavedRepeatsFindTheLastOnly(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed) &+ 77)
        let keys = (0..<Int.random(in: 1...12, using: &random)).map { "k\($0)" }
        var members: [String] = []
        for key in keys { members += Array(repeating: key, count: Int.random(in: 1...6, using: &random)) }
        members.shuffle(using: &random)
        let body = #"{"aps":{"alert":"Hi"},"# + members.map { #""\#($0)":null"# }.joined(separator: ",") + "}"
        let report = Linter(configuration: LintConfiguration(maximumFindingsPerRule: 1_000)).lint(body)
        let nulls = report.diagnostics.filter { $0.rule == .customValueNull }
        #expect(Set(nulls.compactMap { $0.pointer?.tokens.last }) == Set(keys) && nulls.count == keys.count, "\(members)")
        for finding in nulls {
            let key = try #require(finding.pointer?.tokens.last)
            let last = try #require(body.range(of: #""\#(key)":null"#, options: .backwards))
            #expect(finding.location?.offset == body.utf8.distance(from: body.utf8.startIndex, to: last.lowerBound) + key.utf8.count + 3, "\(key) in \(members)")
        }
    }

    /// A body of many missing commas: the parser describes as many errors as the cap lists and
    /// counts the rest, so the report lists the first `cap` errors, in order, and one finding
    /// that counts the others.
    @Test("syntax errors past the cap are counted", arguments: [(300, 100), (40, 10), (10, 100)])
    func syntaxErrorsPastTheCapAreCounted(members: Int, cap: Int) throws {
        let body = #"{"aps":{"alert":"Hi"} "# + (0..<members).map { #""k\#($0)":1"# }.joined(separator: " ") + "}"
        let report = Linter(configuration: LintConfiguration(maximumFindingsPerRule: cap)).lint(body)
        let syntax = report.diagnostics.filter { $0.rule == .invalidJSON }
        let listed = syntax.filter { !$0.message.contains("not listed") }
        #expect(listed.count == min(members, cap))
        // Each listed error is at the key whose comma is missing, in order.
        let keyOffsets = (0..<members).map { index in
            body.utf8.distance(from: body.utf8.startIndex, to: body.range(of: #""k\#(index)":"#)!.lowerBound.samePosition(in: body.utf8)!)
        }
        #expect(listed.map { $0.location?.offset } == keyOffsets.prefix(min(members, cap)).map { $0 })
        #expect(report.unlistedCount == max(0, members - cap))
        #expect(syntax.contains { $0.message.contains("and \(members - cap) more finding") } == (members > cap))
    }

    /// A key repeated past the cap: the values the repetition hides (no reader keeps them) take
    /// no room under a rule's cap, so what is said about the value readers keep is listed, once,
    /// at the last occurrence; nothing is counted as left out.
    @Test("findings in values a repeated key hides take no room", arguments: [2, 150, 600])
    func hiddenValuesTakeNoRoomUnderTheCap(repeats: Int) throws {
        let body = #"{"aps":{"alert":"Hi"},"# + Array(repeating: #""badge":1"#, count: repeats).joined(separator: ",") + "}"
        let report = Linter().lint(body)
        let lastKey = try #require(body.utf8.indices.last { body.utf8[$0...].starts(with: #""badge""#.utf8) })
        let lastOffset = body.utf8.distance(from: body.utf8.startIndex, to: lastKey)
        let outside = report.diagnostics.filter { $0.rule == .appleKeyOutsideAPS }
        let repeated = report.diagnostics.filter { $0.rule == .duplicateKey }
        #expect(outside.count == 1 && outside.first?.location?.offset == lastOffset, "\(outside.map(\.message))")
        #expect(repeated.count == 1 && repeated.first?.location?.offset == lastOffset, "\(repeated.map(\.message))")
        #expect(report.unlistedCount == 0)
        #expect(!report.diagnostics.contains { $0.message.contains("not listed") })
    }
}

/// "Did you mean" against a reference: for misspellings of every aps key (one or two random
/// edits), the suggestion is the nearest aps key within its allowance (one edit under six
/// characters, two from six; the first in declaration order on a tie), by a plain
/// optimal-string-alignment distance written here, with no pruning.
@Suite("Key suggestions", .ownThreads)
struct KeySuggestionTests {
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in stride(from: 1, through: a.count, by: 1) {
            for j in stride(from: 1, through: b.count, by: 1) {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1) }
            }
        }
        return table[a.count][b.count]
    }

    @Test func suggestionsAreTheNearestKeyWithinItsAllowance() throws {
        var generator = SystemRandomNumberGenerator()
        let names = APSKey.keys.map(\.description)
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        var checked = 0
        for name in names {
            for _ in 0..<40 {
                var key = Array(name)
                for _ in 0..<Int.random(in: 1...2, using: &generator) {
                    let at = Int.random(in: 0..<key.count, using: &generator)
                    switch Int.random(in: 0..<4, using: &generator) {
                    case 0: key[at] = letters.randomElement(using: &generator)!
                    case 1: key.insert(letters.randomElement(using: &generator)!, at: at)
                    case 2 where key.count > 2: key.remove(at: at)
                    default: if at + 1 < key.count { key.swapAt(at, at + 1) }
                    }
                }
                let text = String(key)
                // Only lowercase letters and single inner dashes: spelt as normalized.
                guard !names.contains(text), !text.hasPrefix("apns"), !text.hasPrefix("-"), !text.hasSuffix("-"), !text.contains("--") else { continue }
                var best: (name: String, distance: Int)?
                for candidate in names {
                    let allowed = candidate.count >= 6 ? 2 : 1
                    let found = Self.distance(key, Array(candidate))
                    if found <= allowed, found < best?.distance ?? .max { best = (candidate, found) }
                }
                let report = Linter().lint(#"{"aps":{"alert":"Hi","\#(text)":1}}"#)
                let finding = try #require(report.diagnostics.first { $0.rule == .unknownAPSKey }, "\(text)")
                if let best {
                    #expect(finding.message.contains("did you mean \"\(best.name)\"?"), "\(text): \(finding.message)")
                } else {
                    #expect(!finding.message.contains("did you mean"), "\(text): \(finding.message)")
                }
                checked += 1
            }
        }
        #expect(checked > names.count * 20)
    }
}
