import Synchronization

/// Lowercase canonical UUIDs (version 4) for `apns-id`, `apns-unique-id` and `apns-request-id`,
/// from SplitMix64 over one shared counter seeded by the system's generator. Identifiers need
/// to be unique, not secret: each value is a bijection of a distinct counter value, so none
/// repeats within 2^64 draws. Foundation's `UUID()` opens /dev/urandom on Linux for each one,
/// and the system generator makes a system call per value (the mock paid one per answer, the
/// client one per request); a generator behind a lock made the mock's two event loops wait for
/// each other, up to three times an answer.
package enum RandomIdentifier {
    private static let counter = Atomic<UInt64>({
        var system = SystemRandomNumberGenerator()
        return system.next()
    }())

    private static func next() -> UInt64 {
        var z = counter.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`, lowercase.
    package static func uuid() -> String {
        var high = next(), low = next()
        high = (high & ~0xF000) | 0x4000  // version 4
        low = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000  // RFC 4122 variant
        return String(unsafeUninitializedCapacity: 36) { buffer in
            var index = 0
            // A nibble's hex digit by arithmetic: a table is a global, and reading one checks
            // that it is initialised on every read.
            func put(_ value: UInt64, nibbles: Int) {
                for shift in stride(from: (nibbles - 1) * 4, through: 0, by: -4) {
                    let nibble = UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 0xF
                    buffer[index] = nibble < 10 ? nibble + UInt8(ascii: "0") : nibble + (UInt8(ascii: "a") - 10)
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
