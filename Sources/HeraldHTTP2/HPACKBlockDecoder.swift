import NIOCore

/// Reads header blocks (RFC 7541) into fields, keeping the dynamic table the peer's encoder
/// fills.
///
/// A field the table holds is kept decoded (its name and value as `String`s, and whether they
/// are well formed), so a field a client sends by index on every request, as most do with
/// `apns-topic`, costs a lookup and no copy; the last two values sent as literals the table
/// does not keep are recalled too (a provider token sent never indexed). Names and values are
/// checked once as they are read (a lowercase token; no NUL, CR or LF: RFC 9113 §8.2.1), so a
/// request's checks need not read them again.
package struct HPACKBlockDecoder {
    /// One field of a block.
    package struct Field: Sendable {
        /// The name, as sent.
        package var name: String
        /// The value, as sent.
        package var value: String
        /// The name is a lowercase token (a leading `:` aside) and the value has no NUL, CR or
        /// LF.
        package var isWellFormed: Bool

        package init(name: String, value: String, isWellFormed: Bool) {
            self.name = name
            self.value = value
            self.isWellFormed = isWellFormed
        }
    }

    /// What a block failed on. Either way the table can no longer be trusted: the connection
    /// is over (`COMPRESSION_ERROR`, or `ENHANCE_YOUR_CALM` for a list too large).
    package enum DecodingError: Error, CustomStringConvertible {
        /// The decoded fields add up to more than the list size allowed (RFC 7541 §4.1 sizes).
        case listTooLarge(limit: Int)
        /// Not HPACK: what was wrong.
        case malformed(String)

        package var description: String {
            switch self {
            case .listTooLarge(let limit): "a header list larger than \(limit) bytes"
            case .malformed(let reason): reason
            }
        }
    }

    private struct Entry {
        var field: Field
        var nameIsToken: Bool
        var size: Int
    }

    /// Oldest first; index 62 (the first dynamic index) is the newest.
    private var entries = CircularBuffer<Entry>(initialCapacity: 16)
    private var size = 0
    /// The table's size now: at most ``allowedTableSize``, lowered by the encoder's updates.
    package private(set) var tableSize: Int
    /// `SETTINGS_HEADER_TABLE_SIZE` as the decoder's side announced it (4,096 by default).
    package let allowedTableSize: Int
    /// The largest header list decoded (`SETTINGS_MAX_HEADER_LIST_SIZE`).
    package let maximumListSize: Int

    /// The Huffman-coded values of the last fields the table was not asked to keep, decoded.
    /// nghttp2 (h2load, curl) sends `authorization` never indexed and `:path` without
    /// indexing, python-h2 `authorization` never indexed, so a client's provider token comes
    /// as the same literal on every request of a connection: it is decoded once and its
    /// `String` shared, not decoded again each time (it was about 2% of the mock's time a
    /// request). Two values of 24 to 512 coded bytes are kept, the one used less recently
    /// replaced: a token sent again stays while a `:path` that differs on every request takes
    /// the other slot.
    private var recent: (RecentValue?, RecentValue?) = (nil, nil)
    private var recentHit = 0

    private struct RecentValue {
        static let minimumCount = 24
        static let maximumCount = 512
        var raw: [UInt8]
        var text: String
        var wellFormed: Bool

        func matches(_ bytes: UnsafeRawBufferPointer) -> Bool {
            raw.count == bytes.count && raw.withUnsafeBytes { HPACKBlockDecoder.equal($0, bytes) }
        }
    }

    /// Whether two buffers of the same length hold the same bytes, eight at a time.
    static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let count = a.count
        var offset = 0
        while offset + 8 <= count {
            if a.loadUnaligned(fromByteOffset: offset, as: UInt64.self) != b.loadUnaligned(fromByteOffset: offset, as: UInt64.self) { return false }
            offset += 8
        }
        while offset < count {
            if a[offset] != b[offset] { return false }
            offset += 1
        }
        return true
    }

    /// Whether values are recalled (``recent``); off only in the checks that compare the two.
    private let recalls: Bool

    /// A decoder for a new connection: an empty table. `recallingLiterals: false` decodes every
    /// literal afresh (the fuzzer's oracle for the recall).
    package init(allowedTableSize: Int = 4_096, maximumListSize: Int, recallingLiterals: Bool = true) {
        self.allowedTableSize = allowedTableSize
        tableSize = allowedTableSize
        self.maximumListSize = maximumListSize
        recalls = recallingLiterals
    }

    /// The fields of one whole header block (its HEADERS and CONTINUATION fragments joined).
    package mutating func decode(_ block: ByteBuffer) throws(DecodingError) -> [Field] {
        var result: Result<[Field], DecodingError> = .success([])
        block.withUnsafeReadableBytes { bytes in
            do throws(DecodingError) {
                result = .success(try decode(bytes))
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }

    private mutating func decode(_ bytes: UnsafeRawBufferPointer) throws(DecodingError) -> [Field] {
        var fields: [Field] = []
        fields.reserveCapacity(12)
        var listSize = 0
        var position = 0
        var sizeUpdates = 0
        while position < bytes.count {
            let first = bytes[position]
            let field: Field
            if first & 0x80 != 0 {
                // An indexed field (§6.1).
                let index = try Self.integer(bytes, &position, prefix: 7)
                field = try entry(index).field
            } else if first & 0x40 != 0 {
                // A literal the table keeps (§6.2.1).
                let (literal, nameIsToken) = try literalField(bytes, &position, prefix: 6)
                field = literal
                insert(Entry(field: literal, nameIsToken: nameIsToken, size: literal.name.utf8.count + literal.value.utf8.count + 32))
            } else if first & 0x20 != 0 {
                // A table size update (§6.3): only before the block's first field, at most two.
                guard fields.isEmpty, sizeUpdates < 2 else { throw .malformed("a table size update after the block's first field") }
                sizeUpdates += 1
                let new = try Self.integer(bytes, &position, prefix: 5)
                guard new <= allowedTableSize else { throw .malformed("a table size of \(new), above the \(allowedTableSize) allowed") }
                tableSize = new
                evict(toFit: 0)
                continue
            } else {
                // A literal the table does not keep, or never indexed (§6.2.2, §6.2.3).
                field = try literalField(bytes, &position, prefix: 4, recalling: true).field
            }
            listSize += field.name.utf8.count + field.value.utf8.count + 32
            if listSize > maximumListSize { throw .listTooLarge(limit: maximumListSize) }
            fields.append(field)
        }
        return fields
    }

    /// A literal field whose name is indexed or literal, its value literal.
    private mutating func literalField(
        _ bytes: UnsafeRawBufferPointer, _ position: inout Int, prefix: Int, recalling: Bool = false
    ) throws(DecodingError) -> (field: Field, nameIsToken: Bool) {
        let index = try Self.integer(bytes, &position, prefix: prefix)
        let name: String
        let nameIsToken: Bool
        if index == 0 {
            (name, nameIsToken) = try string(bytes, &position, isName: true)
        } else {
            let named = try entry(index)
            name = named.field.name
            nameIsToken = named.nameIsToken
        }
        let (value, valueIsClean) = try string(bytes, &position, isName: false, recalling: recalling)
        return (Field(name: name, value: value, isWellFormed: nameIsToken && valueIsClean), nameIsToken)
    }

    /// A string literal (§5.2), and whether it is a well-formed name (`isName`) or value.
    private mutating func string(
        _ bytes: UnsafeRawBufferPointer, _ position: inout Int, isName: Bool, recalling: Bool = false
    ) throws(DecodingError) -> (String, Bool) {
        guard position < bytes.count else { throw .malformed("a block that ends before a string") }
        let huffman = bytes[position] & 0x80 != 0
        let length = try Self.integer(bytes, &position, prefix: 7)
        guard length <= bytes.count - position else { throw .malformed("a string of \(length) bytes, longer than the block") }
        let raw = UnsafeRawBufferPointer(rebasing: bytes[position..<(position + length)])
        position += length
        guard huffman else { return (String(decoding: raw, as: UTF8.self), Self.check(raw, isName: isName)) }
        let recallable = recalls && recalling && length >= RecentValue.minimumCount && length <= RecentValue.maximumCount
        if recallable {
            // Compared in place: a slot copied out retains its bytes and its text.
            if recent.0?.matches(raw) == true {
                recentHit = 0
                return (recent.0!.text, recent.0!.wellFormed)
            }
            if recent.1?.matches(raw) == true {
                recentHit = 1
                return (recent.1!.text, recent.1!.wellFormed)
            }
        }
        // Decoded straight into the string's storage (the string then checks it is UTF-8).
        var failure: HuffmanCode.DecodingError?
        var wellFormed = false
        let text = String(unsafeUninitializedCapacity: HuffmanCode.maximumDecodedCount(length)) { storage in
            do throws(HuffmanCode.DecodingError) {
                let written = try HuffmanCode.decode(raw, into: storage)
                wellFormed = Self.check(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: storage[..<written])), isName: isName)
                return written
            } catch {
                failure = error
                return 0
            }
        }
        if let failure {
            throw .malformed(failure == .endOfString ? "a Huffman string with EOS in it" : "a Huffman string with bad padding")
        }
        if recallable {
            let value = RecentValue(raw: Array(raw), text: text, wellFormed: wellFormed)
            // The slot used less recently takes it (least recently used of two).
            if recentHit == 0 {
                recent.1 = value
                recentHit = 1
            } else {
                recent.0 = value
                recentHit = 0
            }
        }
        return (text, wellFormed)
    }

    /// A name: a lowercase token, after a leading `:`. A value: no NUL, CR or LF.
    private static func check(_ bytes: UnsafeRawBufferPointer, isName: Bool) -> Bool {
        if isName {
            var rest = bytes[...]
            if rest.first == UInt8(ascii: ":") { rest = rest.dropFirst() }
            return !rest.isEmpty && rest.allSatisfy(isTokenCharacter)
        }
        for byte in bytes where byte <= 0x0D && (byte == 0 || byte == 0x0A || byte == 0x0D) { return false }
        return true
    }

    /// `tchar` (RFC 9110 §5.6.2) without uppercase letters.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x21, 0x23...0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x30...0x39, 0x5E...0x7A, 0x7C, 0x7E: true
        default: false
        }
    }

    /// An integer with an N-bit prefix (§5.1), at most 2^28 (nothing in a block needs more).
    private static func integer(_ bytes: UnsafeRawBufferPointer, _ position: inout Int, prefix: Int) throws(DecodingError) -> Int {
        let limit = (1 << prefix) - 1
        var value = Int(bytes[position]) & limit
        position += 1
        guard value == limit else { return value }
        var shift = 0
        while true {
            guard position < bytes.count else { throw .malformed("a block that ends inside an integer") }
            let byte = bytes[position]
            position += 1
            value += Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
            guard shift <= 21 else { throw .malformed("an integer above 2^28") }
        }
    }

    private func entry(_ index: Int) throws(DecodingError) -> Entry {
        if index >= 1, index <= Self.staticTable.count { return Self.staticTable[index - 1] }
        let dynamic = index - Self.staticTable.count - 1
        guard index > 0, dynamic < entries.count else { throw .malformed("index \(index), which the table does not have") }
        return entries[entries.index(entries.endIndex, offsetBy: -1 - dynamic)]
    }

    private mutating func insert(_ entry: Entry) {
        // An entry larger than the table empties it and is not added (§4.4).
        guard entry.size <= tableSize else {
            entries.removeAll(keepingCapacity: true)
            size = 0
            return
        }
        evict(toFit: entry.size)
        entries.append(entry)
        size += entry.size
    }

    private mutating func evict(toFit incoming: Int) {
        while size + incoming > tableSize, let oldest = entries.popFirst() { size -= oldest.size }
    }

    /// RFC 7541 Appendix A.
    private static let staticTable: [Entry] = [
        (":authority", ""), (":method", "GET"), (":method", "POST"), (":path", "/"), (":path", "/index.html"), (":scheme", "http"),
        (":scheme", "https"), (":status", "200"), (":status", "204"), (":status", "206"), (":status", "304"), (":status", "400"),
        (":status", "404"), (":status", "500"), ("accept-charset", ""), ("accept-encoding", "gzip, deflate"), ("accept-language", ""),
        ("accept-ranges", ""), ("accept", ""), ("access-control-allow-origin", ""), ("age", ""), ("allow", ""), ("authorization", ""),
        ("cache-control", ""), ("content-disposition", ""), ("content-encoding", ""), ("content-language", ""), ("content-length", ""),
        ("content-location", ""), ("content-range", ""), ("content-type", ""), ("cookie", ""), ("date", ""), ("etag", ""), ("expect", ""),
        ("expires", ""), ("from", ""), ("host", ""), ("if-match", ""), ("if-modified-since", ""), ("if-none-match", ""), ("if-range", ""),
        ("if-unmodified-since", ""), ("last-modified", ""), ("link", ""), ("location", ""), ("max-forwards", ""), ("proxy-authenticate", ""),
        ("proxy-authorization", ""), ("range", ""), ("referer", ""), ("refresh", ""), ("retry-after", ""), ("server", ""), ("set-cookie", ""),
        ("strict-transport-security", ""), ("transfer-encoding", ""), ("user-agent", ""), ("vary", ""), ("via", ""), ("www-authenticate", ""),
    ].map { Entry(field: Field(name: $0.0, value: $0.1, isWellFormed: true), nameIsToken: true, size: $0.0.utf8.count + $0.1.utf8.count + 32) }

    /// The static table's fields, for tests.
    package static var staticFields: [(String, String)] { staticTable.map { ($0.field.name, $0.field.value) } }
}
