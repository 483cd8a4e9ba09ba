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
            var seen = Set<String>()
            var cursor = objectIndex + 1
            for _ in 0..<count {
                if !seen.insert(decodeString(entries[cursor])).inserted { duplicates.append(member(at: cursor)) }
                cursor = Int(entries[cursor + 1].next)
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
