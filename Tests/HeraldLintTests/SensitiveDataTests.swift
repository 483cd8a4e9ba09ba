@testable import HeraldLint
import Testing
import HeraldTestSupport

/// The recognisers' single-pass shortcuts against what they stand for.
@Suite(.ownThreads) struct SensitiveDataTests {
    /// The two-byte filter lets through exactly the pairs that begin a credential: `ey` (a JWT),
    /// `be` in any case (a bearer token) and each API key prefix's first two bytes.
    @Test func credentialFilterMatchesThePrefixes() {
        var starts: Set<[UInt8]> = [Array("ey".utf8), Array("be".utf8), Array("bE".utf8), Array("Be".utf8), Array("BE".utf8)]
        for slot in SensitiveData.apiKeyPrefixes.indices {
            let prefix = SensitiveData.apiKeyPrefixes[slot]
            starts.insert([prefix.utf8Start[0], prefix.utf8Start[1]])
        }
        for first in UInt8.min...UInt8.max {
            for second in UInt8.min...UInt8.max {
                #expect(SensitiveData.mayStartCredential(first, second) == starts.contains([first, second]), "\(first) \(second)")
            }
        }
    }

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
