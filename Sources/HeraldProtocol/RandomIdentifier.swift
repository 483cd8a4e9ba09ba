import Synchronization

/// Lowercase canonical UUIDs (version 4) for `apns-id`, `apns-unique-id` and `apns-request-id`,
/// from a xoshiro256** generator seeded by the system's. Identifiers need to be unique, not
/// secret; Foundation's `UUID()` opens /dev/urandom on Linux for each one, and the system
/// generator makes a system call per value: the mock paid one per answer, the client one per
/// request.
package enum RandomIdentifier {
    private static let state: Mutex<(UInt64, UInt64, UInt64, UInt64)> = {
        var system = SystemRandomNumberGenerator()
        return Mutex((system.next(), system.next(), system.next(), system.next() | 1))
    }()

    private static func next() -> UInt64 {
        state.withLock { s in
            let result = (s.1 &* 5).rotatedLeft(by: 7) &* 9
            let t = s.1 << 17
            s.2 ^= s.0
            s.3 ^= s.1
            s.1 ^= s.2
            s.0 ^= s.3
            s.2 ^= t
            s.3 = s.3.rotatedLeft(by: 45)
            return result
        }
    }

    private static let digits = Array("0123456789abcdef".utf8)

    /// `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`, lowercase.
    package static func uuid() -> String {
        var high = next(), low = next()
        high = (high & ~0xF000) | 0x4000  // version 4
        low = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000  // RFC 4122 variant
        return String(unsafeUninitializedCapacity: 36) { buffer in
            var index = 0
            func put(_ value: UInt64, nibbles: Int) {
                for shift in stride(from: (nibbles - 1) * 4, through: 0, by: -4) {
                    buffer[index] = digits[Int((value >> UInt64(shift)) & 0xF)]
                    index += 1
                }
            }
            put(high >> 32, nibbles: 8)
            buffer[index] = UInt8(ascii: "-"); index += 1
            put((high >> 16) & 0xFFFF, nibbles: 4)
            buffer[index] = UInt8(ascii: "-"); index += 1
            put(high & 0xFFFF, nibbles: 4)
            buffer[index] = UInt8(ascii: "-"); index += 1
            put(low >> 48, nibbles: 4)
            buffer[index] = UInt8(ascii: "-"); index += 1
            put(low & 0xFFFF_FFFF_FFFF, nibbles: 12)
            return 36
        }
    }
}

extension UInt64 {
    fileprivate func rotatedLeft(by count: UInt64) -> UInt64 { (self << count) | (self >> (64 - count)) }
}
