import Foundation
@testable import HeraldProtocol
import Testing

/// The identifiers the mock answers with and the client sends: version 4 UUIDs as Foundation
/// reads them, lowercase, none repeated across threads, every random bit fair.
@Suite struct RandomIdentifierTests {
    @Test func identifiersAreVersionFourUUIDsFoundationReads() throws {
        for _ in 0..<2_000 {
            let text = RandomIdentifier.uuid()
            let uuid = try #require(UUID(uuidString: text), "\(text)")
            // Foundation writes uppercase: the same identifier, lowercase.
            #expect(uuid.uuidString.lowercased() == text)
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 4, "version of \(text)")
            #expect(bytes[8] >> 6 == 0b10, "variant of \(text)")
        }
    }

    /// Four tasks draw 50,000 each at once: 200,000 identifiers, none twice.
    @Test func noIdentifierRepeatsAcrossThreads() async {
        let drawn = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<4 {
                group.addTask { (0..<50_000).map { _ in RandomIdentifier.uuid() } }
            }
            var all: [String] = []
            for await part in group { all += part }
            return all
        }
        #expect(drawn.count == 200_000)
        #expect(Set(drawn).count == 200_000)
    }

    /// Each of the 122 bits not fixed by the version and variant is set in about half of 20,000
    /// identifiers (within 5 standard deviations: 0.5 ± 0.0177), and each hex digit of the
    /// random positions is about equally frequent.
    @Test func everyRandomBitIsFair() throws {
        let count = 20_000
        var ones = [Int](repeating: 0, count: 128)
        var digits = [Character: Int]()
        for _ in 0..<count {
            let text = RandomIdentifier.uuid()
            let uuid = try #require(UUID(uuidString: text))
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            for bit in 0..<128 where bytes[bit / 8] & (0x80 >> UInt8(bit % 8)) != 0 { ones[bit] += 1 }
            for (offset, character) in text.enumerated() where offset != 14 && offset != 19 && character != "-" {
                digits[character, default: 0] += 1
            }
        }
        let fixed: Set<Int> = [48, 49, 50, 51, 64, 65]
        for bit in 0..<128 {
            let share = Double(ones[bit]) / Double(count)
            if fixed.contains(bit) {
                #expect(share == 0 || share == 1, "bit \(bit) is fixed")
            } else {
                #expect(abs(share - 0.5) < 0.0177, "bit \(bit) is set in \(share) of them")
            }
        }
        #expect(digits.count == 16)
        let total = digits.values.reduce(0, +)
        for (digit, seen) in digits {
            #expect(abs(Double(seen) / Double(total) - 1.0 / 16) < 0.003, "\(digit): \(seen) of \(total)")
        }
    }
}
