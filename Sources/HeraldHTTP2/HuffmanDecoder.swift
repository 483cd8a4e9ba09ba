/// Decodes HPACK's Huffman code (RFC 7541 §5.2, Appendix B).
///
/// A tree of the 257 codes, walked a bit at a time, and a table of what the next 8 bits say
/// from the root: the common characters (digits, lowercase letters, `-`, `.`, `/`) have codes of
/// 5 to 8 bits, so most symbols are one table load; longer codes go on down the tree from where
/// the table left off.
enum HuffmanCode {
    /// What a string failed on.
    enum DecodingError: Error {
        /// The code for EOS, which a string may not contain.
        case endOfString
        /// More than 7 bits of padding, or padding that is not the start of EOS (all ones).
        case badPadding
    }

    /// The tree: node `n`'s children are at `2n` (bit 0) and `2n + 1` (bit 1); a child below
    /// zero is the leaf of symbol `-child - 1`.
    private static let tree: [Int32] = {
        var tree: [Int32] = [0, 0]
        for symbol in 0..<257 {
            let code = codes[symbol], length = Int(lengths[symbol])
            var node = 0
            for position in stride(from: length - 1, through: 0, by: -1) {
                let bit = Int(code >> UInt32(position) & 1)
                if position == 0 {
                    tree[2 * node + bit] = -Int32(symbol) - 1
                } else {
                    if tree[2 * node + bit] == 0 {
                        tree[2 * node + bit] = Int32(tree.count / 2)
                        tree += [0, 0]
                    }
                    node = Int(tree[2 * node + bit])
                }
            }
        }
        return tree
    }()

    /// For each value of the next 8 bits: a symbol and its length (bit 31 set), or the node
    /// those 8 bits lead to.
    private static let firstByte: [UInt32] = (0..<256).map { byte in
        var node = 0
        for position in stride(from: 7, through: 0, by: -1) {
            let child = tree[2 * node + (byte >> position & 1)]
            if child < 0 { return 1 << 31 | UInt32(8 - position) << 16 | UInt32(-child - 1) }
            node = Int(child)
        }
        return UInt32(node)
    }

    /// The most octets `count` bytes of code can hold: every code is 5 bits or more.
    static func maximumDecodedCount(_ count: Int) -> Int { count * 8 / 5 + 1 }

    /// The octets `bytes` encode, appended to `output`.
    static func decode(_ bytes: UnsafeRawBufferPointer, into output: inout [UInt8]) throws(DecodingError) {
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: maximumDecodedCount(bytes.count)))
        let written = try output.withUnsafeMutableBufferPointer { buffer throws(DecodingError) in
            try decode(bytes, into: UnsafeMutableBufferPointer(rebasing: buffer[start...]))
        }
        output.removeLast(output.count - start - written)
    }

    /// Writes the octets `bytes` encode into `output` (``maximumDecodedCount(_:)`` of room);
    /// returns how many.
    static func decode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<UInt8>) throws(DecodingError) -> Int {
        try tree.withUnsafeBufferPointer { tree throws(DecodingError) in
            try firstByte.withUnsafeBufferPointer { table throws(DecodingError) in
                try decode(bytes, tree: tree, table: table, into: output)
            }
        }
    }

    private static func decode(
        _ bytes: UnsafeRawBufferPointer, tree: UnsafeBufferPointer<Int32>, table: UnsafeBufferPointer<UInt32>, into output: UnsafeMutableBufferPointer<UInt8>
    ) throws(DecodingError) -> Int {
        var written = 0
        // `bits` holds `count` bits of input, the next one at the top.
        var bits: UInt64 = 0
        var count = 0
        var index = 0
        while true {
            while count <= 56, index < bytes.count {
                bits |= UInt64(bytes[index]) << UInt64(56 - count)
                count += 8
                index += 1
            }
            if count == 0 { return written }
            var node = 0
            if count >= 8 {
                let entry = table[Int(bits >> 56)]
                if entry & 1 << 31 != 0 {
                    let symbol = Int(entry & 0xFFFF), length = Int(entry >> 16 & 0xFF)
                    if symbol == 256 { throw .endOfString }
                    output[written] = UInt8(symbol)
                    written += 1
                    bits <<= UInt64(length)
                    count -= length
                    continue
                }
                node = Int(entry)
                bits <<= 8
                count -= 8
                // A code longer than 8 bits: on down the tree. Running out of bits here means
                // more than 7 bits of padding.
                while true {
                    guard count > 0 else { throw .badPadding }
                    let child = tree[2 * node + Int(bits >> 63)]
                    bits <<= 1
                    count -= 1
                    if child < 0 {
                        if child == -257 { throw .endOfString }
                        output[written] = UInt8(-child - 1)
                        written += 1
                        break
                    }
                    node = Int(child)
                }
                continue
            }
            // Fewer than 8 bits, and no more input: a short code, or the padding (ones).
            let rest = bits
            var used = 0
            var emitted = false
            while used < count {
                let child = tree[2 * node + Int(bits >> 63)]
                bits <<= 1
                used += 1
                if child < 0 {
                    if child == -257 { throw .endOfString }
                    output[written] = UInt8(-child - 1)
                    written += 1
                    emitted = true
                    break
                }
                node = Int(child)
            }
            if !emitted {
                // The bits ran out inside a code: padding, which must be all ones.
                let mask = ~UInt64(0) << UInt64(64 - count)
                guard rest & mask == mask else { throw .badPadding }
                return written
            }
            count -= used
        }
    }
}
