/// How ``JSONWriter`` lays out its output.
public enum JSONWriterStyle: Sendable, Hashable {
    /// No whitespace at all: the form Herald sends and measures.
    case compact
    /// Two-space indentation, one member or element per line, `"key": value`: for people.
    case pretty
}

/// Writes JSON into any ``JSONOutput``, one token at a time.
///
/// The compact form is exact: no whitespace, non-ASCII written as raw UTF-8 (APNs does not
/// support `\u` notation in alert text), `/` not escaped, and only `"`, `\` and U+0000–U+001F
/// escaped (as `\b \f \n \r \t`, others as `\u00xx`).
///
/// ```swift
/// var writer = JSONWriter(output: JSONBytes())
/// writer.beginObject()
/// writer.key("aps"); writer.beginObject()
/// writer.key("badge"); writer.integer(5)
/// writer.endObject()
/// writer.endObject()
/// // writer.output.bytes == Array(#"{"aps":{"badge":5}}"#.utf8)
/// ```
///
/// The writer does not check that calls form a valid document (a key outside an object, say);
/// that is the caller's contract, kept cheap for the hot path.
public struct JSONWriter<Output: JSONOutput> {
    /// Where the bytes go.
    public var output: Output
    /// The layout.
    public let style: JSONWriterStyle

    /// Whether the next value in the current container needs a comma before it.
    @usableFromInline var needsSeparator = false
    /// Whether a key was just written (so the value follows without a separator).
    @usableFromInline var afterKey = false
    /// Container depth, for pretty indentation.
    @usableFromInline var depth = 0

    /// Creates a writer that appends to `output`.
    @inlinable
    public init(output: Output, style: JSONWriterStyle = .compact) {
        self.output = output
        self.style = style
    }

    // MARK: Structure

    /// Writes `{`.
    @inlinable
    public mutating func beginObject() {
        openContainer(UInt8(ascii: "{"))
    }

    /// Writes `}`.
    @inlinable
    public mutating func endObject() {
        closeContainer(UInt8(ascii: "}"))
    }

    /// Writes `[`.
    @inlinable
    public mutating func beginArray() {
        openContainer(UInt8(ascii: "["))
    }

    /// Writes `]`.
    @inlinable
    public mutating func endArray() {
        closeContainer(UInt8(ascii: "]"))
    }

    /// Writes an object key and the colon after it.
    @inlinable
    public mutating func key(_ key: String) {
        prepareForMember()
        Self.writeQuoted(key, to: &output)
        writeColon()
    }

    /// Writes a key that needs no escaping (an ASCII literal without `"`, `\` or control
    /// characters), skipping the escape scan.
    @inlinable
    public mutating func key(_ key: StaticString) {
        prepareForMember()
        output.write(UInt8(ascii: "\""))
        output.write(UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        output.write(UInt8(ascii: "\""))
        writeColon()
    }

    // MARK: Scalars

    /// Writes a string, escaped as described above.
    @inlinable
    public mutating func string(_ value: String) {
        prepareForValue()
        Self.writeQuoted(value, to: &output)
    }

    /// Writes a number's text.
    @inlinable
    public mutating func number(_ value: JSONNumber) {
        prepareForValue()
        if value.text.utf8.withContiguousStorageIfAvailable({ output.write(UnsafeRawBufferPointer($0)) }) == nil {
            var text = value.text
            text.withUTF8 { output.write(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Writes an integer.
    @inlinable
    public mutating func integer<Integer: BinaryInteger>(_ value: Integer) {
        prepareForValue()
        Self.writeInteger(Int64(value), to: &output)
    }

    /// Writes a `Double` in its shortest form (see ``JSONNumber/init(_:)-(Double)``).
    ///
    /// JSON has no NaN or infinity: a non-finite value is written as `null`, as JavaScript's
    /// `JSON.stringify` does. Check values first where that matters (`Payload` encoding
    /// refuses them with an error naming the key).
    @inlinable
    public mutating func double(_ value: Double) {
        guard value.isFinite else {
            null()
            return
        }
        prepareForValue()
        if let integer = JSONNumber.exactInteger(value) {
            Self.writeInteger(integer, to: &output)
        } else {
            var text = value.description
            text.withUTF8 { output.write(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Writes `true` or `false`.
    @inlinable
    public mutating func bool(_ value: Bool) {
        prepareForValue()
        writeStatic(value ? "true" : "false")
    }

    /// Writes `null`.
    @inlinable
    public mutating func null() {
        prepareForValue()
        writeStatic("null")
    }

    /// Writes a whole value.
    @inlinable
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .number(let text): number(text)
        case .string(let text): string(text)
        case .array(let elements):
            beginArray()
            // Buffer access borrows each element; a for-in loop would copy (retain) it.
            elements.withUnsafeBufferPointer { buffer in
                for index in buffer.indices { self.value(buffer[index]) }
            }
            endArray()
        case .object(let object):
            beginObject()
            object.members.withUnsafeBufferPointer { buffer in
                for index in buffer.indices {
                    key(buffer[index].key)
                    self.value(buffer[index].value)
                }
            }
            endObject()
        }
    }

    /// Writes bytes that are already one complete, canonical JSON value (for example a string
    /// span copied from a parsed document), as the next value.
    @inlinable
    public mutating func rawValue(_ bytes: UnsafeRawBufferPointer) {
        prepareForValue()
        output.write(bytes)
    }

    // MARK: Internals

    @inlinable
    mutating func prepareForValue() {
        if afterKey {
            afterKey = false
            return
        }
        if depth > 0 { separate() }
    }

    @inlinable
    mutating func prepareForMember() {
        separate()
    }

    @inlinable
    mutating func separate() {
        if needsSeparator { output.write(UInt8(ascii: ",")) }
        needsSeparator = true
        if style == .pretty { writeNewlineAndIndent(depth) }
    }

    @inlinable
    mutating func writeColon() {
        output.write(UInt8(ascii: ":"))
        if style == .pretty { output.write(UInt8(ascii: " ")) }
        afterKey = true
    }

    @inlinable
    mutating func openContainer(_ bracket: UInt8) {
        prepareForValue()
        output.write(bracket)
        depth += 1
        needsSeparator = false
    }

    @inlinable
    mutating func closeContainer(_ bracket: UInt8) {
        depth -= 1
        if style == .pretty && needsSeparator { writeNewlineAndIndent(depth) }
        output.write(bracket)
        needsSeparator = true
    }

    @usableFromInline
    mutating func writeNewlineAndIndent(_ level: Int) {
        output.write(UInt8(ascii: "\n"))
        for _ in 0..<level * 2 { output.write(UInt8(ascii: " ")) }
    }

    @inlinable
    mutating func writeStatic(_ text: StaticString) {
        output.write(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}

// MARK: - Shared encoders

extension JSONWriter {
    /// Writes `value` as a quoted, escaped JSON string.
    @inlinable
    public static func writeQuoted(_ value: String, to output: inout Output) {
        // Native strings expose their UTF-8 in place; only foreign ones need a copy.
        if let done: Void = value.utf8.withContiguousStorageIfAvailable({ writeQuoted(utf8: $0, to: &output) }) {
            return done
        }
        var copy = value
        copy.withUTF8 { writeQuoted(utf8: $0, to: &output) }
    }

    /// Writes UTF-8 bytes as a quoted, escaped JSON string: runs that need no escape are copied
    /// whole.
    @inlinable
    public static func writeQuoted(utf8: UnsafeBufferPointer<UInt8>, to output: inout Output) {
        output.write(UInt8(ascii: "\""))
        let count = utf8.count
        var runStart = 0
        var index = ByteScan.firstNeedingEscape(in: utf8, from: 0)
        while index < count {
            if runStart < index {
                output.write(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(utf8)[runStart..<index]))
            }
            writeEscape(utf8[index], to: &output)
            runStart = index + 1
            index = ByteScan.firstNeedingEscape(in: utf8, from: runStart)
        }
        if runStart < count {
            output.write(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(utf8)[runStart..<count]))
        }
        output.write(UInt8(ascii: "\""))
    }

    @inlinable
    static func writeEscape(_ byte: UInt8, to output: inout Output) {
        output.write(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""): output.write(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): output.write(UInt8(ascii: "\\"))
        case 0x08: output.write(UInt8(ascii: "b"))
        case 0x0C: output.write(UInt8(ascii: "f"))
        case 0x0A: output.write(UInt8(ascii: "n"))
        case 0x0D: output.write(UInt8(ascii: "r"))
        case 0x09: output.write(UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            output.write(UInt8(ascii: "u"))
            output.write(UInt8(ascii: "0"))
            output.write(UInt8(ascii: "0"))
            output.write(hex.utf8Start[Int(byte >> 4)])
            output.write(hex.utf8Start[Int(byte & 0xF)])
        }
    }

    /// Writes the decimal text of an integer.
    @inlinable
    public static func writeInteger(_ value: Int64, to output: inout Output) {
        if value >= 0 && value < 10 {
            output.write(UInt8(ascii: "0") + UInt8(value))
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var index = 20
            repeat {
                index -= 1
                digits[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                output.write(UInt8(ascii: "-"))
            }
            output.write(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(digits)[index..<20]))
        }
    }
}
