#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The repeated keys of a document's objects: which members repeat an earlier key, and which
/// values a later member with the same key hides (no reader keeps them, no pointer names them).
package struct RepeatedKeys: Sendable {
    /// The key of every member that repeats an earlier key of its object (tape indices, in
    /// document order).
    package var laterKeys: [Int32] = []
    /// The value of every member whose key comes again later in its object (tape indices).
    package var hiddenValues: [Int32] = []

    /// Whether no object repeats a key.
    package var isEmpty: Bool { laterKeys.isEmpty }
}

extension JSONDocument {
    /// Every member, in any object of the document, whose key repeats an earlier key of the same
    /// object (the later ones, in document order). One walk over the tape; raw key bytes are
    /// compared (decoded when a key has escapes), allocating only for findings and for objects
    /// of more than 32 members.
    public func laterDuplicateMembers() -> [Member] {
        repeatedKeys().laterKeys.map { member(at: Int($0)) }
    }

    /// The later duplicate members of one object.
    public func laterDuplicateMembers(of object: Node) -> [Member] {
        var found = RepeatedKeys()
        if tape[object.index].kind == .object { appendRepeatedKeys(ofObjectAt: object.index, to: &found, quickProbeBudget: nil) }
        return found.laterKeys.map { member(at: Int($0)) }
    }

    /// The repeated keys of every object: one walk over the tape. `quickProbeBudget` replaces
    /// the budget of the quick hash (tests set it to 0 to take the SipHash path).
    package func repeatedKeys(quickProbeBudget: Int? = nil) -> RepeatedKeys {
        var found = RepeatedKeys()
        let entries = tape
        for index in entries.indices where entries[index].kind == .object && entries[index].count > 1 {
            appendRepeatedKeys(ofObjectAt: index, to: &found, quickProbeBudget: quickProbeBudget)
        }
        return found
    }

    /// The tape ranges of `repeated`'s hidden values, their contents included: disjoint and in
    /// order (a range inside another is left out), for a binary search.
    package func hiddenRanges(of repeated: RepeatedKeys) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        for value in repeated.hiddenValues.sorted() {
            let range = Int(value)..<Int(tape[Int(value)].next)
            if let last = ranges.last, last.upperBound >= range.upperBound { continue }
            ranges.append(range)
        }
        return ranges
    }

    private func appendRepeatedKeys(ofObjectAt objectIndex: Int, to found: inout RepeatedKeys, quickProbeBudget: Int?) {
        let entries = tape
        let count = Int(entries[objectIndex].count)
        guard count > 1 else { return }
        if count > 32 {
            let budget = quickProbeBudget ?? 4 * count + 64
            if !appendRepeatedKeys(ofLargeObjectAt: objectIndex, count: count, to: &found, hash: Self.quickHash, probeBudget: budget) {
                _ = appendRepeatedKeys(ofLargeObjectAt: objectIndex, count: count, to: &found, hash: Self.hash, probeBudget: .max)
            }
            return
        }
        var keys = InlineArray<32, Int32>(repeating: 0)
        var cursor = objectIndex + 1
        for position in 0..<count {
            keys[position] = Int32(cursor)
            cursor = Int(entries[cursor + 1].next)
        }
        withUnsafeBytes { source in
            for later in 1..<count {
                let laterEntry = entries[Int(keys[later])]
                // The nearest earlier member with the same key: this one hides it.
                for earlier in stride(from: later - 1, through: 0, by: -1)
                where sameKey(entries[Int(keys[earlier])], laterEntry, source) {
                    found.laterKeys.append(keys[later])
                    found.hiddenValues.append(keys[earlier] + 1)
                    break
                }
            }
        }
    }

    /// An object of many members: an open-addressing table of each key's latest member, hashed
    /// on the keys' bytes (decoded only for keys with escapes), so a key costs a hash and a
    /// comparison rather than a String allocation and a Set insertion. The hash is first a quick
    /// seeded mix of the bytes; keys made to collide under it (probes past a budget linear in
    /// the object) send the object to the standard library's SipHash (`false` here, nothing
    /// appended), so no choice of keys makes the table quadratic.
    private func appendRepeatedKeys(
        ofLargeObjectAt objectIndex: Int, count: Int, to found: inout RepeatedKeys,
        hash: (UnsafeRawBufferPointer) -> Int, probeBudget: Int
    ) -> Bool {
        let entries = tape
        var capacity = 64
        while capacity < count * 2 { capacity <<= 1 }
        var slots = [Int32](repeating: -1, count: capacity)
        var laterKeys: [Int32] = []
        var hiddenValues: [Int32] = []
        var probes = 0
        let finished: Bool = withUnsafeBytes { source in
            var cursor = objectIndex + 1
            for _ in 0..<count {
                let entry = entries[cursor]
                let decoded: [UInt8]? = entry.flag ? Array(decodeString(entry).utf8) : nil
                func bytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
                    if let decoded { return decoded.withUnsafeBytes(body) }
                    return body(UnsafeRawBufferPointer(rebasing: source[Int(entry.start) + 1..<Int(entry.end) - 1]))
                }
                var slot = bytes(hash) & (capacity - 1)
                while slots[slot] >= 0, !sameKey(entries[Int(slots[slot])], entry, source) {
                    probes += 1
                    if probes > probeBudget { return false }
                    slot = (slot + 1) & (capacity - 1)
                }
                if slots[slot] >= 0 {
                    laterKeys.append(Int32(cursor))
                    hiddenValues.append(slots[slot] + 1)
                }
                slots[slot] = Int32(cursor)
                cursor = Int(entries[cursor + 1].next)
            }
            return true
        }
        guard finished else { return false }
        found.laterKeys += laterKeys
        found.hiddenValues += hiddenValues
        return true
    }

    /// Whether two keys are the same once decoded (raw bytes compared when neither has escapes).
    private func sameKey(_ lhs: JSONTapeEntry, _ rhs: JSONTapeEntry, _ source: UnsafeRawBufferPointer) -> Bool {
        if lhs.flag || rhs.flag { return decodeString(lhs) == decodeString(rhs) }
        return lhs.end - lhs.start == rhs.end - rhs.start && Self.equalBytes(source, Int(lhs.start), Int(rhs.start), Int(lhs.end - lhs.start))
    }

    /// The standard library's seeded hash of `bytes`.
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: bytes)
        return hasher.finalize()
    }

    /// A per-process seed for ``quickHash(_:)``.
    private static let quickSeed = UInt64.random(in: .min ... .max)

    /// A quick seeded hash: eight bytes at a time, each word mixed in by a multiplication.
    private static func quickHash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var state = quickSeed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
        var offset = 0
        while offset + 8 <= bytes.count {
            state = (state ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            state ^= state >> 32
            offset += 8
        }
        if offset < bytes.count {
            state = (state ^ bytes.partialWord(from: offset)) &* 0xC4CE_B9FE_1A85_EC53
        }
        state ^= state >> 29
        state = state &* 0xFF51_AFD7_ED55_8CCD
        return Int(truncatingIfNeeded: state ^ (state >> 32))
    }

    /// Whether two runs of `source` are equal; short keys are compared inline, longer with memcmp.
    @inline(__always)
    private static func equalBytes(_ source: UnsafeRawBufferPointer, _ lhs: Int, _ rhs: Int, _ count: Int) -> Bool {
        if count <= 16 {
            for offset in 0..<count where source[lhs + offset] != source[rhs + offset] { return false }
            return true
        }
        return memcmp(source.baseAddress! + lhs, source.baseAddress! + rhs, count) == 0
    }

    private func member(at keyIndex: Int) -> Member {
        Member(keyNode: Node(document: self, index: keyIndex), value: Node(document: self, index: keyIndex + 1))
    }
}
