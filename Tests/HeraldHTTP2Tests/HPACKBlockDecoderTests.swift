import Foundation
@testable import HeraldHTTP2
import HeraldClientTestSupport
import HeraldTestSupport
import NIOCore
import NIOHPACK
import Testing

/// The server's HPACK decoder against RFC 7541's own examples, Python's hpack and NIOHPACK as
/// encoders, and the malformed blocks each rule forbids.
@Suite struct HPACKBlockDecoderTests {
    static func bytes(_ hex: String) -> ByteBuffer {
        let digits = Array(hex.filter { !$0.isWhitespace })
        return ByteBuffer(bytes: stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! })
    }

    static func pairs(_ fields: [HPACKBlockDecoder.Field]) -> [String] { fields.map { "\($0.name): \($0.value)" } }

    /// RFC 7541 Appendix C.4: three requests with Huffman coding on one connection, the table
    /// filling as they go; then C.3's same requests without it on another.
    @Test func theRFCsExamplesDecode() throws {
        for (first, second, third) in [
            ("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff", "8286 84be 5886 a8eb 1064 9cbf",
             "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf"),
            ("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d", "8286 84be 5808 6e6f 2d63 6163 6865",
             "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65"),
        ] {
            var decoder = HPACKBlockDecoder(maximumListSize: 16_384)
            #expect(Self.pairs(try decoder.decode(Self.bytes(first))) == [":method: GET", ":scheme: http", ":path: /", ":authority: www.example.com"])
            #expect(Self.pairs(try decoder.decode(Self.bytes(second))) == [
                ":method: GET", ":scheme: http", ":path: /", ":authority: www.example.com", "cache-control: no-cache",
            ])
            #expect(Self.pairs(try decoder.decode(Self.bytes(third))) == [
                ":method: GET", ":scheme: https", ":path: /index.html", ":authority: www.example.com", "custom-key: custom-value",
            ])
        }
    }

    @Test(.ownThreads) func theStaticTableIsPythonsHPACKs() throws {
        try ExternalTools.requirePython(modules: "hpack", package: "h2")
        let script = """
            from hpack.table import HeaderTable
            for name, value in HeaderTable.STATIC_TABLE:
                print(name.decode() + "=" + value.decode())
            """
        let python = String(decoding: try ExternalTools.python(script), as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(python == HPACKBlockDecoder.staticFields.map { "\($0.0)=\($0.1)" })
    }

    /// 400 blocks from Python's hpack on one connection: random fields (names from the static
    /// table and new ones, values of every octet), Huffman or not, indexed, not indexed and
    /// never indexed, and table size changes between blocks.
    @Test(.ownThreads) func pythonsBlocksDecodeToTheirFields() throws {
        try ExternalTools.requirePython(modules: "hpack", package: "h2")
        let script = """
            import json, random, hpack
            rng = random.Random(7)
            encoder = hpack.Encoder()
            names = [":path", ":authority", "authorization", "apns-topic", "apns-id", "content-type", "x-a", "x-custom-header", "cookie"]
            def text():
                kind = rng.random()
                if kind < 0.5:
                    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-./_") for _ in range(rng.randint(0, 60)))
                if kind < 0.8:
                    return "".join(chr(rng.randint(32, 126)) for _ in range(rng.randint(0, 300)))
                return "".join(chr(rng.choice([rng.randint(1, 255), rng.randint(0x100, 0x7FF)])) for _ in range(rng.randint(0, 40)))
            for block in range(400):
                if rng.random() < 0.05:
                    encoder.header_table_size = rng.choice([0, 256, 1024, 4096])
                fields = []
                for _ in range(rng.randint(1, 12)):
                    name = rng.choice(names) if rng.random() < 0.7 else "x-" + str(rng.randint(0, 30))
                    value = text()
                    if rng.random() < 0.15:
                        fields.append(hpack.NeverIndexedHeaderTuple(name, value))
                    else:
                        fields.append((name, value))
                data = encoder.encode(fields, huffman=rng.random() < 0.7)
                print(data.hex() + " " + json.dumps([[str(n), str(v)] for n, v in fields]))
            """
        try Self.decodeEach(of: script, expecting: 400) { _, _ in }
    }

    /// Runs `script`, which prints a block's hex and its fields as JSON on each line, and decodes
    /// the blocks in order on one connection: each must read back as its fields, and `check`
    /// sees each block's fields with its number.
    static func decodeEach(of script: String, expecting count: Int, check: ([HPACKBlockDecoder.Field], Int) -> Void) throws {
        let lines = String(decoding: try ExternalTools.python(script), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == count)
        var decoder = HPACKBlockDecoder(maximumListSize: 1 << 20)
        for (index, line) in lines.enumerated() {
            let space = line.firstIndex(of: " ")!
            let expected = try JSONSerialization.jsonObject(with: Data(line[line.index(after: space)...].utf8)) as! [[String]]
            let fields = try decoder.decode(Self.bytes(String(line[..<space])))
            #expect(fields.map { [$0.name, $0.value] } == expected, "block \(index)")
            check(fields, index)
        }
    }

    /// Values sent again as literals the table does not keep (a provider token never indexed,
    /// as nghttp2 and python-h2 send `authorization`; a `:path` without indexing), which the
    /// decoder decodes once and recalls: Python's hpack writes 600 blocks on one connection in
    /// which a few tokens recur among paths that differ each time, with look-alikes (one byte
    /// changed at the start, in the middle or at the end, the same length), lengths on each side
    /// of the bounds kept (23, 24, 512, 513 bytes coded) and values with a CR in them; each
    /// field must read back as written and be well formed exactly when it has no NUL, CR or LF.
    @Test(.ownThreads) func repeatedLiteralsDecodeAsWritten() throws {
        try ExternalTools.requirePython(modules: "hpack", package: "h2")
        let script = """
            import json, random, hpack
            from hpack.huffman import HuffmanEncoder
            from hpack.huffman_constants import REQUEST_CODES, REQUEST_CODES_LENGTH
            rng = random.Random(11)
            huffman = HuffmanEncoder(REQUEST_CODES, REQUEST_CODES_LENGTH)
            encoder = hpack.Encoder()
            alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_."
            def coded(count):
                # A value whose Huffman coding is `count` bytes.
                value = ""
                while len(huffman.encode(value.encode())) < count:
                    value += rng.choice(alphabet)
                while len(huffman.encode(value.encode())) > count:
                    value = value[:-1]
                return value
            base = "bearer " + "".join(rng.choice(alphabet) for _ in range(240))
            original = huffman.encode(base.encode())
            def lookalike(where):
                # `base` with one character changed so that its coding differs from base's only in
                # the byte `where`: the same length, one byte apart.
                for at in sorted(range(len(base)), key=lambda i: abs(i - where * len(base) // len(original))):
                    for c in alphabet:
                        other = huffman.encode((base[:at] + c + base[at + 1:]).encode())
                        if len(other) == len(original) and [i for i in range(len(other)) if other[i] != original[i]] == [where]:
                            return base[:at] + c + base[at + 1:]
                raise SystemExit("no look-alike differing in byte %d" % where)
            tokens = [base, lookalike(len(original) - 1), lookalike(0), lookalike(len(original) // 2), "bearer a\\rb" + base[11:],
                      coded(23), coded(24), coded(512), coded(513)]
            for block in range(600):
                token = tokens[0] if rng.random() < 0.6 else rng.choice(tokens)
                path = "/3/device/" + "".join(rng.choice("0123456789abcdef") for _ in range(64))
                fields = [(":method", "POST"), hpack.NeverIndexedHeaderTuple(":path", path), hpack.NeverIndexedHeaderTuple("authorization", token)]
                if rng.random() < 0.3:
                    fields.append(hpack.NeverIndexedHeaderTuple("x-other", rng.choice(tokens)))
                rng.shuffle(fields)
                data = encoder.encode(fields, huffman=rng.random() < 0.9)
                print(data.hex() + " " + json.dumps([[str(n), str(v)] for n, v in fields]))
            """
        try Self.decodeEach(of: script, expecting: 600) { fields, index in
            for field in fields {
                #expect(field.isWellFormed == !field.value.utf8.contains { $0 == 0 || $0 == 0x0A || $0 == 0x0D }, "block \(index): \(field.name)")
            }
        }
    }

    /// The fuzzer's recall property (``HPACKRecallChecks``) on its saved inputs and on blocks
    /// NIOHPACK writes: tokens from a small pool sent never indexed (as nghttp2 sends
    /// `authorization`), fresh paths without indexing, and one byte in five inputs changed; the
    /// decoder that recalls literals and the one that does not must agree on every block.
    @Test func recallChangesNothingAgainstAFreshDecode() throws {
        for path in Fixtures.fuzzInputs("FuzzHTTP2Server") {
            #expect(HPACKRecallChecks.check(try Fixtures.bytes(path)) == [], "\(path)")
        }
        var generator = SeededGenerator(seed: 7_341)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.\r")
        let pool = (0..<4).map { _ in String((0..<Int.random(in: 20...150, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }) }
        for _ in 0..<2_000 {
            var encoder = HPACKEncoder(allocator: ByteBufferAllocator(), useHuffmanEncoding: true)
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                var headers = HPACKHeaders()
                headers.add(name: ":path", value: "/3/device/" + String(Int.random(in: 0...Int.max, using: &generator), radix: 16), indexing: .nonIndexable)
                headers.add(name: "authorization", value: pool.randomElement(using: &generator)!, indexing: .neverIndexed)
                try encoder.beginEncoding(allocator: ByteBufferAllocator())
                try encoder.append(headers: headers)
                let block = Array(try encoder.endEncoding().readableBytesView)
                #expect(block.count <= 255)
                bytes += [UInt8(block.count)] + block
            }
            if Int.random(in: 0..<5, using: &generator) == 0, !bytes.isEmpty {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            let violations = HPACKRecallChecks.check(bytes)
            #expect(violations == [], "\(bytes)")
        }
    }

    /// NIOHPACK's encoder (Huffman on) writing every octet value in names' values, in random
    /// blocks on one connection, read back field for field; well-formedness as RFC 9113 §8.2.1
    /// defines it.
    @Test func nioHPACKsBlocksDecodeToTheirFields() throws {
        var generator = SeededGenerator(seed: 5_150)
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator(), useHuffmanEncoding: true)
        var decoder = HPACKBlockDecoder(maximumListSize: 1 << 20)
        for round in 0..<500 {
            var fields: [(String, String)] = []
            for _ in 0..<Int.random(in: 1...10, using: &generator) {
                let name = ["apns-topic", ":path", "x-\(Int.random(in: 0...20, using: &generator))", "Upper-Case", "a b"].randomElement(using: &generator)!
                let value = String(decoding: (0..<Int.random(in: 0...80, using: &generator)).map { _ in UInt8.random(in: 0...127, using: &generator) }, as: UTF8.self)
                fields.append((name, value))
            }
            try encoder.beginEncoding(allocator: ByteBufferAllocator())
            for (name, value) in fields { try encoder.append(header: name, value: value) }
            let block = try encoder.endEncoding()
            let decoded = try decoder.decode(block)
            #expect(decoded.map { "\($0.name)=\($0.value)" } == fields.map { "\($0.0)=\($0.1)" }, "round \(round)")
            for field in decoded {
                let nameOK = !field.name.isEmpty && field.name.utf8.dropFirst(field.name.hasPrefix(":") ? 1 : 0).allSatisfy { byte in
                    byte > 0x20 && byte < 0x7F && !"\"(),/:;<=>?@[\\]{}".utf8.contains(byte) && !(byte >= 0x41 && byte <= 0x5A)
                }
                let valueOK = !field.value.utf8.contains { $0 == 0 || $0 == 0x0A || $0 == 0x0D }
                #expect(field.isWellFormed == (nameOK && valueOK), "\(field.name)=\(field.value.debugDescription)")
            }
        }
    }

    /// Every octet in a Huffman string, and every short string, through NIOHPACK's Huffman
    /// encoder and back.
    @Test func huffmanStringsOfEveryOctetDecode() throws {
        var all = (0...255).map { UInt8($0) }
        all += all.reversed()
        for length in [0, 1, 2, 3, 7, 8, 9, 100, all.count] {
            let text = Array(all.prefix(length))
            let name = "x"
            // A literal with a literal name, its value Huffman-coded by NIOHPACK.
            var encoder = HPACKEncoder(allocator: ByteBufferAllocator(), useHuffmanEncoding: true)
            try encoder.beginEncoding(allocator: ByteBufferAllocator())
            try encoder.append(header: name, value: String(decoding: text, as: UTF8.self))
            let block = try encoder.endEncoding()
            var decoder = HPACKBlockDecoder(maximumListSize: 1 << 20)
            let fields = try decoder.decode(block)
            #expect(fields.first?.value == String(decoding: text, as: UTF8.self), "\(length)")
        }
        // Straight through the Huffman decoder, octets that are not UTF-8 too.
        var bits: [Bool] = []
        for byte in all {
            let code = HuffmanCode.codes[Int(byte)], length = Int(HuffmanCode.lengths[Int(byte)])
            for position in stride(from: length - 1, through: 0, by: -1) { bits.append(code >> UInt32(position) & 1 == 1) }
        }
        while bits.count % 8 != 0 { bits.append(true) }
        let packed = stride(from: 0, to: bits.count, by: 8).map { start in bits[start..<start + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) } }
        var output: [UInt8] = []
        try packed.withUnsafeBytes { try HuffmanCode.decode($0, into: &output) }
        #expect(output == all)
    }

    /// Blocks RFC 7541 forbids, each refused (and a list past its bound).
    @Test(arguments: [
        ("index 0", "80", false),
        ("an index beyond the table", "be", false),
        ("an index far beyond the table", "ff ff ff 7f", false),
        ("an integer above 2^28", "ff ff ff ff ff 7f", false),
        ("an integer cut short", "ff ff", false),
        ("a string longer than the block", "40 05 61 62", false),
        ("a block ending before a value", "40 01 61", false),
        ("a table size update after a field", "82 3f e1 1f", false),
        ("three table size updates", "20 20 20 82", false),
        ("a table size above 4,096", "3f e2 1f 82", false),
        ("Huffman padding of 8 bits", "40 81 ff 00", false),
        ("Huffman padding that is not ones", "40 01 61 81 00", false),
        ("EOS in a Huffman string", "40 01 61 84 ff ff ff ff", false),
        ("a list over 100 bytes", "40 01 61 7f 00" + String(repeating: " 62", count: 127), true),
    ])
    func malformedBlocksAreRefused(_ name: String, _ hex: String, _ tooLarge: Bool) {
        var decoder = HPACKBlockDecoder(maximumListSize: 100)
        do {
            let fields = try decoder.decode(Self.bytes(hex))
            Issue.record("\(name): decoded \(Self.pairs(fields))")
        } catch {
            if case .listTooLarge = error { #expect(tooLarge, "\(name)") } else { #expect(!tooLarge, "\(name): \(error)") }
        }
    }

    /// The table keeps entries to its size: a new entry evicts the oldest; a size update of 0
    /// empties it; an entry larger than the table empties it and is not kept.
    @Test func theTableEvictsAsRFC7541Says() throws {
        var decoder = HPACKBlockDecoder(allowedTableSize: 100, maximumListSize: 16_384)
        // Two entries of 32 + 1 + 30 = 63 bytes: the second evicts the first.
        let a = "40 01 61 1e" + String(repeating: " 41", count: 30)
        let b = "40 01 62 1e" + String(repeating: " 42", count: 30)
        _ = try decoder.decode(Self.bytes(a + b))
        #expect(Self.pairs(try decoder.decode(Self.bytes("be"))) == ["b: " + String(repeating: "B", count: 30)])
        #expect(throws: HPACKBlockDecoder.DecodingError.self) { try decoder.decode(Self.bytes("bf")) }
        // Size 0, then back to 100: empty.
        _ = try decoder.decode(Self.bytes("20 3f 45 82"))
        #expect(throws: HPACKBlockDecoder.DecodingError.self) { try decoder.decode(Self.bytes("be")) }
        // An entry of 32 + 1 + 80 bytes is larger than the table: read, not kept.
        let large = "40 01 63 50" + String(repeating: " 43", count: 80)
        #expect(try decoder.decode(Self.bytes(a + large)).count == 2)
        #expect(throws: HPACKBlockDecoder.DecodingError.self) { try decoder.decode(Self.bytes("be")) }
    }
}
