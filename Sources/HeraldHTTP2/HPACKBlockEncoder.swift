import NIOCore

/// Writes header blocks (RFC 7541), the client's requests and the mock's answers, choosing per
/// header whether the peer's dynamic table should keep it.
///
/// Headers that repeat from request to request (`:authority`, `authorization`, `apns-topic`,
/// `apns-push-type`, `apns-priority`) are added to the table once and then sent as one index
/// byte. Headers that change every time (`:path` with its device token, `apns-id`,
/// `apns-expiration`, `apns-collapse-id`) are sent as literals that the table does not keep, so
/// they never evict the useful entries (Apple's “Establishing a connection to APNs” gives the
/// same advice). Nothing is Huffman-coded: the values are short, and the CPU time is worth more
/// than the bytes.
///
/// The encoder mirrors the table the peer's decoder keeps: its size is the smaller of 4,096
/// bytes and the peer's `SETTINGS_HEADER_TABLE_SIZE`, and a change is announced at the start
/// of the next block (RFC 7541 §4.2). An answer's `:status` is one index byte for the codes the
/// static table holds, and a literal otherwise.
package struct HPACKBlockEncoder {
    private struct Entry {
        var name: String
        var value: String
        var size: Int
    }

    /// The largest table this encoder uses, whatever the server allows.
    package static let largestTableSize = 4_096

    /// The fields of the static table (RFC 7541 Appendix A) that requests and answers use, by
    /// their index.
    package enum Static: Int {
        case authority = 1
        case methodGET = 2
        case methodPOST = 3
        case path = 4
        case schemeHTTP = 6
        case schemeHTTPS = 7
        case status200 = 8
        case authorization = 23
        case contentType = 31
    }

    /// The static table's `:status` entries (RFC 7541 Appendix A, indexes 8 to 14).
    private static let staticStatuses: [Int: Int] = [200: 8, 204: 9, 206: 10, 304: 11, 400: 12, 404: 13, 500: 14]

    /// Entries in the static table; the dynamic table's indexes follow.
    package static let staticTableCount = 61

    /// Oldest first.
    private var entries = CircularBuffer<Entry>(initialCapacity: 16)
    private var size = 0
    package private(set) var maximumSize = 4_096
    private var sizeUpdatePending = false

    /// An encoder for a new connection: an empty table of 4,096 bytes, HPACK's initial size.
    package init() {}

    /// The server's decoder allows a table of `size` bytes (`SETTINGS_HEADER_TABLE_SIZE`).
    package mutating func peerAllows(tableSize: Int) {
        let new = min(max(tableSize, 0), Self.largestTableSize)
        guard new != maximumSize else { return }
        maximumSize = new
        evict(toFit: 0)
        sizeUpdatePending = true
    }

    /// Begins a header block: a pending table size update comes first.
    package mutating func startBlock(into buffer: inout ByteBuffer) {
        if sizeUpdatePending {
            Self.writeInteger(maximumSize, prefixBits: 5, pattern: 0x20, into: &buffer)
            sizeUpdatePending = false
        }
    }

    /// A field that is all in the static table (`:method: POST`).
    package func writeStatic(_ field: Static, into buffer: inout ByteBuffer) {
        Self.writeInteger(field.rawValue, prefixBits: 7, pattern: 0x80, into: &buffer)
    }

    /// `:status`: one index byte when the static table has the code, else a literal the table
    /// does not keep under the static name.
    package func writeStatus(_ status: Int, into buffer: inout ByteBuffer) {
        if let index = Self.staticStatuses[status] {
            Self.writeInteger(index, prefixBits: 7, pattern: 0x80, into: &buffer)
            return
        }
        Self.writeInteger(Static.status200.rawValue, prefixBits: 4, pattern: 0x00, into: &buffer)
        var digits = status
        var text: [UInt8] = []
        repeat {
            text.append(UInt8(ascii: "0") + UInt8(digits % 10))
            digits /= 10
        } while digits > 0
        Self.writeInteger(text.count, prefixBits: 7, pattern: 0x00, into: &buffer)
        buffer.writeBytes(text.reversed())
    }

    /// A field worth keeping: one index byte when the table has it, otherwise a literal that the
    /// table keeps from now on. `staticName` is the static table's index of the name, if any.
    package mutating func writeIndexed(name: String, staticName: Static? = nil, value: String, into buffer: inout ByteBuffer) {
        var nameIndex = staticName?.rawValue ?? 0
        var position = entries.count
        for entry in entries.reversed() {
            if entry.name == name {
                if entry.value == value {
                    Self.writeInteger(Self.staticTableCount + entries.count - position + 1, prefixBits: 7, pattern: 0x80, into: &buffer)
                    return
                }
                if nameIndex == 0 { nameIndex = Self.staticTableCount + entries.count - position + 1 }
            }
            position -= 1
        }
        if nameIndex > 0 {
            Self.writeInteger(nameIndex, prefixBits: 6, pattern: 0x40, into: &buffer)
        } else {
            buffer.writeInteger(UInt8(0x40))
            Self.writeString(name, into: &buffer)
        }
        Self.writeString(value, into: &buffer)
        insert(name: name, value: value)
    }

    /// A field sent once: a literal the table does not keep, its name from the static table.
    package func writeLiteral(staticName: Static, value: String, into buffer: inout ByteBuffer) {
        Self.writeInteger(staticName.rawValue, prefixBits: 4, pattern: 0x00, into: &buffer)
        Self.writeString(value, into: &buffer)
    }

    /// A field sent once, with its name written out.
    package func writeLiteral(name: String, value: String, into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(0x00))
        Self.writeString(name, into: &buffer)
        Self.writeString(value, into: &buffer)
    }

    /// `:path` as a literal the table does not keep, written from two parts (`/3/device/` and
    /// the token) without joining them first.
    package func writePath(_ prefix: String, _ rest: String, into buffer: inout ByteBuffer) {
        Self.writeInteger(Static.path.rawValue, prefixBits: 4, pattern: 0x00, into: &buffer)
        Self.writeInteger(prefix.utf8.count + rest.utf8.count, prefixBits: 7, pattern: 0x00, into: &buffer)
        buffer.writeString(prefix)
        buffer.writeString(rest)
    }

    private mutating func insert(name: String, value: String) {
        // RFC 7541 §4.1: an entry's size is its octets plus 32.
        let entrySize = name.utf8.count + value.utf8.count + 32
        guard entrySize <= maximumSize else {
            // §4.4: a larger entry empties the table and is not added.
            entries.removeAll(keepingCapacity: true)
            size = 0
            return
        }
        evict(toFit: entrySize)
        entries.append(Entry(name: name, value: value, size: entrySize))
        size += entrySize
    }

    private mutating func evict(toFit incoming: Int) {
        while size + incoming > maximumSize, let oldest = entries.popFirst() {
            size -= oldest.size
        }
    }

    /// An integer with an N-bit prefix (RFC 7541 §5.1); `pattern` holds the bits above it.
    static func writeInteger(_ value: Int, prefixBits: Int, pattern: UInt8, into buffer: inout ByteBuffer) {
        let limit = (1 << prefixBits) - 1
        if value < limit {
            buffer.writeInteger(pattern | UInt8(value))
            return
        }
        buffer.writeInteger(pattern | UInt8(limit))
        var rest = value - limit
        while rest >= 128 {
            buffer.writeInteger(UInt8(rest & 0x7F | 0x80))
            rest >>= 7
        }
        buffer.writeInteger(UInt8(rest))
    }

    /// A string literal without Huffman coding (RFC 7541 §5.2).
    static func writeString(_ text: String, into buffer: inout ByteBuffer) {
        writeInteger(text.utf8.count, prefixBits: 7, pattern: 0x00, into: &buffer)
        buffer.writeString(text)
    }
}
