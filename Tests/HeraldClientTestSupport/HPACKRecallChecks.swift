import HeraldHTTP2
import NIOCore

/// The HPACK decoder's recall of literal values against the same decoder without it, for the
/// fuzzer (`FuzzHTTP2Server`) and the tests.
public enum HPACKRecallChecks {
    /// The bytes as header blocks: each block's length is the byte before it (the last block
    /// takes what is left). The blocks are decoded in the order 0, 0, 1, 0, 1, 2, 1, 2, 3, … (each
    /// new block after the two before it again, so a literal comes back as it would on a
    /// connection's next requests) by a decoder that recalls literals and one that does not,
    /// both on one connection each; every block must give the same fields (names, values,
    /// well-formedness) or the same error from both.
    public static func check(_ bytes: [UInt8]) -> [String] {
        var blocks: [[UInt8]] = []
        var position = 0
        while position < bytes.count, blocks.count < 64 {
            let length = Int(bytes[position])
            position += 1
            let end = min(bytes.count, position + length)
            blocks.append(Array(bytes[position..<end]))
            position = end
        }
        var order: [Int] = []
        for index in blocks.indices { order += [max(0, index - 2), max(0, index - 1), index] }
        var recalling = HPACKBlockDecoder(maximumListSize: 16_384)
        var fresh = HPACKBlockDecoder(maximumListSize: 16_384, recallingLiterals: false)
        var violations: [String] = []
        for index in order {
            let block = ByteBuffer(bytes: blocks[index])
            let recalled = Result { () throws(HPACKBlockDecoder.DecodingError) in try recalling.decode(block) }
            let decoded = Result { () throws(HPACKBlockDecoder.DecodingError) in try fresh.decode(block) }
            switch (recalled, decoded) {
            case (.success(let a), .success(let b)):
                let left = a.map { "\($0.name)\u{0}\($0.value)\u{0}\($0.isWellFormed)" }
                let right = b.map { "\($0.name)\u{0}\($0.value)\u{0}\($0.isWellFormed)" }
                if left != right { violations.append("block \(index): \(left) recalled, \(right) decoded") }
            case (.failure(let a), .failure(let b)):
                if "\(a)" != "\(b)" { violations.append("block \(index): \(a) recalled, \(b) decoded") }
            default:
                violations.append("block \(index): \(recalled) recalled, \(decoded) decoded")
            }
            // A connection ends at its first error: both start again from an empty table.
            if case .failure = decoded {
                recalling = HPACKBlockDecoder(maximumListSize: 16_384)
                fresh = HPACKBlockDecoder(maximumListSize: 16_384, recallingLiterals: false)
            }
        }
        return violations
    }
}
