/// A position in a source text: byte offset, line and column.
///
/// Lines and columns are 1-based. A line ends at LF, CR or CRLF. Columns count Unicode scalars
/// from the start of the line (a tab counts as one), so a column in Korean or emoji text matches
/// what an editor shows; a byte that is not valid UTF-8 counts as one column.
public struct SourceLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 0-based byte offset.
    public var offset: Int
    /// The 1-based line.
    public var line: Int
    /// The 1-based column, in Unicode scalars.
    public var column: Int

    /// Creates a location from its parts.
    public init(offset: Int, line: Int, column: Int) {
        self.offset = offset
        self.line = line
        self.column = column
    }

    /// Computes the line and column of `offset` in `bytes` (a linear scan; for many lookups in one
    /// text use ``SourceLocator``).
    public init(offset: Int, in bytes: some Collection<UInt8>) {
        var locator = SourceLocator(bytes: Array(bytes))
        self = locator.location(ofOffset: offset)
    }

    /// `LINE:COLUMN`.
    public var description: String { "\(line):\(column)" }

    /// The location of `offset`, scanning `bytes` from the start (line breaks as in
    /// ``SourceLocator``).
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, upTo offset: Int) -> SourceLocation {
        let offset = max(0, min(offset, bytes.count))
        var line = 1
        var lineStart = 0
        var index = 0
        while index < offset {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\n") {
                line += 1
                lineStart = index + 1
            } else if byte == UInt8(ascii: "\r") {
                // CRLF is one break; an offset on its LF is on the next line, at column 1.
                if index + 1 < offset, bytes[index + 1] == UInt8(ascii: "\n") { index += 1 }
                line += 1
                lineStart = index + 1
            }
            index += 1
        }
        var column = 1
        for position in lineStart..<offset where bytes[position] & 0xC0 != 0x80 { column += 1 }
        return SourceLocation(offset: offset, line: line, column: column)
    }

    public static func < (lhs: SourceLocation, rhs: SourceLocation) -> Bool { lhs.offset < rhs.offset }
}

/// Walks a text forward, keeping the line and column of where it stands: the locations of
/// offsets asked for in increasing order cost one pass over the text in all (an offset before
/// the last one starts again from the beginning). Line breaks and columns as in
/// ``SourceLocation``.
public struct SourceCursor: Sendable {
    private var index = 0
    private var line = 1
    private var column = 1

    /// A cursor at the start of a text.
    public init() {}

    /// The location of `offset` in `bytes` (clamped to the text).
    public mutating func location(ofOffset offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> SourceLocation {
        let offset = max(0, min(offset, bytes.count))
        if offset < index { self = SourceCursor() }
        while index < offset {
            // Eight bytes at a time while none is a line break: each byte that starts a character
            // (any but a UTF-8 continuation byte, 0b10xxxxxx) is a column.
            if index + 8 <= offset {
                let word = UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)
                if !Self.contains(UInt8(ascii: "\n"), in: word), !Self.contains(UInt8(ascii: "\r"), in: word) {
                    let continuations = word & ~(word << 1) & 0x8080_8080_8080_8080
                    column += 8 - continuations.nonzeroBitCount
                    index += 8
                    continue
                }
            }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
                index += 1
            } else if byte == UInt8(ascii: "\r") {
                // CRLF is one break (an offset on its LF is on the next line, at column 1).
                index += index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "\n") ? 2 : 1
                line += 1
                column = 1
            } else {
                if byte & 0xC0 != 0x80 { column += 1 }
                index += 1
            }
        }
        return SourceLocation(offset: offset, line: line, column: column)
    }

    /// Whether one of the eight bytes of `word` is `byte`.
    @inline(__always)
    static func contains(_ byte: UInt8, in word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let difference = word ^ (ones &* UInt64(byte))  // a zero byte where `word` has `byte`
        return (difference &- ones) & ~difference & 0x8080_8080_8080_8080 != 0
    }

    /// The locations of `offsets`, in their order, in one pass over `bytes` (they are sorted).
    public static func locations(ofOffsets offsets: [Int], in bytes: UnsafeBufferPointer<UInt8>) -> [SourceLocation] {
        let order = offsets.indices.sorted { offsets[$0] < offsets[$1] }
        var result = [SourceLocation](repeating: SourceLocation(offset: 0, line: 1, column: 1), count: offsets.count)
        var cursor = SourceCursor()
        for position in order { result[position] = cursor.location(ofOffset: offsets[position], in: bytes) }
        return result
    }
}

/// Turns byte offsets into line and column numbers for one text, building its line table once.
///
/// Diagnostics are rare compared to parsing, so documents do not record lines while parsing; a
/// locator is made when the first location is asked for.
public struct SourceLocator: Sendable {
    /// The text.
    public let bytes: [UInt8]
    private var lineStarts: [Int]?

    /// Creates a locator over `bytes`.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The location of the byte at `offset` (clamped to the text; `bytes.count` is the end).
    public mutating func location(ofOffset offset: Int) -> SourceLocation {
        let offset = max(0, min(offset, bytes.count))
        // On the LF of a CRLF: the next line, at column 1 (as the other locators say).
        if offset > 0, offset < bytes.count, bytes[offset] == UInt8(ascii: "\n"), bytes[offset - 1] == UInt8(ascii: "\r") {
            var next = location(ofOffset: offset + 1)
            next.offset = offset
            return next
        }
        let starts = lineStarts ?? Self.computeLineStarts(bytes)
        lineStarts = starts
        // The last line start that is <= offset.
        var low = 0
        var high = starts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if starts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        var column = 1
        var index = starts[low]
        while index < offset {
            // Count scalars: every byte that is not a UTF-8 continuation byte starts one.
            if bytes[index] & 0xC0 != 0x80 { column += 1 }
            index += 1
        }
        return SourceLocation(offset: offset, line: low + 1, column: column)
    }

    private static func computeLineStarts(_ bytes: [UInt8]) -> [Int] {
        var starts = [0]
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\n") {
                starts.append(index + 1)
            } else if byte == UInt8(ascii: "\r") {
                if index + 1 < count, bytes[index + 1] == UInt8(ascii: "\n") { index += 1 }
                starts.append(index + 1)
            }
            index += 1
        }
        return starts
    }
}
