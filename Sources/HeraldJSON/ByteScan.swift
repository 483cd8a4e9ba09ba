/// Finds the bytes JSON strings care about, eight at a time.
///
/// Most string content needs no attention: the writer copies it, the parser steps over it. These
/// scans test a 64-bit word at once with the "has a zero byte" bit trick (Hacker's Delight 6-1)
/// and only look at single bytes in a word that may contain a match. The trick has no false
/// negatives; a false positive just sends that word to the byte loop.
///
/// The writer's scan and the parser's stay two: one function with a flag for non-ASCII bytes
/// (both then stepping 16 bytes at a time) measured parsing 14 to 21% slower, since most strings
/// the parser meets are short keys (Benchmarks: payload, parse rows).
@usableFromInline
enum ByteScan {
    @usableFromInline static let ones: UInt64 = 0x0101_0101_0101_0101
    @usableFromInline static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Bytes of `word` that are zero get their high bit set (and maybe some above them).
    @inlinable @inline(__always)
    static func zeroBytes(_ word: UInt64) -> UInt64 {
        (word &- ones) & ~word & highs
    }

    /// Bytes below 0x20 (with the high bit clear) get their high bit set.
    @inlinable @inline(__always)
    static func controlBytes(_ word: UInt64) -> UInt64 {
        (word &- ones &* 0x20) & ~word & highs
    }

    /// Whether a byte must be escaped in a JSON string: `"`, `\` or below 0x20.
    @inlinable @inline(__always)
    static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// The index of the first byte at or after `start` that must be escaped, or `bytes.count`.
    @inlinable @inline(__always)
    static func firstNeedingEscape(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        let count = bytes.count
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            // Two words per step: the three tests of each share one branch.
            while index + 16 <= count {
                let first = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let second = raw.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self)
                let hits = controlBytes(first) | zeroBytes(first ^ (ones &* 0x22)) | zeroBytes(first ^ (ones &* 0x5C))
                    | controlBytes(second) | zeroBytes(second ^ (ones &* 0x22)) | zeroBytes(second ^ (ones &* 0x5C))
                if hits != 0 { break }
                index += 16
            }
            while index + 8 <= count {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let hits = controlBytes(word) | zeroBytes(word ^ (ones &* 0x22)) | zeroBytes(word ^ (ones &* 0x5C))
                if hits != 0 { break }
                index += 8
            }
        }
        while index < count, !needsEscape(bytes[index]) { index += 1 }
        return index
    }

    /// The index of the first byte at or after `start` that is not printable ASCII other than
    /// `"` and `\` (what ends the parser's fast path), or `bytes.count`.
    @inlinable @inline(__always)
    static func firstSpecialInString(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        let count = bytes.count
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while index + 8 <= count {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let hits = (word & highs) | controlBytes(word) | zeroBytes(word ^ (ones &* 0x22)) | zeroBytes(word ^ (ones &* 0x5C))
                if hits != 0 { break }
                index += 8
            }
        }
        while index < count {
            let byte = bytes[index]
            if byte < 0x20 || byte >= 0x80 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { break }
            index += 1
        }
        return index
    }
}

extension UnsafeRawBufferPointer {
    /// The bytes from `offset` to the end, at most eight, as a little-endian word with zeros past
    /// the end: three loads at most where a loop takes one a byte. Keys are mostly shorter than a
    /// word, and hashing, classifying and looking one up each reads its tail this way.
    @inlinable @inline(__always)
    package func partialWord(from offset: Int) -> UInt64 {
        let count = self.count - offset
        if count >= 8 { return UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
        var word: UInt64 = 0
        var position = offset
        var shift: UInt64 = 0
        if count & 4 != 0 {
            word = UInt64(UInt32(littleEndian: loadUnaligned(fromByteOffset: position, as: UInt32.self)))
            position += 4
            shift = 32
        }
        if count & 2 != 0 {
            word |= UInt64(UInt16(littleEndian: loadUnaligned(fromByteOffset: position, as: UInt16.self))) << shift
            position += 2
            shift += 16
        }
        if count & 1 != 0 { word |= UInt64(self[position]) << shift }
        return word
    }
}
