import NIOCore

/// Frame types (RFC 9113 §6), numbered from DATA (0x0) to CONTINUATION (0x9). A type outside
/// these is an extension's and is ignored (RFC 9113 §5.5).
enum FrameType: UInt8 {
    case data, headers, priority, rstStream, settings, pushPromise, ping, goAway, windowUpdate, continuation
}

/// Frame flags (RFC 9113 §6).
enum Flag {
    static let endStream: UInt8 = 0x1
    static let ack: UInt8 = 0x1
    static let endHeaders: UInt8 = 0x4
    static let padded: UInt8 = 0x8
    static let priority: UInt8 = 0x20
}

/// Sizes both sides share (RFC 9113 §4.2, §6.5.2, §6.9).
enum FrameLimits {
    /// `SETTINGS_MAX_FRAME_SIZE`'s initial value: neither session raises it.
    static let defaultFrameSize = 16_384
    /// A flow-control window's largest value, 2^31-1.
    static let largestWindow = Int(Int32.max)
    /// The frame header: length (24 bits), type, flags, stream (31 bits).
    static let headerSize = 9
}

extension ByteBuffer {
    /// Writes a frame's 9-byte header (RFC 9113 §4.1).
    mutating func writeFrameHeader(length: Int, type: FrameType, flags: UInt8, stream: Int32) {
        writeInteger(UInt16(truncatingIfNeeded: length >> 8))
        writeInteger(UInt8(truncatingIfNeeded: length))
        writeInteger(type.rawValue)
        writeInteger(flags)
        writeInteger(UInt32(bitPattern: stream))
    }

    /// Overwrites the 9-byte frame header at `index` (reserved before its payload was written).
    mutating func setFrameHeader(at index: Int, length: Int, type: FrameType, flags: UInt8, stream: Int32) {
        setInteger(UInt16(truncatingIfNeeded: length >> 8), at: index)
        setInteger(UInt8(truncatingIfNeeded: length), at: index + 2)
        setInteger(type.rawValue, at: index + 3)
        setInteger(flags, at: index + 4)
        setInteger(UInt32(bitPattern: stream), at: index + 5)
    }

    /// Bytes read from the connection, after those not parsed yet (taken whole when none are).
    mutating func append(_ bytes: inout ByteBuffer) {
        if readableBytes == 0 {
            self = bytes
        } else {
            writeBuffer(&bytes)
        }
    }

    /// Once read to the end, goes back to `empty`, so the read buffers are not held; a long
    /// run of frames read gives its bytes back.
    mutating func releaseIfRead(returningTo empty: ByteBuffer) {
        if readableBytes == 0 {
            self = empty
        } else if readerIndex > 65_536 {
            discardReadBytes()
        }
    }

    /// Reserves a HEADERS frame's header; the block is written after it, then
    /// ``endHeaderBlock(startingAt:stream:endStream:maximumFrameSize:)`` frames it.
    mutating func beginHeaderBlock() -> Int {
        let frameStart = writerIndex
        writeRepeatingByte(0, count: FrameLimits.headerSize)
        return frameStart
    }

    /// Frames the header block written since ``beginHeaderBlock()``: one HEADERS frame, or
    /// HEADERS and CONTINUATION frames when the block is larger than the peer's frame size.
    mutating func endHeaderBlock(startingAt frameStart: Int, stream: Int32, endStream: Bool, maximumFrameSize: Int) {
        let blockStart = frameStart + FrameLimits.headerSize
        let blockLength = writerIndex - blockStart
        let end = endStream ? Flag.endStream : 0
        if blockLength <= maximumFrameSize {
            setFrameHeader(at: frameStart, length: blockLength, type: .headers, flags: Flag.endHeaders | end, stream: stream)
            return
        }
        var block = getSlice(at: blockStart, length: blockLength)!
        moveWriterIndex(to: frameStart)
        var type = FrameType.headers
        var flags = end
        while block.readableBytes > 0 {
            let chunk = block.readSlice(length: min(block.readableBytes, maximumFrameSize))!
            if block.readableBytes == 0 { flags |= Flag.endHeaders }
            writeFrameHeader(length: chunk.readableBytes, type: type, flags: flags, stream: stream)
            writeImmutableBuffer(chunk)
            type = .continuation
            flags = 0
        }
    }

    /// The header of the frame starting at the reader index, if all nine bytes are here.
    func peekFrameHeader() -> (length: Int, type: UInt8, flags: UInt8, stream: Int32)? {
        guard readableBytes >= FrameLimits.headerSize else { return nil }
        let start = readerIndex
        let length = Int(getInteger(at: start, as: UInt16.self)!) << 8 | Int(getInteger(at: start + 2, as: UInt8.self)!)
        let type = getInteger(at: start + 3, as: UInt8.self)!
        let flags = getInteger(at: start + 4, as: UInt8.self)!
        let stream = Int32(bitPattern: getInteger(at: start + 5, as: UInt32.self)! & 0x7FFF_FFFF)
        return (length, type, flags, stream)
    }
}

/// A payload without its padding (RFC 9113 §6.1), or `nil` when the padding is longer than the
/// payload.
func unpaddedPayload(_ payload: ByteBuffer, flags: UInt8) -> ByteBuffer? {
    guard flags & Flag.padded != 0 else { return payload }
    var payload = payload
    guard let padding = payload.readInteger(as: UInt8.self), Int(padding) <= payload.readableBytes else { return nil }
    return payload.readSlice(length: payload.readableBytes - Int(padding))
}
