@testable import HeraldLocalization
import Testing
import HeraldTestSupport

/// The forward cursor over decoded text (a `.strings` file's repeated keys and lone surrogates)
/// agrees with locating each unit from the start, in every encoding the reader accepts.
@Suite(.ownThreads) struct UnitCursorTests {
    @Test(arguments: ["utf8", "utf16le", "utf16be"])
    func agreesWithALookupFromTheStart(encoding: String) throws {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["\n", "\r", "\r\n", "é", "😀", "A", " ", "\u{2028}", "中"]
        for _ in 0..<20 {
            let text = (0..<Int.random(in: 0...120, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let bytes: [UInt8]
            switch encoding {
            case "utf16le": bytes = [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
            case "utf16be": bytes = [0xFE, 0xFF] + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
            default: bytes = Array(text.utf8)
            }
            let decoded = try DecodedText(decoding: bytes, path: "x.strings")
            let units = Array(0...decoded.units.count)
            let expected = units.map { decoded.location(ofUnit: $0) }
            var cursor = UnitCursor()
            #expect(units.map { cursor.location(ofUnit: $0, in: decoded) } == expected, "in order: \(text.debugDescription)")
            let shuffled = units.shuffled(using: &generator)
            var another = UnitCursor()
            #expect(shuffled.map { another.location(ofUnit: $0, in: decoded) } == shuffled.map { expected[$0] }, "in any order")
        }
    }
}
