@testable import HeraldJSON
import Testing
import HeraldTestSupport

@Suite("Word-at-a-time byte scans", .ownThreads)
struct ByteScanTests {
    @Test("every byte value at every offset, against the byte-by-byte definition", arguments: 0..<24)
    func exhaustive(position: Int) {
        for value in 0...255 {
            let byte = UInt8(value)
            var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 24)
            bytes[position] = byte
            // Put a non-ASCII byte earlier in some runs: it must not stop the escape scan.
            if position > 3 { bytes[1] = 0xC3 }
            bytes.withUnsafeBufferPointer { buffer in
                let escape = ByteScan.firstNeedingEscape(in: buffer, from: 0)
                #expect(escape == (ByteScan.needsEscape(byte) ? position : 24), "byte \(byte) at \(position)")
                let special = ByteScan.firstSpecialInString(in: buffer, from: 0)
                let expectedSpecial = position > 3 ? 1 : (byte < 0x20 || byte >= 0x80 || byte == 0x22 || byte == 0x5C ? position : 24)
                #expect(special == expectedSpecial, "byte \(byte) at \(position)")
                // Starting past the byte finds nothing.
                #expect(ByteScan.firstNeedingEscape(in: buffer, from: position + 1) == 24)
            }
        }
    }

    @Test("empty and short buffers")
    func short() {
        [UInt8]().withUnsafeBufferPointer { #expect(ByteScan.firstNeedingEscape(in: $0, from: 0) == 0) }
        Array("ab\"".utf8).withUnsafeBufferPointer { #expect(ByteScan.firstNeedingEscape(in: $0, from: 0) == 2) }
    }
}
