/// Tests on sixteen bytes at once, as the lanes of a vector, for the scans that read every byte
/// of long strings (``SensitiveData/traits(of:)`` and the credential scan).
///
/// Each test gives a lane 0x80 where its byte passes and 0 where it does not, so results combine
/// with `&` and `|`, and split into two words to find where. Only lane-wise wrapping arithmetic
/// and bit operations are used: they compile to one vector instruction each, where the standard
/// library's lane comparisons (`.==`, `.<`) compiled to a loop over the lanes (Swift 6.3: a
/// filter of three byte pairs over 4 KB ran 27 times slower written with `.==`). No carry
/// crosses a lane, so every test is exact, bytes of 0x80 and above included.
enum ByteLanes {
    typealias Vector = SIMD16<UInt8>

    /// Lanes whose byte is `byte`.
    @inline(__always)
    static func equal(_ lanes: Vector, _ byte: UInt8) -> Vector {
        zero(lanes ^ Vector(repeating: byte))
    }

    /// Lanes that are zero: only for zero do both x - 1 and ~x have the high bit set. Two
    /// equalities at once are `zero((a ^ x) | (b ^ y))`.
    @inline(__always)
    static func zero(_ lanes: Vector) -> Vector {
        (lanes &- Vector(repeating: 1)) & ~lanes & Vector(repeating: 0x80)
    }

    /// Lanes whose byte is in `first ..< first + count` (count at most 128): t = lane - first
    /// wraps to 0x80 or above below the range, and t + (0x80 - count) reaches 0x80 above it.
    @inline(__always)
    static func within(_ lanes: Vector, _ first: UInt8, count: UInt8) -> Vector {
        let offset = lanes &- Vector(repeating: first)
        return ~(offset | (offset &+ Vector(repeating: 0x80 &- count))) & Vector(repeating: 0x80)
    }

    /// The quads (lanes 0 to 3, 4 to 7, 8 to 11, 12 to 15) whose four lanes are all marked
    /// (0x80), as the bit 31 of each 32-bit half of ``words(_:)``: the quad as a 32-bit lane
    /// is 0x8080_8080 exactly then, and ``zero(_:)`` works on 32-bit lanes as on bytes.
    @inline(__always)
    static func fullQuads(_ marks: Vector) -> (UInt64, UInt64) {
        let quads = unsafeBitCast(marks, to: SIMD4<UInt32>.self) ^ SIMD4(repeating: 0x8080_8080)
        let full = (quads &- SIMD4(repeating: 1)) & ~quads & SIMD4(repeating: 0x8000_0000)
        return words(unsafeBitCast(full, to: Vector.self))
    }

    /// The quads ``fullQuads(_:)`` marked, as bits 0 to 3.
    @inline(__always)
    static func quadBits(_ quads: (UInt64, UInt64)) -> UInt32 {
        UInt32(truncatingIfNeeded: (quads.0 >> 31) & 1 | (quads.0 >> 62) & 2 | (quads.1 >> 29) & 4 | (quads.1 >> 60) & 8)
    }

    /// The marked lanes as bits 0 to 15: each word's eight high bits gathered into its top byte
    /// by one multiplication (the byte k's bit, at 8k after the shift, lands at 56 + k; every
    /// other product falls below bit 56 on a bit of its own or past bit 63).
    @inline(__always)
    static func bitmask(_ marks: Vector) -> UInt32 {
        let (low, high) = words(marks)
        func gathered(_ word: UInt64) -> UInt32 {
            UInt32(truncatingIfNeeded: (((word >> 7) & 0x0101_0101_0101_0101) &* 0x0102_0408_1020_4080) >> 56)
        }
        return gathered(low) | gathered(high) << 8
    }

    /// Whether any lane is marked.
    @inline(__always)
    static func any(_ marks: Vector) -> Bool {
        let (first, second) = unsafeBitCast(marks, to: (UInt64, UInt64).self)
        return first | second != 0
    }

    /// The lanes as two little-endian words: lanes 0 to 7 (lane 0 the lowest byte), then 8 to 15.
    @inline(__always)
    static func words(_ lanes: Vector) -> (UInt64, UInt64) {
        let (first, second) = unsafeBitCast(lanes, to: (UInt64, UInt64).self)
        return (UInt64(littleEndian: first), UInt64(littleEndian: second))
    }
}
