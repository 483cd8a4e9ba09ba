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
        let count = bytes.count
        // Most values are shorter than either run (ids, names, flags as strings): only an `@`
        // can matter.
        if count < 10 {
            for byte in bytes where byte == UInt8(ascii: "@") { return (false, true, false) }
            return (false, false, false)
        }
        if count < 16 { return shortTraits(of: bytes) }
        // Sixteen bytes at a time (random base64 of 4 KB, an encrypted body for an extension, and
        // long identifiers are common values, and every string of custom data takes this pass).
        // A run of 13 or of 10 bytes holds four that start at a multiple of 4 from a block's
        // start, so only where a block has four such bytes of a class is the run around them
        // measured (``runReaches(_:from:marks:quads:in:cardCharacters:)``). The last block is
        // the last 16 bytes: a run that ends there and is not found before has at least 10
        // bytes in it.
        var mayHoldCard = false, hasTokenStart = false
        var at = ByteLanes.Vector()
        var offset = 0
        while true {
            let lanes = bytes.loadUnaligned(fromByteOffset: offset, as: ByteLanes.Vector.self)
            let digit = ByteLanes.within(lanes, UInt8(ascii: "0"), count: 10)
            let dash = ByteLanes.equal(lanes, UInt8(ascii: "-"))
            at |= ByteLanes.equal(lanes, UInt8(ascii: "@"))
            if !mayHoldCard {
                let card = digit | dash | ByteLanes.equal(lanes, UInt8(ascii: " "))
                let (low, high) = ByteLanes.fullQuads(card)
                if low | high != 0 { mayHoldCard = runReaches(13, from: offset, marks: card, quads: (low, high), in: bytes, cardCharacters: true) }
            }
            if !hasTokenStart {
                let letter = ByteLanes.within(lanes | ByteLanes.Vector(repeating: 0x20), UInt8(ascii: "a"), count: 26)
                let base64URL = letter | digit | dash | ByteLanes.equal(lanes, UInt8(ascii: "_"))
                let (low, high) = ByteLanes.fullQuads(base64URL)
                if low | high != 0 { hasTokenStart = runReaches(10, from: offset, marks: base64URL, quads: (low, high), in: bytes, cardCharacters: false) }
            }
            if mayHoldCard, hasTokenStart, ByteLanes.any(at) { break }
            if offset + 16 == count { break }
            offset = Swift.min(offset + 16, count - 16)
        }
        return (mayHoldCard, ByteLanes.any(at), hasTokenStart)
    }

    /// Whether a run of `threshold` bytes of a class (digits, spaces and dashes, or base64url
    /// characters) goes through one of the quads ``ByteLanes/fullQuads(_:)`` found in the block
    /// from `offset` (whose lanes of the class are `marks`): the run around each is measured in
    /// the block's mask, and in the bytes on either side only where it reaches the block's edge.
    @inline(__always)
    private static func runReaches(
        _ threshold: Int, from offset: Int, marks: ByteLanes.Vector, quads: (UInt64, UInt64),
        in bytes: UnsafeRawBufferPointer, cardCharacters: Bool
    ) -> Bool {
        func isIn(_ byte: UInt8) -> Bool {
            cardCharacters ? byte &- UInt8(ascii: "0") < 10 || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "-") : isBase64URL(byte)
        }
        let lanes = ByteLanes.bitmask(marks)
        var full = ByteLanes.quadBits(quads)
        while full != 0 {
            let quad = full.trailingZeroBitCount * 4
            full &= full - 1
            // In the mask: the lanes of the class after the quad and before it. `lanes` has no
            // bit past 15, so `end` stops at 16; the left shift brings in zeros, so `start` is
            // cut at 0.
            var end = quad + 4 + (~(lanes &>> UInt32(quad + 4))).trailingZeroBitCount
            var start = quad == 0 ? 0 : quad - Swift.min(quad, (~lanes &<< UInt32(32 - quad)).leadingZeroBitCount)
            // Past the block, byte by byte and only as far as the threshold.
            start += offset
            end += offset
            if end - offset == 16 { while end < bytes.count, end - start < threshold, isIn(bytes[end]) { end += 1 } }
            if start == offset { while start > 0, end - start < threshold, isIn(bytes[start - 1]) { start -= 1 } }
            if end - start >= threshold { return true }
        }
        return false
    }

    /// ``traits(of:)`` of 10 to 15 bytes, byte by byte.
    private static func shortTraits(of bytes: UnsafeRawBufferPointer) -> (mayHoldCard: Bool, hasAt: Bool, hasTokenStart: Bool) {
        var cardRun = 0, tokenRun = 0
        var mayHoldCard = false, hasAt = false, hasTokenStart = false
        for byte in bytes {
            if byte == UInt8(ascii: "@") { hasAt = true }
            cardRun = byte &- UInt8(ascii: "0") < 10 || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "-") ? cardRun + 1 : 0
            tokenRun = isBase64URL(byte) ? tokenRun + 1 : 0
            if cardRun >= 13 { mayHoldCard = true }
            if tokenRun >= 10 { hasTokenStart = true }
        }
        return (mayHoldCard, hasAt, hasTokenStart)
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
    /// the bytes looks for the first two bytes of each pattern, sixteen positions at a time
    /// (``credentialStarts(_:at:)``), and every check at a position is
    /// bounded: prefixes are compared in place, and the length of the base64url run from each
    /// position is measured once per run (a run of `s` or `eyJ` costs a pass, not a search from
    /// each of its bytes). This runs on every custom string of every payload.
    static func token(in bytes: UnsafeRawBufferPointer) -> String? {
        // The shortest credential recognised is a 4-byte prefix and 16 key characters.
        guard bytes.count >= 20 else { return nil }
        var runs = Base64URLRuns(bytes)
        var block = 0
        // Sixteen positions at a time rule out nearly all of them (a run of `x` or `s` among
        // them) before any prefix is compared; the pair at the block's last position needs the
        // byte after it. The blocks reach position `count - 17` at least, and no credential
        // starts after `count - 20`.
        while block + 17 <= bytes.count {
            let (low, high) = credentialStarts(bytes, at: block)
            if low | high != 0, let kind = credential(among: (low, high), from: block, in: bytes, runs: &runs) { return kind }
            block += 16
        }
        return nil
    }

    /// The positions among the sixteen from `offset` where a credential may start (the first
    /// two bytes of a JWT, a bearer token or one of ``apiKeyPrefixes``: `ey`, `be` in any case,
    /// `rk` and `sk`, `gh` and `gi`, `xo`, `AK`), as two words with a byte's high bit set at
    /// each. The bytes from `offset` to `offset + 16` must all be there.
    @inline(__always)
    static func credentialStarts(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> (UInt64, UInt64) {
        typealias Vector = ByteLanes.Vector
        let first = bytes.loadUnaligned(fromByteOffset: offset, as: Vector.self)
        let second = bytes.loadUnaligned(fromByteOffset: offset + 1, as: Vector.self)
        @inline(__always) func pair(_ one: Vector, _ a: UInt8, _ two: Vector, _ b: UInt8) -> Vector {
            ByteLanes.zero((one ^ Vector(repeating: a)) | (two ^ Vector(repeating: b)))
        }
        let lower = Vector(repeating: 0x20), lowBit = Vector(repeating: 1)
        // `r` and `s` differ in their lowest bit, as `h` and `i` do; `b` and `B` in 0x20.
        let starts = pair(first, UInt8(ascii: "e"), second, UInt8(ascii: "y"))
            | pair(first | lower, UInt8(ascii: "b"), second | lower, UInt8(ascii: "e"))
            | pair(first | lowBit, UInt8(ascii: "s"), second, UInt8(ascii: "k"))
            | pair(first, UInt8(ascii: "g"), second | lowBit, UInt8(ascii: "i"))
            | pair(first, UInt8(ascii: "x"), second, UInt8(ascii: "o"))
            | pair(first, UInt8(ascii: "A"), second, UInt8(ascii: "K"))
        return ByteLanes.words(starts)
    }

    /// The first credential that starts at one of the positions ``credentialStarts(_:at:)``
    /// marked from `block`.
    @inline(never)
    private static func credential(
        among starts: (UInt64, UInt64), from block: Int, in bytes: UnsafeRawBufferPointer, runs: inout Base64URLRuns
    ) -> String? {
        for half in 0..<2 {
            var marks = half == 0 ? starts.0 : starts.1
            while marks != 0 {
                let start = block + 8 * half + marks.trailingZeroBitCount / 8
                if let kind = credential(at: start, in: bytes, runs: &runs) { return kind }
                marks &= marks - 1
            }
        }
        return nil
    }

    /// The credential that starts at `start`, if one does.
    private static func credential(at start: Int, in bytes: UnsafeRawBufferPointer, runs: inout Base64URLRuns) -> String? {
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
            break
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
