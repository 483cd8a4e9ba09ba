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

extension Array: JSONOutput where Element == UInt8 {
    /// Appends one byte.
    @inlinable
    public mutating func write(_ byte: UInt8) {
        append(byte)
    }

    /// Appends a run of bytes.
    @inlinable
    public mutating func write(_ bytes: UnsafeRawBufferPointer) {
        append(contentsOf: bytes)
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
