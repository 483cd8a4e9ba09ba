/// A destination for JSON bytes: an array, a byte counter, or (in other modules) a network buffer.
///
/// Conform a buffer type to let ``JSONWriter`` write straight into it, with no intermediate copy.
/// The writer calls ``write(_:)-(UInt8)`` for single bytes and ``write(_:)-(UnsafeRawBufferPointer)`` for
/// runs; both must append in order.
public protocol JSONOutput {
    /// Appends one byte.
    mutating func write(_ byte: UInt8)
    /// Appends a run of bytes.
    mutating func write(_ bytes: UnsafeRawBufferPointer)
}

/// An output that collects the bytes in an array.
///
/// ```swift
/// var writer = JSONWriter(output: JSONBytes())
/// writer.beginObject()
/// writer.endObject()
/// writer.output.bytes   // Array("{}".utf8)
/// ```
public struct JSONBytes: JSONOutput, Sendable {
    /// The bytes written so far.
    public var bytes: [UInt8]

    /// An empty output (or one that appends to `bytes`).
    @inlinable
    public init(_ bytes: [UInt8] = []) {
        self.bytes = bytes
    }

    /// Appends one byte.
    @inlinable
    public mutating func write(_ byte: UInt8) {
        bytes.append(byte)
    }

    /// Appends a run of bytes.
    @inlinable
    public mutating func write(_ run: UnsafeRawBufferPointer) {
        // A typed buffer takes Array's memcpy fast path; a raw buffer would be copied byte by byte.
        bytes.append(contentsOf: UnsafeBufferPointer(start: run.baseAddress?.assumingMemoryBound(to: UInt8.self), count: run.count))
    }
}

/// An output that only counts: the exact size a value would have, without writing it.
///
/// ```swift
/// var counter = JSONByteCounter()
/// payload.encode(into: &counter)
/// print(counter.count)   // the bytes APNs will measure
/// ```
public struct JSONByteCounter: JSONOutput, Sendable {
    /// The number of bytes written so far.
    @inlinable public var count: Int { written }

    @usableFromInline var written = 0

    /// Creates a counter at zero.
    public init() {}

    /// Counts one byte.
    @inlinable
    public mutating func write(_ byte: UInt8) {
        written += 1
    }

    /// Counts a run of bytes.
    @inlinable
    public mutating func write(_ bytes: UnsafeRawBufferPointer) {
        written += bytes.count
    }
}

/// An output over memory the caller provides: the cheapest way to write JSON.
///
/// Writes past the end are not stored but still counted, so after writing, ``count`` is the
/// exact size needed and ``overflowed`` says whether to retry with that much room. Herald's
/// `encode()` uses this to write straight into a new array's storage, and a network client can
/// use it with a buffer's writable bytes.
///
/// ```swift
/// var output = JSONFixedBufferOutput(buffer)
/// try payload.encode(into: &output)
/// if output.overflowed { /* retry with output.count bytes */ }
/// ```
public struct JSONFixedBufferOutput: JSONOutput {
    @usableFromInline let base: UnsafeMutableRawPointer?
    @usableFromInline let capacity: Int
    @usableFromInline var written = 0

    /// An output over `buffer`; nothing is written outside it.
    @inlinable
    public init(_ buffer: UnsafeMutableRawBufferPointer) {
        base = buffer.baseAddress
        capacity = buffer.count
    }

    /// Bytes written, including any that did not fit.
    @inlinable public var count: Int { written }

    /// Whether some bytes did not fit; if so, the buffer's contents are incomplete.
    @inlinable public var overflowed: Bool { written > capacity }

    /// Stores one byte if it fits.
    @inlinable
    public mutating func write(_ byte: UInt8) {
        if written < capacity { base.unsafelyUnwrapped.storeBytes(of: byte, toByteOffset: written, as: UInt8.self) }
        written += 1
    }

    /// Stores a run of bytes if it fits.
    @inlinable
    public mutating func write(_ bytes: UnsafeRawBufferPointer) {
        let end = written + bytes.count
        if end <= capacity, let source = bytes.baseAddress {
            (base.unsafelyUnwrapped + written).copyMemory(from: source, byteCount: bytes.count)
        }
        written = end
    }
}

extension Array where Element == UInt8 {
    /// Builds an array by writing JSON straight into its storage: one pass with room for
    /// `estimatedCount` bytes, and a second with the exact size only if that was too little.
    @inlinable
    package init(writingJSON estimatedCount: Int, _ body: (inout JSONFixedBufferOutput) -> Void) {
        var needed = 0
        self.init(unsafeUninitializedCapacity: estimatedCount) { buffer, initialized in
            var output = JSONFixedBufferOutput(UnsafeMutableRawBufferPointer(buffer))
            body(&output)
            needed = output.count
            initialized = output.overflowed ? 0 : output.count
        }
        if needed > estimatedCount {
            self.init(unsafeUninitializedCapacity: needed) { buffer, initialized in
                var output = JSONFixedBufferOutput(UnsafeMutableRawBufferPointer(buffer))
                body(&output)
                initialized = output.count
            }
        }
    }
}
