import HeraldJSON

/// Recognisers for customer information and secrets in custom data, working on UTF-8 bytes.
///
/// They aim at what leaks in practice and keep false positives low: a card number must be 13 to 19
/// digits (spaces or dashes between groups allowed), pass the Luhn check, and start like a card
/// network's numbers (so millisecond timestamps, which start with 1, do not match).
enum SensitiveData {
    /// What one pass over a string says about which detectors could match: whether it has a run
    /// of 13 digits, spaces and dashes (a card, 13 digits or more with single spaces or dashes
    /// between groups, needs one),
    /// whether there is an `@` (an e-mail needs one), and whether a run of base64url characters
    /// reaches 10 (every credential recognised has one).
    static func traits(of bytes: UnsafeRawBufferPointer) -> (mayHoldCard: Bool, hasAt: Bool, hasTokenStart: Bool) {
        // Eight bytes at a time (random base64 of 4 KB, an encrypted body for an extension, and
        // long identifiers are common values, and every string of custom data takes this pass):
        // each class is a mask with a byte's high bit set where the byte is of the class, and a
        // run is carried from word to word by counting the set bytes at each end of a word. A run
        // inside one word is at most 8 bytes, shorter than either threshold.
        let count = bytes.count
        // Most values are shorter than either run (ids, names, flags as strings): only an `@`
        // can matter.
        if count < 10 {
            for byte in bytes where byte == UInt8(ascii: "@") { return (false, true, false) }
            return (false, false, false)
        }
        var cardRun = 0, tokenRun = 0
        var mayHoldCard = false, hasAt = false, hasTokenStart = false
        var offset = 0
        while offset < count {
            // The last bytes are padded with zeros (of no class: the runs end there).
            let word = bytes.partialWord(from: offset)
            offset += 8
            let classes = WordClasses(word)
            if classes.at != 0 { hasAt = true }
            // A card is 13 digits or more with single spaces or dashes between groups: a run of
            // 13 digits, spaces and dashes is needed (``cardNumber(in:)`` says whether it is one).
            if !mayHoldCard { mayHoldCard = Self.carry(&cardRun, classes.cardCharacter, reaching: 13) }
            if !hasTokenStart { hasTokenStart = Self.carry(&tokenRun, classes.base64URL, reaching: 10) }
            if mayHoldCard, hasTokenStart, hasAt { break }
            // A token's run found (early in a long identifier or base64): the rest of the value
            // is read for the other two only.
            if hasTokenStart { break }
        }
        while offset < count, !(mayHoldCard && hasAt) {
            let word = bytes.partialWord(from: offset)
            offset += 8
            let ascii = ~word & WordClasses.all
            let low = word & ~WordClasses.all
            if !hasAt, WordClasses.within(low, 0x40, 0x40, ascii) != 0 { hasAt = true }
            if !mayHoldCard { mayHoldCard = Self.carry(&cardRun, WordClasses.cardCharacters(low, ascii), reaching: 13) }
        }
        return (mayHoldCard || cardRun >= 13, hasAt, hasTokenStart || tokenRun >= 10)
    }

    /// Carries a run through one word's class mask: whether a run reached `threshold` ending in
    /// this word; `run` becomes the run the word ends with.
    @inline(__always)
    private static func carry(_ run: inout Int, _ mask: UInt64, reaching threshold: Int) -> Bool {
        if mask == WordClasses.all {
            run += 8
            return false
        }
        let gaps = ~mask & WordClasses.all
        let reached = run + gaps.trailingZeroBitCount / 8 >= threshold
        run = gaps.leadingZeroBitCount / 8
        return reached
    }

    /// The classes of eight bytes at once: in each mask, a byte's high bit is set where the byte
    /// (the word's lowest byte first) is of the class. Bytes of 0x80 and above are of none.
    struct WordClasses {
        static let all: UInt64 = 0x8080_8080_8080_8080
        private static let ones: UInt64 = 0x0101_0101_0101_0101
        /// Digits, spaces and dashes.
        var cardCharacter: UInt64
        /// Letters, digits, `-` and `_`.
        var base64URL: UInt64
        /// `@`.
        var at: UInt64

        @inline(__always)
        init(_ word: UInt64) {
            let ascii = ~word & Self.all
            let low = word & ~Self.all
            let digit = Self.within(low, 0x30, 0x39, ascii)
            let dash = Self.within(low, 0x2D, 0x2D, ascii)
            let letter = Self.within(low | 0x2020_2020_2020_2020, 0x61, 0x7A, ascii)
            cardCharacter = Self.cardCharacters(low, ascii)
            base64URL = letter | digit | dash | Self.within(low, 0x5F, 0x5F, ascii)
            at = Self.within(low, 0x40, 0x40, ascii)
        }

        /// Digits, spaces and dashes (``cardCharacter``) of a word's `low` bits and `ascii` mask.
        @inline(__always)
        static func cardCharacters(_ low: UInt64, _ ascii: UInt64) -> UInt64 {
            within(low, 0x30, 0x39, ascii) | within(low, 0x2D, 0x2D, ascii) | within(low, 0x20, 0x20, ascii)
        }

        /// The high bit of each byte of `low` (a word's low seven bits of each byte) that is in
        /// `lo...hi`, among the bytes `ascii` marks. A byte x < 0x80 is in lo...hi when x + (0x80
        /// - lo) reaches 0x80 and x + (0x80 - hi - 1) does not; neither sum carries into the
        /// next byte.
        @inline(__always)
        static func within(_ low: UInt64, _ lo: UInt8, _ hi: UInt8, _ ascii: UInt64) -> UInt64 {
            (low &+ ones &* UInt64(0x80 - lo)) & ~(low &+ ones &* UInt64(0x7F - hi)) & ascii
        }
    }

    /// The two-byte filter of the credential scan: bit `c` of entry `first` and of entry
    /// `256 + second` are both set where `first` and `second` begin a credential (`ey`, `be` in
    /// any case, and the first two bytes of each of ``apiKeyPrefixes``), one bit per pair of
    /// bytes pattern.
    static let credentialPairs: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 512)
        var starts: [(UInt8, UInt8)] = [(UInt8(ascii: "e"), UInt8(ascii: "y"))]
        for first in "bB".utf8 { for second in "eE".utf8 { starts.append((first, second)) } }
        for slot in apiKeyPrefixes.indices { starts.append((apiKeyPrefixes[slot].utf8Start[0], apiKeyPrefixes[slot].utf8Start[1])) }
        // Pairs that share a first byte share a bit, so a bit stands for one first byte's
        // seconds; "bB" × "eE" are one bit.
        var bits: [UInt8: UInt8] = [:]
        for (first, second) in starts {
            let key = first | 0x20 == UInt8(ascii: "b") ? UInt8(ascii: "b") : first
            let bit = bits[key] ?? UInt8(1) << UInt8(bits.count)
            bits[key] = bit
            table[Int(first)] |= bit
            table[256 + Int(second)] |= bit
        }
        return table
    }()

    /// Whether `first` and `second` may begin a credential (``credentialPairs``).
    static func mayStartCredential(_ first: UInt8, _ second: UInt8) -> Bool {
        credentialPairs[Int(first)] & credentialPairs[256 + Int(second)] != 0
    }

    /// A likely payment card number in `bytes`: a run of 13 to 19 digits (a single space or dash
    /// may separate groups) with a card network's prefix that passes the Luhn check. A run longer
    /// than 19 digits is cut after its 20th and counting starts again.
    ///
    /// One pass, no allocation: it runs on every number of 13 bytes or more, and on the strings
    /// whose ``traits(of:)`` say they may hold a card.
    static func cardNumber(in bytes: UnsafeRawBufferPointer) -> String? {
        var digits = InlineArray<20, UInt8>(repeating: 0)
        var count = 0
        var lastWasSeparator = false
        for byte in bytes {
            if byte &- UInt8(ascii: "0") < 10 {
                digits[count] = byte &- UInt8(ascii: "0")
                count += 1
                lastWasSeparator = false
                // Twenty digits are no card: drop them and go on.
                if count == 20 { count = 0 }
            } else if (byte == UInt8(ascii: " ") || byte == UInt8(ascii: "-")) && count > 0 && !lastWasSeparator {
                lastWasSeparator = true
            } else {
                if count >= 13, let found = card(digits, count: count) { return found }
                count = 0
                lastWasSeparator = false
            }
        }
        return count >= 13 ? card(digits, count: count) : nil
    }

    /// The first `count` of `digits` as a card number, if they are one.
    private static func card(_ digits: InlineArray<20, UInt8>, count: Int) -> String? {
        let span = digits.span.extracting(0..<count)
        guard count <= 19, looksLikeCardPrefix(span), luhnValid(span) else { return nil }
        var text = ""
        for index in span.indices { text.unicodeScalars.append(Unicode.Scalar(span[index] + UInt8(ascii: "0"))) }
        return text
    }

    /// Prefixes of Visa, Mastercard, American Express, Discover, JCB, Diners Club and UnionPay.
    static func looksLikeCardPrefix(_ digits: Span<UInt8>) -> Bool {
        guard digits.count >= 4 else { return false }
        let two = Int(digits[0]) * 10 + Int(digits[1])
        let three = two * 10 + Int(digits[2])
        let four = three * 10 + Int(digits[3])
        switch digits[0] {
        case 4: return true
        case 5: return (51...55).contains(two)
        case 2: return (2221...2720).contains(four)
        case 3: return [34, 37, 35, 30, 36, 38].contains(two)
        case 6: return four == 6011 || two == 65 || two == 62 || (644...649).contains(three)
        default: return false
        }
    }

    /// The Luhn checksum used by payment cards.
    static func luhnValid(_ digits: Span<UInt8>) -> Bool {
        var sum = 0
        for offset in 0..<digits.count {
            var value = Int(digits[digits.count - 1 - offset])
            if offset % 2 == 1 {
                value *= 2
                if value > 9 { value -= 9 }
            }
            sum += value
        }
        return sum % 10 == 0
    }

    /// Where a likely e-mail address is in `bytes` (no String is made: a finding may be counted
    /// and never listed).
    static func emailRange(in bytes: UnsafeRawBufferPointer) -> Range<Int>? {
        func isLocal(_ byte: UInt8) -> Bool {
            isAlphanumeric(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "%")
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
        }
        func isDomain(_ byte: UInt8) -> Bool { isAlphanumeric(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") }
        for at in 0..<bytes.count where bytes[at] == UInt8(ascii: "@") {
            var start = at
            while start > 0, isLocal(bytes[start - 1]) { start -= 1 }
            var end = at + 1
            while end < bytes.count, isDomain(bytes[end]) { end += 1 }
            while end > at + 1, bytes[end - 1] == UInt8(ascii: ".") { end -= 1 }
            guard start < at, end > at + 1 else { continue }
            let domain = (at + 1)..<end
            guard let lastDot = domain.last(where: { bytes[$0] == UInt8(ascii: ".") }), lastDot > domain.lowerBound else { continue }
            let topLevel = (lastDot + 1)..<end
            guard topLevel.count >= 2, topLevel.allSatisfy({ isLetter(bytes[$0]) }) else { continue }
            return start..<end
        }
        return nil
    }

    /// A likely credential: a JWT, a bearer token, or a well-known API key format. One pass over
    /// the bytes looks for the first byte of each pattern, and every check at a position is
    /// bounded: prefixes are compared in place, and the length of the base64url run from each
    /// position is measured once per run (a run of `s` or `eyJ` costs a pass, not a search from
    /// each of its bytes). This runs on every custom string of every payload.
    static func token(in bytes: UnsafeRawBufferPointer) -> String? {
        // The shortest credential recognised is a 4-byte prefix and 16 key characters.
        guard bytes.count >= 20 else { return nil }
        return credentialPairs.withUnsafeBufferPointer { pairs in token(in: bytes, pairs: pairs) }
    }

    private static func token(in bytes: UnsafeRawBufferPointer, pairs: UnsafeBufferPointer<UInt8>) -> String? {
        var runs = Base64URLRuns(bytes)
        // Two table loads a position rule out nearly all of them (a run of `x` or `s` among
        // them) before any prefix is compared.
        for start in 0..<(bytes.count - 3) where pairs[Int(bytes[start])] & pairs[256 + Int(bytes[start + 1])] != 0 {
            switch bytes[start] {
            case UInt8(ascii: "e"):
                if isJWT(bytes, at: start, runs: &runs) { return "a JSON Web Token" }
            case UInt8(ascii: "b"), UInt8(ascii: "B"):
                if asciiCaseInsensitiveMatch("bearer ", in: bytes, at: start) {
                    // At most 16 characters are needed to say yes: the scan stops there.
                    var end = start + 7
                    while end < bytes.count, end - (start + 7) < 16, isBase64URL(bytes[end]) || bytes[end] == UInt8(ascii: ".")
                        || bytes[end] == UInt8(ascii: "~") || bytes[end] == UInt8(ascii: "+") || bytes[end] == UInt8(ascii: "/")
                        || bytes[end] == UInt8(ascii: "=") {
                        end += 1
                    }
                    if end - (start + 7) >= 16 { return "a bearer token" }
                }
            case UInt8(ascii: "s"), UInt8(ascii: "r"), UInt8(ascii: "g"), UInt8(ascii: "x"), UInt8(ascii: "A"):
                for slot in apiKeyPrefixes.indices {
                    let prefix = apiKeyPrefixes[slot]
                    if prefix.utf8Start[0] == bytes[start], matches(prefix, in: bytes, at: start),
                       runs.length(from: start + prefix.utf8CodeUnitCount) >= 16 {
                        return "an API key (\(prefix)…)"
                    }
                }
            default:
                continue
            }
        }
        return nil
    }

    /// `eyJ…` (10+ base64url characters), `.`, `eyJ…` (10+), `.`: a JWT's header and claims.
    static func isJWT(_ bytes: UnsafeRawBufferPointer, at start: Int, runs: inout Base64URLRuns) -> Bool {
        guard matches("eyJ", in: bytes, at: start) else { return false }
        let header = runs.length(from: start)
        let dot = start + header
        guard header >= 10, dot + 4 < bytes.count, bytes[dot] == UInt8(ascii: "."), matches("eyJ", in: bytes, at: dot + 1) else { return false }
        let claims = runs.length(from: dot + 1)
        return claims >= 10 && dot + 1 + claims < bytes.count && bytes[dot + 1 + claims] == UInt8(ascii: ".")
    }

    /// Whether `needle` is at `start` (compared in place).
    static func matches(_ needle: StaticString, in bytes: UnsafeRawBufferPointer, at start: Int) -> Bool {
        let count = needle.utf8CodeUnitCount
        guard start >= 0, start + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[start + offset] != needle.utf8Start[offset] { return false }
        return true
    }

    /// Whether `needle` (lowercase ASCII) is at `start`, ignoring ASCII case.
    static func asciiCaseInsensitiveMatch(_ needle: StaticString, in bytes: UnsafeRawBufferPointer, at start: Int) -> Bool {
        let count = needle.utf8CodeUnitCount
        guard start + count <= bytes.count else { return false }
        for offset in 0..<count {
            let byte = bytes[start + offset]
            let folded = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
            if folded != needle.utf8Start[offset] { return false }
        }
        return true
    }

    static let apiKeyPrefixes: InlineArray<9, StaticString> = ["sk_live_", "sk_test_", "rk_live_", "ghp_", "gho_", "github_pat_", "xoxb-", "xoxp-", "AKIA"]

    /// Key names that say what they hold (compared as lowercase letters and digits, so
    /// `api_key`, `apiKey` and `API-KEY` are one name).
    ///
    /// Runs on every custom key, so it normalises into an inline buffer and only compares a word
    /// where the name has that word's first two letters.
    static func sensitiveKeyName(_ key: UnsafeRawBufferPointer) -> Bool {
        guard key.count >= 3 else { return false }
        // Most keys are already lowercase letters and digits: match them in place.
        if key.allSatisfy({ $0 &- UInt8(ascii: "a") < 26 || $0 &- UInt8(ascii: "0") < 10 }) {
            return matchesSensitiveWord(key)
        }
        var name = InlineArray<64, UInt8>(repeating: 0)
        var count = 0
        for byte in key where isAlphanumeric(byte) {
            guard count < 64 else { break }
            name[count] = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
            count += 1
        }
        return name.span.withUnsafeBytes { matchesSensitiveWord(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }

    /// Whether a normalised name (lowercase letters and digits) is or contains a secret's name.
    static func matchesSensitiveWord(_ name: UnsafeRawBufferPointer) -> Bool {
        let count = name.count
        if count == 3 {
            // The three bytes as one word against each short name's.
            let word = UInt32(name[0]) | UInt32(name[1]) << 8 | UInt32(name[2]) << 16
            let words = sensitiveNameWords
            for slot in words.indices where words[slot] == word { return true }
            return false
        }
        guard count >= 4 else { return false }
        // The tables are read in place (a copy of the words is 336 bytes a key).
        for start in 0..<(count - 3) {
            let first = name[start] &- UInt8(ascii: "a")
            let second = name[start + 1] &- UInt8(ascii: "a")
            guard first < 26, second < 26, sensitiveBigrams[Int(first)] & (1 << UInt32(second)) != 0 else { continue }
            for slot in sensitiveWords.indices {
                let word = sensitiveWords[slot]
                if word.utf8CodeUnitCount <= count - start, word.utf8Start[0] == name[start], word.utf8Start[1] == name[start + 1],
                   matches(word, in: name, at: start) {
                    return true
                }
            }
        }
        return false
    }

    // The word lists are inline arrays of StaticString: trivial values, so reading them from many
    // threads touches no reference count.

    /// Names that mark a secret wherever they appear in a key.
    static let sensitiveWords: InlineArray<14, StaticString> = [
        "password", "passwd", "passphrase", "secret", "apikey", "accesstoken", "refreshtoken", "authtoken",
        "privatekey", "creditcard", "cardnumber", "socialsecurity", "bankaccount", "iban",
    ]

    /// Short names that mark a secret only as the whole key (`pin`, not `spinner`).
    static let sensitiveNames: InlineArray<5, StaticString> = ["ssn", "cvv", "cvc", "pin", "pwd"]

    /// ``sensitiveNames``, each's three bytes as one little-endian word.
    static let sensitiveNameWords: InlineArray<5, UInt32> = {
        var words = InlineArray<5, UInt32>(repeating: 0)
        let names = sensitiveNames
        for slot in names.indices {
            let start = names[slot].utf8Start
            words[slot] = UInt32(start[0]) | UInt32(start[1]) << 8 | UInt32(start[2]) << 16
        }
        return words
    }()

    /// Which first-two-letter pairs start a word of ``sensitiveWords``: bit `b` of entry `a`.
    static let sensitiveBigrams: InlineArray<26, UInt32> = {
        var bigrams = InlineArray<26, UInt32>(repeating: 0)
        let words = sensitiveWords
        for slot in words.indices {
            let word = words[slot]
            bigrams[Int(word.utf8Start[0] - UInt8(ascii: "a"))] |= 1 << UInt32(word.utf8Start[1] - UInt8(ascii: "a"))
        }
        return bigrams
    }()

    static func isAlphanumeric(_ byte: UInt8) -> Bool { isLetter(byte) || byte &- UInt8(ascii: "0") < 10 }
    static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) &- UInt8(ascii: "a") < 26 }
    static func isBase64URL(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}

/// The length of the base64url run from a position of a string. Runs are measured once and the
/// last two kept: the credential scan asks about the run it is in and, for a JWT, the one after
/// a dot, so every byte is measured at most twice and nothing is allocated (a table of run ends,
/// 4 bytes per byte, fell out of the caches on long values).
struct Base64URLRuns {
    private let bytes: UnsafeRawBufferPointer
    private var recent = (start: -1, end: -1)
    private var older = (start: -1, end: -1)

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// How many base64url characters follow `start`, itself included (0 when it is not one).
    mutating func length(from start: Int) -> Int {
        guard start < bytes.count, SensitiveData.isBase64URL(bytes[start]) else { return 0 }
        if start >= recent.start, start < recent.end { return recent.end - start }
        if start >= older.start, start < older.end { return older.end - start }
        var end = start + 1
        while end < bytes.count, SensitiveData.isBase64URL(bytes[end]) { end += 1 }
        older = recent
        recent = (start, end)
        return end - start
    }
}
