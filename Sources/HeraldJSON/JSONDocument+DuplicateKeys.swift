#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension JSONDocument {
    /// Every member, in any object of the document, whose key repeats an earlier key of the same
    /// object (the later ones, in document order). One walk over the tape; raw key bytes are
    /// compared (decoded when a key has escapes), allocating only for findings and for objects
    /// of more than 32 members.
    public func laterDuplicateMembers() -> [Member] {
        var duplicates: [Member] = []
        let entries = tape
        for index in entries.indices where entries[index].kind == .object && entries[index].count > 1 {
            appendLaterDuplicates(ofObjectAt: index, to: &duplicates)
        }
        return duplicates
    }

    /// The later duplicate members of one object.
    public func laterDuplicateMembers(of object: Node) -> [Member] {
        var duplicates: [Member] = []
        if tape[object.index].kind == .object { appendLaterDuplicates(ofObjectAt: object.index, to: &duplicates) }
        return duplicates
    }

    private func appendLaterDuplicates(ofObjectAt objectIndex: Int, to duplicates: inout [Member]) {
        let entries = tape
        let count = Int(entries[objectIndex].count)
        guard count > 1 else { return }
        if count > 32 {
            appendLaterDuplicates(ofLargeObjectAt: objectIndex, count: count, to: &duplicates)
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
                let laterLength = laterEntry.end - laterEntry.start
                for earlier in 0..<later {
                    let earlierEntry = entries[Int(keys[earlier])]
                    let same: Bool
                    if laterEntry.flag || earlierEntry.flag {
                        same = decodeString(laterEntry) == decodeString(earlierEntry)
                    } else {
                        same = earlierEntry.end - earlierEntry.start == laterLength
                            && Self.equalBytes(source, Int(laterEntry.start), Int(earlierEntry.start), Int(laterLength))
                    }
                    if same {
                        duplicates.append(member(at: Int(keys[later])))
                        break
                    }
                }
            }
        }
    }

    /// An object of many members: an open-addressing table of key positions hashed on the keys'
    /// bytes (decoded only for keys with escapes), so a key costs a hash and a comparison
    /// rather than a String allocation and a Set insertion.
    private func appendLaterDuplicates(ofLargeObjectAt objectIndex: Int, count: Int, to duplicates: inout [Member]) {
        let entries = tape
        var capacity = 64
        while capacity < count * 2 { capacity <<= 1 }
        var slots = [Int32](repeating: -1, count: capacity)
        withUnsafeBytes { source in
            var cursor = objectIndex + 1
            for _ in 0..<count {
                let entry = entries[cursor]
                let decoded: [UInt8]? = entry.flag ? Array(decodeString(entry).utf8) : nil
                func bytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
                    if let decoded { return decoded.withUnsafeBytes(body) }
                    return body(UnsafeRawBufferPointer(rebasing: source[Int(entry.start) + 1..<Int(entry.end) - 1]))
                }
                var slot = bytes(Self.hash) & (capacity - 1)
                while slots[slot] >= 0 {
                    let earlier = entries[Int(slots[slot])]
                    let same: Bool
                    if entry.flag || earlier.flag {
                        same = decodeString(entry) == decodeString(earlier)
                    } else {
                        same = earlier.end - earlier.start == entry.end - entry.start
                            && Self.equalBytes(source, Int(entry.start), Int(earlier.start), Int(entry.end - entry.start))
                    }
                    if same { break }
                    slot = (slot + 1) & (capacity - 1)
                }
                if slots[slot] >= 0 {
                    duplicates.append(member(at: cursor))
                } else {
                    slots[slot] = Int32(cursor)
                }
                cursor = Int(entries[cursor + 1].next)
            }
        }
    }

    /// The standard library's seeded hash of `bytes`: keys chosen to collide cannot make the
    /// table quadratic.
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: bytes)
        return hasher.finalize()
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
