import HeraldJSON
import HeraldTestSupport
import Testing

/// Later duplicate keys, small objects (compared in place) and large ones (a hashed table), held
/// against Python's `json` reading the same text with every pair kept.
@Suite("Duplicate keys", .ownThreads)
struct DuplicateKeysTests {
    /// Keys that are equal only once decoded (`ab` and `a\u0062`, `é` and `\u00e9`), and many
    /// distinct ones.
    static let pool: [String] = [#"ab"#, #"a\u0062"#, #"é"#, #"\u00e9"#, #"cd"#, #"c\u0064"#, #"\""#, #"\u0022"#]
        + (0..<40).map { "k\($0)" }

    @Test(arguments: [2, 5, 31, 32, 33, 64, 200, 1_000])
    func laterDuplicatesAgreeWithPython(members: Int) throws {
        try ExternalTools.requirePython(modules: "json", package: "python3")
        var random = SeededGenerator(seed: UInt64(members))
        for _ in 0..<5 {
            try expectAgreement((0..<members).map { _ in Self.pool[Int(random.next() % UInt64(Self.pool.count))] })
        }
    }

    /// Keys each a prefix of the next (`x`, `xx`, … 300 of them, past the 16 bytes compared
    /// inline): two that meet in the table agree up to the shorter one's end, so a comparison
    /// that stops short of it calls them the same.
    @Test(arguments: [64, 1_000])
    func keysThatArePrefixesOfOthersAreNotDuplicates(members: Int) throws {
        try ExternalTools.requirePython(modules: "json", package: "python3")
        var random = SeededGenerator(seed: UInt64(members) &+ 7)
        for _ in 0..<5 {
            try expectAgreement((0..<members).map { _ in String(repeating: "x", count: 1 + Int(random.next() % 300)) })
        }
    }

    /// The later duplicates Herald finds in an object of `keys` (each holding its position) are
    /// those Python's `json` finds, in order; the values they hide (a later member has the same
    /// key) are those Python's finds, with the quick hash and with SipHash alone.
    private func expectAgreement(_ keys: [String]) throws {
        let text = "{" + keys.enumerated().map { "\"\($1)\":\($0)" }.joined(separator: ",") + "}"
        let document = try JSONDocument(parsing: Array(text.utf8))
        // Each later duplicate as the number it holds: its position among the members.
        let herald = document.laterDuplicateMembers().map { $0.value.sourceText }
        let python = try ExternalTools.python(
            """
            import json, sys
            later, hidden = [], []
            def pairs(items):
                seen = set()
                for position, (key, value) in enumerate(items):
                    if key in seen: later.append(value)
                    seen.add(key)
                    if any(other == key for other, _ in items[position + 1:]): hidden.append(value)
                return {}
            json.loads(sys.stdin.read(), object_pairs_hook=pairs)
            print(",".join(str(v) for v in later))
            print(",".join(str(v) for v in sorted(hidden)))
            """, stdin: Array(text.utf8))
        let lines = String(decoding: python, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(herald.joined(separator: ",") == lines[0], "\(text.prefix(200))")
        for budget in [nil, 0] {
            let repeated = document.repeatedKeys(quickProbeBudget: budget)
            let hidden = repeated.hiddenValues.compactMap { document.node(at: Int($0))?.sourceText }.compactMap { Int($0) }.sorted()
            #expect(hidden.map(String.init).joined(separator: ",") == lines[1], "budget \(String(describing: budget)): \(text.prefix(200))")
            #expect(repeated.laterKeys.map { document.node(at: Int($0) + 1)?.sourceText ?? "" } == herald)
        }
    }
}
