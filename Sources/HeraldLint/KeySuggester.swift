import HeraldPayload
import HeraldProtocol

/// "Did you mean": the known key a misspelled one most likely meant.
///
/// First by shape (case, `_` or spaces for `-`, camelCase for kebab-case: `contentAvailable`,
/// `content_available`, `Content-Available` all mean `content-available`), then by edit distance
/// (at most one edit for short keys, two for keys of six characters or more).
enum KeySuggester {
    /// Names to suggest, with their normalized forms computed once.
    struct Candidates: Sendable {
        let names: [String]
        let normalized: [String]
        /// Each normalized form's characters, as bytes (every candidate is ASCII) and as scalars
        /// (for keys that are not), and their counts: computed once, not per key compared.
        let bytes: [[UInt8]]
        let scalars: [[Unicode.Scalar]]
        let bags: [ScalarBag]
        /// What the first filters read of each candidate, by the length of its normalized form
        /// (in candidate order within a length): those of length `L` are
        /// `byLength[lengthStarts[L]..<lengthStarts[L + 1]]`. A key is compared only with the
        /// lengths within ``widestAllowance`` of its own, one record read per candidate.
        let byLength: [Entry]
        let lengthStarts: [Int]

        struct Entry {
            /// The characters its normalized form has (``ScalarBag/present``), read without
            /// touching the form or copying its bag.
            let presence: UInt64
            /// The candidate's index.
            let index: Int32
            /// The length of its normalized form.
            let length: Int16
            /// The edits it allows: one for names under six characters, two from six.
            let allowance: Int16
        }
        /// The most edits any candidate allows.
        static let widestAllowance = 2
        /// Longer keys cannot be a respelling of any name (separators and case at most double a
        /// name, and two edits add two characters): they are not compared, whatever their size.
        let longestRespelling: Int

        init(_ names: [String]) {
            precondition(names.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } }, "key names are ASCII")
            self.names = names
            self.normalized = names.map(KeySuggester.normalize)
            bytes = normalized.map { Array($0.utf8) }
            scalars = normalized.map { Array($0.unicodeScalars) }
            bags = bytes.map(ScalarBag.init)
            let lengths = bytes.map(\.count)
            let order = lengths.indices.sorted { (lengths[$0], $0) < (lengths[$1], $1) }
            let longest = lengths.max() ?? 0
            lengthStarts = (0...(longest + 1)).map { length in lengths.filter { $0 < length }.count }
            byLength = order.map { [bags] candidate in
                Entry(presence: bags[candidate].present, index: Int32(candidate), length: Int16(lengths[candidate]),
                      allowance: Int16(names[candidate].count >= 6 ? Self.widestAllowance : 1))
            }
            longestRespelling = 2 * (names.map(\.utf8.count).max() ?? 0) + 4
            precondition(longestRespelling <= Query.inlineLimit, "a query normalizes every key a candidate could be respelled as")
        }
    }

    static let apsKeys = Candidates(APSKey.keys.map(\.description))
    static let alertKeys = Candidates(AlertKey.keys.map(\.description))
    static let soundKeys = Candidates(SoundKey.keys.map(\.description))
    static let interruptionLevels = Candidates(InterruptionLevel.known.map(\.rawValue))
    static let pushTypes = Candidates(PushType.allCases.map(\.rawValue))

    /// Whether a key could be a respelling of a lowercase kebab-case key: it has an underscore,
    /// a space, a dot or an uppercase letter. Checked on the bytes first, so the common custom
    /// key costs no string work.
    static func mayBeRespelled(_ utf8: UnsafeRawBufferPointer) -> Bool {
        utf8.contains { byte in
            byte == UInt8(ascii: "_") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: ".")
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
        }
    }

    /// The candidate `key` spells differently only in case and separators (`content_available`,
    /// `contentAvailable`, `Content-Available` for `content-available`), or `nil`. Stricter than
    /// ``suggestion(for:among:)``: for keys that may well be custom data.
    static func sameShape(_ key: String, among candidates: Candidates) -> String? {
        guard key.utf8.count <= candidates.longestRespelling else { return nil }
        let normalized = normalize(key)
        guard let index = candidates.normalized.firstIndex(of: normalized), candidates.names[index] != key else { return nil }
        return candidates.names[index]
    }

    /// A key normalized once, to be compared with several sets of candidates.
    struct Query {
        let utf8Count: Int
        /// An ASCII key (nearly all) normalized in place, compared as bytes: no array and no
        /// String made. Keys longer than ``inlineLimit`` are no candidate's respelling, so they
        /// are not normalized at all.
        private var ascii = InlineArray<128, UInt8>(repeating: 0)
        /// The normalized bytes in `ascii`, or -1 for a key that is not ASCII (or too long).
        private var asciiCount = -1
        private(set) var scalars: [Unicode.Scalar] = []

        /// The longest key normalized: its normalized form (a dash at most before each byte)
        /// fits in the inline storage.
        static let inlineLimit = 64

        init(_ key: String) {
            var key = key
            self = key.withUTF8 { Query(utf8: UnsafeRawBufferPointer($0)) }
        }

        /// A key given as its UTF-8 bytes (a document's key, read in place).
        init(utf8 key: UnsafeRawBufferPointer) {
            utf8Count = key.count
            guard utf8Count <= Self.inlineLimit else { return }
            var count = 0
            // Normalized straight into the stored bytes (no second buffer copied in).
            var span = ascii.mutableSpan
            let isASCII = span.withUnsafeMutableBufferPointer { buffer in
                KeySuggester.normalizeASCII(key.assumingMemoryBound(to: UInt8.self), into: buffer, count: &count)
            }
            _ = consume span
            if isASCII {
                asciiCount = count
            } else {
                scalars = Array(KeySuggester.normalize(String(decoding: key, as: UTF8.self)).unicodeScalars)
            }
        }

        /// A query that matches nothing, to be replaced.
        init() {
            utf8Count = Int.max
        }

        /// Mutating only to be addressed in place: a borrowed query would be copied, all 128
        /// bytes, to make a span of its bytes.
        mutating func withASCII<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result? {
            guard asciiCount >= 0 else { return nil }
            let count = asciiCount
            var span = ascii.mutableSpan
            return span.withUnsafeMutableBufferPointer { body(UnsafeBufferPointer(rebasing: $0[0..<count])) }
        }
    }

    /// The best candidate for `key`, or `nil`. Candidates whose length is out of reach are
    /// skipped before any comparison, most others by counting characters, and the comparisons
    /// share their rows.
    static func suggestion(for key: String, among candidates: Candidates) -> String? {
        guard key.utf8.count <= candidates.longestRespelling else { return nil }
        var query = Query(key)
        return suggestion(for: &query, among: candidates)
    }

    /// The best candidate for a key already normalized.
    static func suggestion(for query: inout Query, among candidates: Candidates) -> String? {
        guard query.utf8Count <= candidates.longestRespelling else { return nil }
        if let found = query.withASCII({ best($0, among: candidates, forms: candidates.bytes) }) { return found }
        guard !query.scalars.isEmpty else { return nil }
        return query.scalars.withUnsafeBufferPointer { best($0, among: candidates, forms: candidates.scalars) }
    }

    /// The candidate nearest `normalized` within its allowance (the first on a tie; an exact
    /// match at once), comparing `normalized` with each candidate's form in `forms`.
    ///
    /// Only candidates of a length within reach are visited; each is ruled out by the characters
    /// present on one side only (a word each way), then by counting characters, before any
    /// distance.
    private static func best<Element: Equatable & ScalarBag.Countable>(
        _ normalized: UnsafeBufferPointer<Element>, among candidates: Candidates, forms: [[Element]]
    ) -> String? {
        let count = normalized.count
        let longest = candidates.lengthStarts.count - 2
        guard count - Candidates.widestAllowance <= longest else { return nil }
        // The characters present first (a word): most candidates are ruled out by it, before the
        // counts are taken.
        var present: UInt64 = 0
        for character in normalized { present |= 1 << UInt64(character.slot) }
        var bag: ScalarBag?
        var rows = EditRows()
        var best: (index: Int, distance: Int)?
        let reach = max(0, count - Candidates.widestAllowance)...min(longest, count + Candidates.widestAllowance)
        let found: Int? = candidates.byLength.withUnsafeBufferPointer { byLength in
            // Candidates of the lengths in reach are one run of `byLength`.
            for position in candidates.lengthStarts[reach.lowerBound]..<candidates.lengthStarts[reach.upperBound + 1] {
                let entry = byLength[position]
                let allowance = Int(entry.allowance)
                let length = Int(entry.length)
                guard abs(length - count) <= allowance else { continue }
                let index = Int(entry.index)
                if length == count, entry.presence == present, forms[index].withUnsafeBufferPointer({ $0.elementsEqual(normalized) }) { return index }
                // Characters one has and the other lacks each cost an edit at least.
                guard Self.hasAtMost(allowance, bitsOf: present & ~entry.presence),
                      Self.hasAtMost(allowance, bitsOf: entry.presence & ~present) else { continue }
                if bag == nil { bag = ScalarBag(normalized) }
                guard bag!.lowerBound(to: candidates.bags[index]) <= allowance else { continue }
                let distance = forms[index].withUnsafeBufferPointer { rows.distance(normalized, $0, limit: allowance) }
                guard distance <= allowance else { continue }
                // Lengths are visited out of candidate order: the earlier candidate wins a tie.
                if let current = best, (current.distance, current.index) < (distance, index) { continue }
                best = (index, distance)
            }
            return nil
        }
        return (found ?? best?.index).map { candidates.names[$0] }
    }

    /// Whether `bits` has at most `count` bits set: `count` lowest bits cleared, then zero. The
    /// count is an allowance (one or two), so this is a few instructions where `nonzeroBitCount`
    /// is a software population count (Swift does not assume the instruction on x86-64).
    @inline(__always)
    static func hasAtMost(_ count: Int, bitsOf bits: UInt64) -> Bool {
        var rest = bits
        for _ in 0..<count { rest &= rest &- 1 }
        return rest == 0
    }

    /// Lowercase kebab-case: `threadID` → `thread-id`, `thread_id` → `thread-id`.
    static func normalize(_ key: String) -> String {
        if key.utf8.allSatisfy({ $0 < 0x80 }) { return normalizeASCII(key) }
        // By scalar, remembering whether a dash was just written (no look back into the result).
        var result = String.UnicodeScalarView()
        var lastWasDash = true  // no dash at the start
        var previousWasLower = false
        for scalar in key.unicodeScalars {
            let properties = scalar.properties
            if scalar == "_" || scalar == " " || scalar == "-" || scalar == "." {
                if !lastWasDash { result.append("-") }
                lastWasDash = true
                previousWasLower = false
            } else if properties.isUppercase {
                if previousWasLower && !lastWasDash { result.append("-") }
                result.append(contentsOf: properties.lowercaseMapping.unicodeScalars)
                lastWasDash = false
                previousWasLower = false
            } else {
                result.append(scalar)
                lastWasDash = false
                previousWasLower = properties.isLowercase || properties.numericType != nil
            }
        }
        while result.last == "-" { result.removeLast() }
        return String(result)
    }

    /// The same for ASCII keys, on bytes (no Unicode property lookups).
    static func normalizeASCII(_ key: String) -> String {
        var bytes = [UInt8](repeating: 0, count: 2 * key.utf8.count)
        var count = 0
        var key = key
        _ = bytes.withUnsafeMutableBufferPointer { buffer in key.withUTF8 { normalizeASCII($0, into: buffer, count: &count) } }
        return String(decoding: bytes[0..<count], as: UTF8.self)
    }

    /// Writes the normalized form of an ASCII key into `buffer` (room for twice its bytes: a
    /// dash can come before each byte at most) and its length into `count`; `false`, with
    /// nothing meaningful written, when the key is not ASCII.
    static func normalizeASCII(_ key: UnsafeBufferPointer<UInt8>, into buffer: UnsafeMutableBufferPointer<UInt8>, count: inout Int) -> Bool {
        let dash = UInt8(ascii: "-")
        var length = 0
        var previousWasLower = false
        for byte in key {
            switch byte {
            case 0x80...: return false
            case UInt8(ascii: "_"), UInt8(ascii: " "), dash, UInt8(ascii: "."):
                if length > 0, buffer[length - 1] != dash { buffer[length] = dash; length += 1 }
                previousWasLower = false
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                if previousWasLower, length > 0, buffer[length - 1] != dash { buffer[length] = dash; length += 1 }
                buffer[length] = byte | 0x20
                length += 1
                previousWasLower = false
            default:
                buffer[length] = byte
                length += 1
                previousWasLower = (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            }
        }
        while length > 0, buffer[length - 1] == dash { length -= 1 }
        count = length
        return true
    }

    /// Damerau-Levenshtein (optimal string alignment) distance, stopping early past `limit`
    /// (and reported past it for strings of 255 characters or more, which no caller compares).
    static func editDistance(_ lhs: String, _ rhs: String, limit: Int) -> Int {
        var rows = EditRows()
        let (left, right) = (Array(lhs.unicodeScalars), Array(rhs.unicodeScalars))
        return left.withUnsafeBufferPointer { a in right.withUnsafeBufferPointer { b in rows.distance(a, b, limit: limit) } }
    }
}

/// How many of each character a short string has, folded into 64 counters (a character's
/// value modulo 64): a lower bound of the edit distance between two strings is the larger of
/// the characters one has beyond the other, either way (an insertion, deletion or substitution
/// changes one count on each side, a transposition none); folding only lowers the bound.
struct ScalarBag: Sendable {
    /// A character as the bag folds it.
    protocol Countable { var slot: Int { get } }

    private var counts = InlineArray<64, UInt8>(repeating: 0)
    /// The slots with a count: the characters present.
    private(set) var present: UInt64 = 0

    init<Characters: Sequence>(_ characters: Characters) where Characters.Element: Countable {
        for character in characters {
            let slot = character.slot
            counts[slot] = counts[slot] &+ 1
            present |= 1 << UInt64(slot)
        }
    }

    /// The larger of the characters one has beyond the other, either way.
    func lowerBound(to other: ScalarBag) -> Int {
        var surplus = 0, deficit = 0
        var slots = present | other.present
        while slots != 0 {
            let slot = slots.trailingZeroBitCount
            slots &= slots - 1
            let difference = Int(counts[slot]) - Int(other.counts[slot])
            if difference > 0 { surplus += difference } else { deficit -= difference }
        }
        return max(surplus, deficit)
    }
}

extension UInt8: ScalarBag.Countable {
    var slot: Int { Int(self & 63) }
}

extension Unicode.Scalar: ScalarBag.Countable {
    var slot: Int { Int(value & 63) }
}

/// The three rows of an optimal-string-alignment distance, kept across comparisons: inline for
/// every candidate's length (a suggestion compares a key with several, and three arrays
/// allocated for each cost more than the comparisons), in an array past it. Cells are bytes
/// (a distance is at most the longer length, and keys compared are at most 128 bytes once
/// normalized), so the rows cost little to set up for a key that is compared with nothing.
struct EditRows {
    /// Three rows of up to 32 cells.
    private var inline = InlineArray<96, UInt8>(repeating: 0)
    private var heap: [UInt8] = []

    /// The distance between `a` and `b`, or `limit + 1` once it is certainly past `limit`.
    mutating func distance<Element: Equatable>(_ a: UnsafeBufferPointer<Element>, _ b: UnsafeBufferPointer<Element>, limit: Int) -> Int {
        if abs(a.count - b.count) > limit { return limit + 1 }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        // A cell holds at most the longer length: suggestions compare at most 128 normalized
        // characters, and the simulator check a short name, so no caller meets this.
        guard max(a.count, b.count) < Int(UInt8.max) else { return limit + 1 }
        let width = b.count + 1
        if 3 * width <= inline.count {
            var span = inline.mutableSpan
            return span.withUnsafeMutableBufferPointer { Self.distance(a, b, limit: limit, rows: $0, width: width) }
        }
        if heap.count < 3 * width { heap = [UInt8](repeating: 0, count: 3 * width) }
        return heap.withUnsafeMutableBufferPointer { Self.distance(a, b, limit: limit, rows: $0, width: width) }
    }

    /// The distance in `rows`: three rows of `width` cells, rotated rather than copied.
    private static func distance<Element: Equatable>(
        _ a: UnsafeBufferPointer<Element>, _ b: UnsafeBufferPointer<Element>, limit: Int, rows: UnsafeMutableBufferPointer<UInt8>, width: Int
    ) -> Int {
        var (previousPrevious, previous, current) = (0, width, 2 * width)
        for j in 0..<width { rows[previous + j] = UInt8(j) }
        for i in 1...a.count {
            rows[current] = UInt8(i)
            var rowMinimum = i
            for j in 1...b.count {
                let cost: UInt8 = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(rows[previous + j] + 1, rows[current + j - 1] + 1, rows[previous + j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, rows[previousPrevious + j - 2] + 1)
                }
                rows[current + j] = value
                rowMinimum = min(rowMinimum, Int(value))
            }
            if rowMinimum > limit { return limit + 1 }
            (previousPrevious, previous, current) = (previous, current, previousPrevious)
        }
        return Int(rows[previous + b.count])
    }
}
