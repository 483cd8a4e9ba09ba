@testable import HeraldLint
import Testing
import HeraldTestSupport

/// The recognisers' single-pass shortcuts against what they stand for.
@Suite(.ownThreads) struct SensitiveDataTests {
    /// Each kind of credential is found wherever it starts in a long value: at every offset of
    /// the first 40, with 0, 1 or 17 bytes after it, after a filler of identifier characters, and
    /// nothing is found in the filler alone.
    @Test func credentialsAreFoundAtEveryOffset() {
        let credentials: [(String, String)] = [
            ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl", "a JSON Web Token"),
            ("Bearer abcdefghijklmnop0123", "a bearer token"),
            ("sk_live_0123456789abcdefABCD", "an API key (sk_live_…)"),
            ("ghp_0123456789abcdefABCDEFGH", "an API key (ghp_…)"),
            ("AKIA0123456789ABCDEF", "an API key (AKIA…)"),
        ]
        for filler in ["x", "_"] {
            for (credential, kind) in credentials {
                for offset in 0..<40 {
                    for tail in [0, 1, 17] {
                        let text = String(repeating: filler, count: offset) + " " + credential + " " + String(repeating: filler, count: tail)
                        let found = Array(text.utf8).withUnsafeBytes { SensitiveData.token(in: $0) }
                        #expect(found == kind, "\(kind) after \(offset) × \(filler), \(tail) after")
                    }
                }
            }
            let plain = Array(String(repeating: filler, count: 3_900).utf8).withUnsafeBytes { SensitiveData.token(in: $0) }
            #expect(plain == nil)
        }
    }

    /// The sixteen-at-once filter of the credential scan marks exactly the pairs of bytes that
    /// begin a credential: `ey` (a JWT), `be` in any case (a bearer token) and each API key
    /// prefix's first two bytes. Every pair of bytes is tried at the first, eighth, ninth and
    /// last lane of a block, and each such pair at every lane.
    @Test func blockFilterMarksThePrefixes() {
        var starts: Set<[UInt8]> = [Array("ey".utf8), Array("be".utf8), Array("bE".utf8), Array("Be".utf8), Array("BE".utf8)]
        for slot in SensitiveData.apiKeyPrefixes.indices {
            let prefix = SensitiveData.apiKeyPrefixes[slot]
            starts.insert([prefix.utf8Start[0], prefix.utf8Start[1]])
        }
        #expect(starts.count == 11, "ey, be in 4 cases, sk, rk, gh, gi, xo, AK")
        func marks(_ first: UInt8, _ second: UInt8, at lane: Int) -> (UInt64, UInt64) {
            var block = [UInt8](repeating: 0, count: 17)
            block[lane] = first
            block[lane + 1] = second
            return block.withUnsafeBytes { SensitiveData.credentialStarts($0, at: 0) }
        }
        for first in UInt8.min...UInt8.max {
            for second in UInt8.min...UInt8.max {
                let expected = starts.contains([first, second])
                for lane in [0, 7, 8, 15] {
                    let (low, high) = marks(first, second, at: lane)
                    let mark = expected ? UInt64(0x80) << (8 * UInt64(lane % 8)) : 0
                    #expect(low == (lane < 8 ? mark : 0) && high == (lane < 8 ? 0 : mark), "\(first) \(second) at lane \(lane)")
                }
            }
        }
        for start in starts {
            for lane in 0..<16 {
                let (low, high) = marks(start[0], start[1], at: lane)
                let mark = UInt64(0x80) << (8 * UInt64(lane % 8))
                #expect(low == (lane < 8 ? mark : 0) && high == (lane < 8 ? 0 : mark), "\(start) at lane \(lane)")
            }
        }
    }

    /// The credential a string holds by the definitions, position by position from the start:
    /// `eyJ`, 10 base64url characters, `.`, `eyJ`, 10 more and `.` (a JWT); `bearer ` in any
    /// case and 16 characters of a bearer token; an API key's prefix and 16 base64url characters.
    static func credentialByDefinition(_ bytes: [UInt8]) -> String? {
        func run(from start: Int, _ isIn: (UInt8) -> Bool) -> Int {
            var end = start
            while end < bytes.count, isIn(bytes[end]) { end += 1 }
            return end - start
        }
        func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
        func base64URL(_ byte: UInt8) -> Bool { isLetter(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F }
        func has(_ text: String, at start: Int, ignoringCase: Bool = false) -> Bool {
            let needle = Array(text.utf8)
            guard start + needle.count <= bytes.count else { return false }
            return zip(bytes[start..<(start + needle.count)], needle).allSatisfy { ignoringCase ? $0 | 0x20 == $1 && isLetter($0) : $0 == $1 }
        }
        guard bytes.count >= 20 else { return nil }
        for start in 0..<(bytes.count - 3) {
            if has("eyJ", at: start) {
                let header = run(from: start, base64URL)
                let dot = start + header
                if header >= 10, dot + 4 < bytes.count, bytes[dot] == 0x2E, has("eyJ", at: dot + 1) {
                    let claims = run(from: dot + 1, base64URL)
                    if claims >= 10, dot + 1 + claims < bytes.count, bytes[dot + 1 + claims] == 0x2E { return "a JSON Web Token" }
                }
            }
            if has("bearer", at: start, ignoringCase: true), start + 6 < bytes.count, bytes[start + 6] == 0x20,
               run(from: start + 7, { base64URL($0) || Array(".~+/=".utf8).contains($0) }) >= 16 {
                return "a bearer token"
            }
            for prefix in ["sk_live_", "sk_test_", "rk_live_", "ghp_", "gho_", "github_pat_", "xoxb-", "xoxp-", "AKIA"]
            where has(prefix, at: start) && run(from: start + prefix.utf8.count, base64URL) >= 16 {
                return "an API key (\(prefix)…)"
            }
        }
        return nil
    }

    /// The credential scan against the definitions on 30,000 random strings of up to 120 bytes
    /// built from the patterns' pieces (prefixes cut short, runs of 9 to 17, dots, spaces,
    /// non-ASCII bytes), so that credentials start at every offset of a block and near the end.
    @Test func credentialScanMatchesItsDefinition() {
        var generator = SeededGenerator(seed: 20_261_204)
        let pieces = ["eyJ", "eyJhbGciOiJIUzI1", ".", " ", "Bearer ", "bEaReR ", "sk_live_", "sk_test_", "rk_live_", "ghp_", "gho_", "github_pat_",
                      "xoxb-", "xoxp-", "AKIA", "AKI", "sk_liv", "0123456789abcdef", "abcdefghi", "Q", "~+/=", "é", "xo", "gh", "ey"]
        var found = 0
        for round in 0..<30_000 {
            var bytes: [UInt8] = []
            while bytes.count < round % 121 { bytes += Array(pieces.randomElement(using: &generator)!.utf8) }
            let expected = Self.credentialByDefinition(bytes)
            if expected != nil { found += 1 }
            #expect(bytes.withUnsafeBytes { SensitiveData.token(in: $0) } == expected, "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(found > 3_000, "\(found) strings hold a credential")
    }

    /// Runs of 9 to 14 bytes of each class, at every offset of strings of 10 to 80 bytes of a
    /// byte of no class: a card is possible from a run of 13, a credential from 10, wherever the
    /// run falls against the 16-byte blocks and the last block.
    @Test func runsAreFoundAtEveryOffset() {
        // A digit and a dash are of both classes, a letter of the credential's only.
        for member in [UInt8(ascii: "7"), UInt8(ascii: "-"), UInt8(ascii: "k")] {
            let isCardCharacter = member != UInt8(ascii: "k")
            for count in 10...80 {
                for length in 8...15 where length <= count {
                    for start in 0...(count - length) {
                        var bytes = [UInt8](repeating: UInt8(ascii: "!"), count: count)
                        for index in start..<(start + length) { bytes[index] = member }
                        let traits = bytes.withUnsafeBytes { SensitiveData.traits(of: $0) }
                        #expect(traits.mayHoldCard == (isCardCharacter && length >= 13), "\(length) × \(member) at \(start) of \(count)")
                        #expect(traits.hasTokenStart == (length >= 10), "\(length) × \(member) at \(start) of \(count)")
                        #expect(!traits.hasAt)
                    }
                }
            }
        }
    }

    /// The longest run of bytes satisfying `isIn`, byte by byte.
    static func longestRun(_ bytes: [UInt8], _ isIn: (UInt8) -> Bool) -> Int {
        var run = 0, longest = 0
        for byte in bytes {
            run = isIn(byte) ? run + 1 : 0
            longest = max(longest, run)
        }
        return longest
    }

    /// The eight-bytes-at-a-time pass against its definition, byte by byte: a card is possible
    /// where 13 digits, spaces and dashes follow each other, a credential where 10 base64url
    /// characters do, an e-mail where there is an `@`; on strings of every length from 0 to 70
    /// (runs crossing words at every offset, and a last partial word), with non-ASCII bytes,
    /// and on long identifiers up to 400 bytes with card-like runs and `@` anywhere.
    @Test func wordPassMatchesItsDefinition() {
        var generator = SeededGenerator(seed: 20_261_202)
        let alphabets = [Array("0123456789 -".utf8), Array("0123456789 - aZ_@.".utf8), Array("abcXYZ09-_".utf8) + [0xC3, 0xA9, 0x80, 0xFF, 0x7F, 0x60, 0x7B]]
        // Long values too: a long identifier's run comes early, and what follows is read for
        // cards and `@` alone, so a card or an `@` is put anywhere after it.
        let identifier = Array("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx0123 -aZ".utf8)
        for round in 0..<40_000 {
            let long = round >= 30_000
            let alphabet = long ? identifier : alphabets[round % alphabets.count]
            var bytes = (0..<(long ? round % 401 : round % 71)).map { _ in alphabet.randomElement(using: &generator)! }
            if long, round % 3 == 0 { bytes.insert(contentsOf: Array("4111 1111 1111".utf8).prefix(round % 15), at: Int.random(in: 0...bytes.count, using: &generator)) }
            if long, round % 5 == 0 { bytes.insert(0x40, at: Int.random(in: 0...bytes.count, using: &generator)) }
            let digitOrSeparator = Self.longestRun(bytes) { $0 &- 0x30 < 10 || $0 == 0x20 || $0 == 0x2D }
            let base64URL = Self.longestRun(bytes) { SensitiveData.isBase64URL($0) }
            let traits = bytes.withUnsafeBytes { SensitiveData.traits(of: $0) }
            #expect(traits.mayHoldCard == (digitOrSeparator >= 13), "\(bytes)")
            #expect(traits.hasTokenStart == (base64URL >= 10), "\(bytes)")
            #expect(traits.hasAt == bytes.contains(0x40), "\(bytes)")
        }
    }

    /// The first pass's verdicts never rule out what the detectors find: on random strings of
    /// digits, separators, letters and `@`, a card found means a possible card, an e-mail an
    /// `@`, a credential a base64url run of 10; and the pass finds a card where one was put.
    @Test func theFirstPassNeverRulesOutAFinding() {
        var generator = SeededGenerator(seed: 20_261_201)
        let alphabet = Array("0123456789 - - @ab.eyJ_sk_live_AKIAbearer x".utf8)
        var cards = 0, emails = 0, tokens = 0
        for round in 0..<20_000 {
            var bytes = (0..<Int.random(in: 0...80, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            if round % 11 == 0 { bytes.insert(contentsOf: Array("sk_live_0a1b2c3d4e5f6g7h ".utf8), at: Int.random(in: 0...bytes.count, using: &generator)) }
            if round % 7 == 0 { bytes.insert(contentsOf: Array("4111 1111-1111 1111".utf8), at: Int.random(in: 0...bytes.count, using: &generator)) }
            bytes.withUnsafeBytes { raw in
                let traits = SensitiveData.traits(of: raw)
                if SensitiveData.cardNumber(in: raw) != nil {
                    cards += 1
                    #expect(traits.mayHoldCard, "\(String(decoding: bytes, as: UTF8.self))")
                }
                if SensitiveData.emailRange(in: raw) != nil {
                    emails += 1
                    #expect(traits.hasAt)
                }
                if SensitiveData.token(in: raw) != nil {
                    tokens += 1
                    #expect(traits.hasTokenStart, "\(String(decoding: bytes, as: UTF8.self))")
                }
                if round % 7 == 0 { #expect(traits.mayHoldCard) }
            }
        }
        #expect(cards > 1_000 && emails > 100 && tokens > 100, "cards \(cards), e-mails \(emails), credentials \(tokens)")
    }

    static func card(_ text: String) -> String? {
        Array(text.utf8).withUnsafeBytes { SensitiveData.cardNumber(in: $0) }
    }

    /// Cards by hand from the definition: 13 to 19 digits, one space or dash between groups,
    /// a network's prefix, the Luhn check; twenty digits in a row are no card.
    @Test func cardNumbersByHand() {
        #expect(Self.card("4111111111111111") == "4111111111111111")
        #expect(Self.card("pay 4111 1111 1111 1111 now") == "4111111111111111")
        #expect(Self.card("4111-1111-1111-1111-") == "4111111111111111")
        #expect(Self.card("4111  1111 1111 1111") == nil, "two spaces end the run")
        #expect(Self.card("4111111111111112") == nil, "Luhn")
        #expect(Self.card("9111111111111111") == nil, "no network starts with 9")
        #expect(Self.card("41111111111111111111") == nil, "twenty digits")
        #expect(Self.card("x 378282246310005") == "378282246310005")
        // A space joins groups: "411111111111 1111" is one 16-digit run that fails Luhn; the
        // next card is found.
        #expect(Self.card("411111111111 1112 and 5555555555554444") == "5555555555554444")
        #expect(Self.card("1234567890 4012888888881881") == nil, "the space joins them: 26 digits")
        #expect(Self.card("1234567890, 4012888888881881") == "4012888888881881")
    }
}
