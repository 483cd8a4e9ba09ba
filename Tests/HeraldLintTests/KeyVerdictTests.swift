@testable import HeraldLint
import HeraldJSON
import Testing
import HeraldTestSupport

/// The verdicts kept on short key names, and the top-level keys lint passes over without a
/// closer look, against what each key should get on its own.
@Suite(.ownThreads) struct KeyVerdictTests {
    /// Whatever the check says, the kept verdict says the same for the same bytes: keys of 1 to
    /// 16 bytes drawn from a few letters (`a`, `b` and the zero byte, so that keys differ only in
    /// their length, their first word or their second), each with a verdict drawn at random,
    /// asked 20,000 times. Half the runs repeat a few keys that share their first eight bytes
    /// (8 keys for 16 slots: they meet in slots), half take any of them.
    @Test func keptVerdictsAreTheChecksVerdicts() {
        var generator = SeededGenerator(seed: 20_261_204)
        let letters = Array("ab\u{0}".utf8)
        func word(_ count: Int) -> [UInt8] { (0..<count).map { _ in letters.randomElement(using: &generator)! } }
        var pool: [[UInt8]: Bool] = [:]
        var families: [[[UInt8]]] = []
        while pool.count < 400 {
            if families.count < 40 {
                let head = word(8)
                let family = (0..<8).map { _ in head + word(Int.random(in: 0...8, using: &generator)) }
                families.append(family)
                for key in family { pool[key] = Bool.random(using: &generator) }
            } else {
                pool[word(Int.random(in: 1...16, using: &generator))] = Bool.random(using: &generator)
            }
        }
        let keys = Array(pool.keys).sorted { $0.lexicographicallyPrecedes($1) }
        var asked = 0, checked = 0
        for run in 0..<200 {
            var verdicts = KeyVerdicts()
            let choices = run % 2 == 0 ? families[run / 2 % families.count] + keys.shuffled(using: &generator).prefix(2) : keys
            for _ in 0..<100 {
                let key = choices.randomElement(using: &generator)!
                let answer = key.withUnsafeBytes { raw in
                    verdicts.verdict(raw) { bytes in
                        checked += 1
                        return pool[Array(bytes)]!
                    }
                }
                #expect(answer == pool[key]!, "\(key)")
                asked += 1
            }
        }
        // The kept verdicts were used (otherwise this says nothing about them).
        #expect(asked == 20_000 && checked < 15_000, "\(checked) checks for \(asked) keys")
    }

    /// The table is consulted while keys repeat and given up when they do not: the keys of a
    /// list of 40 objects are checked a few times, not 160; 100 distinct keys are each checked
    /// once, and the ones past the 32nd go straight to the check.
    @Test func theTableIsUsedOnlyWhileKeysRepeat() {
        func checks(_ keys: [String]) -> Int {
            var verdicts = KeyVerdicts()
            var calls = 0
            for key in keys {
                _ = Array(key.utf8).withUnsafeBytes { raw in
                    verdicts.verdict(raw) { _ in
                        calls += 1
                        return false
                    }
                }
            }
            return calls
        }
        let item = ["sku", "name", "price", "inStock"]
        #expect(checks(Array((0..<40).map { _ in item }.joined())) <= 8)
        let distinct = (0..<100).map { "key\($0)" }
        #expect(checks(distinct) == 100)
        // After the table is given up, a repeat is checked again.
        #expect(checks(distinct + distinct) == 200)
    }

    /// The pointers of the sensitive-key-name findings in `body`.
    static func keyNameFindings(_ body: String) -> [String] {
        Linter().lint(body).diagnostics.filter { $0.rule == .sensitiveKeyName }.compactMap { $0.pointer?.description }.sorted()
    }

    /// A list of objects whose keys repeat, some named like secrets: every such key is reported in
    /// every object it is in, whatever came before it (at most 9 objects of at most 10 secrets:
    /// under the rule's cap of 100 findings). The keys include pairs that share their
    /// first eight bytes (creditcard and creditcaps) or their first eight and a length
    /// (abcdefghpassword and abcdefghpassXord), keys longer than 16 bytes, and more distinct keys
    /// than the table has slots; which are secrets is written by hand from the rule.
    @Test func repeatedKeysInAListAreEachJudged() throws {
        let secrets = ["password", "api_key", "apiKey", "pin", "ssn", "userSecret", "creditcard", "abcdefghpassword", "refreshTokenForTheUser", "IBAN"]
        let plain = ["sku", "name", "price", "inStock", "pinned", "spinner", "creditcaps", "abcdefghpassXord", "thumbnailURL", "aVeryLongHarmlessKeyName", "title", "count", "ab", "x"]
        var generator = SeededGenerator(seed: 42)
        for round in 0..<30 {
            var expected: [String] = []
            var items: [String] = []
            for index in 0..<Int.random(in: 1...9, using: &generator) {
                // Each object takes its keys from a small set in most rounds (as lists do), from
                // all of them in others.
                let pool = (round % 3 == 0 ? secrets + plain : Array((secrets.prefix(3) + plain.prefix(4)))).shuffled(using: &generator)
                let keys = pool.prefix(Int.random(in: 1...pool.count, using: &generator))
                items.append("{" + keys.map { #""\#($0)":"v\#(index)""# }.joined(separator: ",") + "}")
                expected += keys.filter(secrets.contains).map { "/items/\(index)/\($0)" }
            }
            let body = #"{"aps":{"alert":"Order update"},"items":["# + items.joined(separator: ",") + "]}"
            #expect(Self.keyNameFindings(body) == expected.sorted(), "round \(round)")
        }
    }

    /// Each kind of top-level key lint has something to say about, among 100 keys of the app's
    /// own, at a random place: it is reported as it is alone, and none of the others is. A key
    /// is compared with "Simulator Target Bundle" when its text is 15 to 40 bytes: 40 bytes
    /// within an edit of it are reported, 41 are not looked at.
    @Test func everyTopLevelKeyIsJudgedAmongMany() {
        let near40 = "Simulator Target Bundl" + String(repeating: "_", count: 18)
        let cases: [(member: String, rule: RuleID?, pointer: String)] = [
            (#""badge":3"#, .appleKeyOutsideAPS, "/badge"),
            (#""loc-key":"GREETING""#, .appleKeyOutsideAPS, "/loc-key"),
            (#""content_available":1"#, .appleKeyOutsideAPS, "/content_available"),
            (#""note":null"#, .customValueNull, "/note"),
            (#""Simulator Target Bundle":"com.example.app""#, .simulatorTargetBundle, "/Simulator Target Bundle"),
            (#""WatchKit Simulator Actions":[]"#, .watchKitSimulatorActions, "/WatchKit Simulator Actions"),
            (#""Simulator Target Bundl":"x""#, .simulatorKeyMisspelled, "/Simulator Target Bundl"),
            ("\"\(near40)\":\"x\"", .simulatorKeyMisspelled, "/\(near40)"),
            ("\"\(near40)_\":\"x\"", nil, ""),
        ]
        var generator = SeededGenerator(seed: 7)
        for (member, rule, pointer) in cases {
            var members = (0..<100).map { #""k\#(1000 + $0)":\#($0)"# }
            members.insert(member, at: Int.random(in: 0...members.count, using: &generator))
            let body = #"{"aps":{"alert":"Hi"},"# + members.joined(separator: ",") + "}"
            let diagnostics = Linter().lint(body).diagnostics
            if let rule {
                #expect(diagnostics.filter { $0.rule == rule }.map { $0.pointer?.description } == [pointer], "\(member)")
            } else {
                #expect(!diagnostics.contains { $0.rule == .simulatorKeyMisspelled }, "\(member)")
            }
            #expect(!diagnostics.contains { $0.pointer?.description.hasPrefix("/k") == true }, "\(member)")
        }
        // `aps` spelled with an escape is aps: not missing, and a key beside it is still judged.
        let escaped = Linter().lint(#"{"k000":1,"\u0061ps":{"alert":"Hi"},"badge":2}"#).diagnostics
        #expect(!escaped.contains { $0.rule == .apsMissing })
        #expect(escaped.filter { $0.rule == .appleKeyOutsideAPS }.map { $0.pointer?.description } == ["/badge"])
    }
}
