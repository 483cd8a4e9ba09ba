@testable import HeraldJSON
import Testing
import HeraldTestSupport

/// The forward cursor that locates many offsets in one pass agrees with locating each from the
/// start of the text, on texts made of line breaks (LF, CR, CRLF), multi-byte UTF-8 and
/// invalid bytes, in increasing and in random order.
@Suite(.ownThreads) struct SourceCursorTests {
    @Test(arguments: 0..<40)
    func agreesWithAScanFromTheStart(seed: Int) {
        var generator = SystemRandomNumberGenerator()
        _ = seed
        let pieces: [[UInt8]] = [[0x0A], [0x0D], [0x0D, 0x0A], Array("é".utf8), Array("😀".utf8), [0x41], [0x20], [0xFF], [0x80]]
        var bytes: [UInt8] = []
        for _ in 0..<Int.random(in: 0...200, using: &generator) { bytes += pieces.randomElement(using: &generator)! }
        bytes.withUnsafeBufferPointer { text in
            let offsets = (0...bytes.count).map { $0 }
            let expected = offsets.map { SourceLocation.scan(text, upTo: $0) }
            #expect(SourceCursor.locations(ofOffsets: offsets, in: text) == expected, "in order")
            let shuffled = offsets.shuffled(using: &generator)
            let located = SourceCursor.locations(ofOffsets: shuffled, in: text)
            #expect(located == shuffled.map { expected[$0] }, "in any order")
            var locator = SourceLocator(bytes: bytes)
            #expect(offsets.map { locator.location(ofOffset: $0) } == expected, "the line-table locator")
            var cursor = SourceCursor()
            let backAndForth = shuffled.map { cursor.location(ofOffset: $0, in: text) }
            #expect(backAndForth == shuffled.map { expected[$0] }, "one cursor, asked out of order")
        }
    }

    /// Long runs without a line break (read eight bytes at a time), multi-byte characters
    /// straddling the words, and offsets far apart.
    @Test(arguments: 0..<20)
    func agreesOnLongLinesAndSparseOffsets(seed: Int) {
        var generator = SystemRandomNumberGenerator()
        _ = seed
        let pieces: [[UInt8]] = [Array("é".utf8), Array("😀".utf8), Array("abc".utf8), [0x41], [0x20], [0xFF], [0x80]]
        var bytes: [UInt8] = []
        for _ in 0..<Int.random(in: 0...600, using: &generator) {
            let roll = Int.random(in: 0..<60, using: &generator)
            bytes += roll == 0 ? [0x0A] : roll == 1 ? [0x0D, 0x0A] : roll == 2 ? [0x0D] : pieces.randomElement(using: &generator)!
        }
        bytes.withUnsafeBufferPointer { text in
            let offsets = (0...bytes.count).filter { _ in Int.random(in: 0..<17, using: &generator) == 0 } + [bytes.count]
            let expected = offsets.map { SourceLocation.scan(text, upTo: $0) }
            #expect(SourceCursor.locations(ofOffsets: offsets, in: text) == expected)
        }
    }
}
