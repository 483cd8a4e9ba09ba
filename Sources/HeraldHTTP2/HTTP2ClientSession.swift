import NIOCore
import NIOHPACK

/// The client side of one HTTP/2 connection (RFC 9113) as a value: bytes from the server go in,
/// events and the bytes to send come out. It keeps the connection's rules (settings, flow
/// control in both directions, header compression, stream states, PING and GOAWAY) and knows
/// nothing about APNs or channels, so it can be tested and fuzzed with bytes alone.
///
/// Each stream carries a `Context` (the request it belongs to), handed back with the stream's
/// events. A stream leaves the session when its response ends, when either side resets it, or
/// when it is abandoned after a GOAWAY.
///
/// A connection error (a frame the protocol forbids) throws ``HTTP2ConnectionError``; the session
/// has then queued a GOAWAY with the error's code and takes nothing more, and the connection is
/// to be closed once ``takeOutput()`` is written. A stream error resets that stream only.
package struct HTTP2ClientSession<Context> {
    /// What the client asks of the server in its SETTINGS, and the bounds it keeps.
    package struct Configuration {
        /// `SETTINGS_INITIAL_WINDOW_SIZE`: how much of a response body the server may send
        /// before the client acknowledges it.
        package var streamWindowSize = 1 << 20
        /// The connection's receive window, raised from 65,535 with a WINDOW_UPDATE at start.
        package var connectionWindowSize = 1 << 20
        /// `SETTINGS_MAX_HEADER_LIST_SIZE`, and the most header bytes decoded per block.
        package var maximumHeaderListSize = 16 * 1_024
        /// The most bytes of one header block across its CONTINUATION frames.
        package var maximumHeaderBlockSize = 64 * 1_024
    }

    /// What a frame (or several) from the server meant.
    package enum Event {
        /// The server's SETTINGS were applied (`first`: its connection preface).
        case settings(first: Bool)
        /// A response's header block (or its trailers).
        case headers(Int32, Context, HPACKHeaders, endStream: Bool)
        /// Part of a response body.
        case data(Int32, Context, ByteBuffer, endStream: Bool)
        /// The stream was reset, by the server or by this session for a stream error.
        case reset(Int32, Context, H2ErrorCode)
        /// The server is going away: streams above `lastStreamID` were not processed.
        case goAway(lastStreamID: Int32, code: H2ErrorCode, debugData: ByteBuffer)
        /// The server answered a PING.
        case pingAcknowledged
    }

    @usableFromInline
    struct Stream {
        var context: Context
        var receiveWindow: Int
        var unacknowledged = 0
        /// The request body is all written (some of it may have been held back a while).
        var sentEnd: Bool
    }

    private static var largestWindow: Int { FrameLimits.largestWindow }
    private static var defaultFrameSize: Int { FrameLimits.defaultFrameSize }

    package let configuration: Configuration
    @usableFromInline
    var streams: [Int32: Stream] = [:]
    /// Send windows, and the request bodies they hold back.
    private var outbound = OutboundFlow()
    package private(set) var nextStreamID: Int32 = 1
    private var input: ByteBuffer
    /// An empty buffer that `input` returns to once read, so the read buffers are not held.
    private let empty: ByteBuffer
    @usableFromInline
    var output: ByteBuffer
    private var encoder = HPACKBlockEncoder()
    private var decoder: HPACKDecoder
    /// A header block waiting for its CONTINUATION frames.
    private var continuing: (stream: Int32, endStream: Bool, block: ByteBuffer)?
    private var receivedSettings = false
    @usableFromInline
    var failed = false

    private var connectionReceiveWindow = 65_535
    private var connectionUnacknowledged = 0

    /// The server's `SETTINGS_MAX_CONCURRENT_STREAMS` (unlimited until it says).
    package private(set) var peerMaximumStreams = Int.max
    /// The server's `SETTINGS_MAX_HEADER_LIST_SIZE`, if it sent one.
    package private(set) var peerMaximumHeaderListSize: Int?
    /// The last-stream-id of the server's GOAWAY, once one came.
    package private(set) var goAwayLastStreamID: Int32?

    package init(configuration: Configuration = Configuration(), allocator: ByteBufferAllocator = ByteBufferAllocator()) {
        self.configuration = configuration
        output = allocator.buffer(capacity: 4_096)
        empty = allocator.buffer(capacity: 0)
        input = empty
        decoder = HPACKDecoder(
            allocator: allocator, maxDynamicTableSize: HPACKDecoder.maxDynamicTableSize,
            maxHeaderListSize: configuration.maximumHeaderListSize)
    }

    // MARK: Sending

    /// Queues the connection preface: the magic string, SETTINGS, and a WINDOW_UPDATE that
    /// opens the connection's receive window.
    package mutating func start() {
        output.writeStaticString("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        let settings: [(UInt16, Int)] = [
            (0x2, 0),  // SETTINGS_ENABLE_PUSH: the client takes no pushes
            (0x3, 0),  // SETTINGS_MAX_CONCURRENT_STREAMS: the server may open none
            (0x4, configuration.streamWindowSize),
            (0x6, configuration.maximumHeaderListSize),
        ]
        output.writeFrameHeader(length: settings.count * 6, type: .settings, flags: 0, stream: 0)
        for (identifier, value) in settings {
            output.writeInteger(identifier)
            output.writeInteger(UInt32(value))
        }
        let raise = configuration.connectionWindowSize - connectionReceiveWindow
        if raise > 0 {
            writeWindowUpdate(stream: 0, increment: raise)
            connectionReceiveWindow += raise
        }
    }

    /// Streams open now (they count against the server's limit).
    @inlinable
    package var openStreamCount: Int { streams.count }

    /// Whether the server's limit, its GOAWAY and the stream identifiers allow a new stream.
    // Inlinable (as the other small getters are): a getter of this generic type called from
    // another module is not specialized, and a call copied the whole session (its buffers,
    // tables and streams) to pass it.
    @inlinable
    package var canOpenStream: Bool {
        !failed && goAwayLastStreamID == nil && streams.count < peerMaximumStreams && nextStreamID < Int32.max - 1
    }

    /// Opens a stream: HEADERS (and CONTINUATION when the block is larger than a frame), then as
    /// much of `body` as flow control allows; the rest follows as the server opens its windows.
    /// `writeHeaders` writes the fields through the encoder (pseudo-headers first).
    package mutating func openStream(
        _ context: Context, body: ByteBuffer, writeHeaders: (inout HPACKBlockEncoder, inout ByteBuffer) -> Void
    ) -> Int32 {
        precondition(canOpenStream, "openStream without canOpenStream")
        let id = nextStreamID
        nextStreamID += 2
        let hasBody = body.readableBytes > 0

        let frameStart = output.beginHeaderBlock()
        encoder.startBlock(into: &output)
        writeHeaders(&encoder, &output)
        output.endHeaderBlock(startingAt: frameStart, stream: id, endStream: !hasBody, maximumFrameSize: outbound.maximumFrameSize)
        outbound.open(id)
        let sentEnd = !hasBody || outbound.send(body, on: id, into: &output)
        streams[id] = Stream(context: context, receiveWindow: configuration.streamWindowSize, sentEnd: sentEnd)
        return id
    }

    /// Resets a stream (RST_STREAM) and forgets it; returns its context if it was open.
    package mutating func resetStream(_ id: Int32, code: H2ErrorCode) -> Context? {
        guard let stream = streams.removeValue(forKey: id) else { return nil }
        outbound.close(id)
        writeRstStream(id, code: code)
        return stream.context
    }

    /// Forgets the streams above a GOAWAY's last-stream-id (the server did not process them),
    /// returning their contexts.
    package mutating func abandonStreams(above lastStreamID: Int32) -> [Context] {
        var abandoned: [(Int32, Context)] = []
        for (id, stream) in streams where id > lastStreamID { abandoned.append((id, stream.context)) }
        for (id, _) in abandoned {
            streams.removeValue(forKey: id)
            outbound.close(id)
        }
        return abandoned.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Forgets every stream (the connection closed), returning their contexts.
    package mutating func removeAllStreams() -> [Context] {
        let all = streams.sorted { $0.key < $1.key }.map(\.value.context)
        streams.removeAll()
        outbound.closeAll()
        return all
    }

    /// Queues a PING.
    package mutating func ping(_ data: UInt64) {
        output.writeFrameHeader(length: 8, type: .ping, flags: 0, stream: 0)
        output.writeInteger(data)
    }

    /// Queues a GOAWAY: the client opens no more streams (it has processed none of the server's).
    package mutating func goAway(code: H2ErrorCode) {
        output.writeFrameHeader(length: 8, type: .goAway, flags: 0, stream: 0)
        output.writeInteger(UInt32(0))
        output.writeInteger(code.rawValue)
    }

    /// Whether frames are waiting to be written.
    @inlinable
    package var hasOutput: Bool { output.readableBytes > 0 }

    /// The frames queued since the last call.
    package mutating func takeOutput() -> ByteBuffer {
        let bytes = output
        output.clear()
        return bytes
    }

    // MARK: Receiving

    /// Bytes read from the connection; ``nextEvent()`` parses them.
    package mutating func receive(_ bytes: inout ByteBuffer) {
        input.append(&bytes)
    }

    /// The next event from the bytes received, or `nil` when they hold no more whole frame.
    /// Frames that need only an answer (SETTINGS, PING, WINDOW_UPDATE) queue it and are passed
    /// over.
    package mutating func nextEvent() throws(HTTP2ConnectionError) -> Event? {
        while !failed, input.readableBytes >= 9 {
            let start = input.readerIndex
            let length = Int(input.getInteger(at: start, as: UInt16.self)!) << 8 | Int(input.getInteger(at: start + 2, as: UInt8.self)!)
            let type = input.getInteger(at: start + 3, as: UInt8.self)!
            let flags = input.getInteger(at: start + 4, as: UInt8.self)!
            let stream = Int32(bitPattern: input.getInteger(at: start + 5, as: UInt32.self)! & 0x7FFF_FFFF)
            // The client never raises SETTINGS_MAX_FRAME_SIZE above its default.
            if length > Self.defaultFrameSize {
                throw fail(.frameSizeError, "a frame of \(length) bytes is larger than the \(Self.defaultFrameSize) allowed")
            }
            guard input.readableBytes >= 9 + length else { break }
            input.moveReaderIndex(forwardBy: 9)
            let payload = input.readSlice(length: length)!
            if let event = try handleFrame(type: type, flags: flags, stream: stream, payload: payload) {
                releaseInputIfRead()
                return event
            }
        }
        releaseInputIfRead()
        return nil
    }

    private mutating func releaseInputIfRead() {
        input.releaseIfRead(returningTo: empty)
    }

    private mutating func handleFrame(type rawType: UInt8, flags: UInt8, stream: Int32, payload: ByteBuffer) throws(HTTP2ConnectionError) -> Event? {
        let type = FrameType(rawValue: rawType)
        if !receivedSettings, type != .settings || flags & Flag.ack != 0 {
            throw fail(.protocolError, "the server's first frame is not SETTINGS")
        }
        if let continuing, type != .continuation || stream != continuing.stream {
            throw fail(.protocolError, "a header block on stream \(continuing.stream) was interrupted by another frame")
        }
        guard let type else {
            return nil  // RFC 9113 §5.5: frames of unknown types are ignored
        }
        switch type {
        case .data: return try handleData(flags: flags, stream: stream, payload: payload)
        case .headers: return try handleHeaders(flags: flags, stream: stream, payload: payload)
        case .continuation: return try handleContinuation(flags: flags, stream: stream, payload: payload)
        case .priority:
            if stream == 0 { throw fail(.protocolError, "PRIORITY on stream 0") }
            if payload.readableBytes != 5 { return streamError(stream, .frameSizeError) }
            return nil
        case .rstStream: return try handleRstStream(stream: stream, payload: payload)
        case .settings: return try handleSettings(flags: flags, stream: stream, payload: payload)
        case .pushPromise:
            throw fail(.protocolError, "PUSH_PROMISE, though the client's SETTINGS_ENABLE_PUSH is 0")
        case .ping:
            if stream != 0 { throw fail(.protocolError, "PING on stream \(stream)") }
            if payload.readableBytes != 8 { throw fail(.frameSizeError, "a PING of \(payload.readableBytes) bytes") }
            if flags & Flag.ack != 0 { return .pingAcknowledged }
            output.writeFrameHeader(length: 8, type: .ping, flags: Flag.ack, stream: 0)
            output.writeImmutableBuffer(payload)
            return nil
        case .goAway:
            if stream != 0 { throw fail(.protocolError, "GOAWAY on stream \(stream)") }
            var payload = payload
            guard let last = payload.readInteger(as: UInt32.self), let code = payload.readInteger(as: UInt32.self) else {
                throw fail(.frameSizeError, "a GOAWAY of \(payload.readableBytes) bytes")
            }
            let lastStreamID = Int32(bitPattern: last & 0x7FFF_FFFF)
            // A later GOAWAY may lower the last-stream-id, never raise it.
            goAwayLastStreamID = min(goAwayLastStreamID ?? lastStreamID, lastStreamID)
            return .goAway(lastStreamID: goAwayLastStreamID!, code: H2ErrorCode(rawValue: code), debugData: payload)
        case .windowUpdate: return try handleWindowUpdate(stream: stream, payload: payload)
        }
    }

    private mutating func handleData(flags: UInt8, stream id: Int32, payload: ByteBuffer) throws(HTTP2ConnectionError) -> Event? {
        if id == 0 { throw fail(.protocolError, "DATA on stream 0") }
        let flowControlled = payload.readableBytes
        // Flow control counts the whole frame, padding included (RFC 9113 §6.9.1).
        if flowControlled > connectionReceiveWindow {
            throw fail(.flowControlError, "DATA beyond the connection's receive window")
        }
        connectionReceiveWindow -= flowControlled
        connectionUnacknowledged += flowControlled
        if connectionUnacknowledged >= configuration.connectionWindowSize / 2 {
            writeWindowUpdate(stream: 0, increment: connectionUnacknowledged)
            connectionReceiveWindow += connectionUnacknowledged
            connectionUnacknowledged = 0
        }
        let data = try unpadded(payload, flags: flags, frame: "DATA")
        try checkNotIdle(id, frame: "DATA")
        guard var stream = streams[id] else { return nil }  // closed or reset: dropped
        if flowControlled > stream.receiveWindow {
            return streamError(id, .flowControlError)
        }
        stream.receiveWindow -= flowControlled
        stream.unacknowledged += flowControlled
        let endStream = flags & Flag.endStream != 0
        if !endStream, stream.unacknowledged >= configuration.streamWindowSize / 2 {
            writeWindowUpdate(stream: id, increment: stream.unacknowledged)
            stream.receiveWindow += stream.unacknowledged
            stream.unacknowledged = 0
        }
        if endStream {
            endRemote(id, stream)
        } else {
            streams[id] = stream
        }
        return .data(id, stream.context, data, endStream: endStream)
    }

    private mutating func handleHeaders(flags: UInt8, stream id: Int32, payload: ByteBuffer) throws(HTTP2ConnectionError) -> Event? {
        if id == 0 { throw fail(.protocolError, "HEADERS on stream 0") }
        var fragment = try unpadded(payload, flags: flags, frame: "HEADERS")
        if flags & Flag.priority != 0 {
            guard fragment.readableBytes >= 5 else { throw fail(.frameSizeError, "HEADERS too short for its priority fields") }
            fragment.moveReaderIndex(forwardBy: 5)
        }
        let endStream = flags & Flag.endStream != 0
        if flags & Flag.endHeaders == 0 {
            continuing = (id, endStream, fragment)
            return nil
        }
        return try headerBlockComplete(stream: id, endStream: endStream, block: &fragment)
    }

    private mutating func handleContinuation(flags: UInt8, stream id: Int32, payload: ByteBuffer) throws(HTTP2ConnectionError) -> Event? {
        guard var pending = continuing else { throw fail(.protocolError, "CONTINUATION without HEADERS") }
        var fragment = payload
        if pending.block.readableBytes + fragment.readableBytes > configuration.maximumHeaderBlockSize {
            throw fail(.enhanceYourCalm, "a header block of more than \(configuration.maximumHeaderBlockSize) bytes")
        }
        pending.block.writeBuffer(&fragment)
        if flags & Flag.endHeaders == 0 {
            continuing = pending
            return nil
        }
        continuing = nil
        return try headerBlockComplete(stream: id, endStream: pending.endStream, block: &pending.block)
    }

    private mutating func headerBlockComplete(stream id: Int32, endStream: Bool, block: inout ByteBuffer) throws(HTTP2ConnectionError) -> Event? {
        // Decoded whatever becomes of the stream: the decoder's table must follow the server's.
        let headers: HPACKHeaders
        do {
            headers = try decoder.decodeHeaders(from: &block)
        } catch {
            throw fail(.compressionError, "the server's header block cannot be decoded: \(error)")
        }
        if block.readableBytes > 0 { throw fail(.compressionError, "a header block ends inside a field") }
        if id & 1 == 0 { throw fail(.protocolError, "HEADERS on stream \(id), which the server may not open") }
        try checkNotIdle(id, frame: "HEADERS")
        guard let stream = streams[id] else { return nil }
        if endStream { endRemote(id, stream) }
        return .headers(id, stream.context, headers, endStream: endStream)
    }

    private mutating func handleRstStream(stream id: Int32, payload: ByteBuffer) throws(HTTP2ConnectionError) -> Event? {
        if id == 0 { throw fail(.protocolError, "RST_STREAM on stream 0") }
        guard payload.readableBytes == 4, let code = payload.getInteger(at: payload.readerIndex, as: UInt32.self) else {
            throw fail(.frameSizeError, "an RST_STREAM of \(payload.readableBytes) bytes")
        }
        try checkNotIdle(id, frame: "RST_STREAM")
        guard let stream = streams.removeValue(forKey: id) else { return nil }
        return .reset(id, stream.context, H2ErrorCode(rawValue: code))
    }

    private mutating func handleSettings(flags: UInt8, stream: Int32, payload: ByteBuffer) throws(HTTP2ConnectionError) -> Event? {
        if stream != 0 { throw fail(.protocolError, "SETTINGS on stream \(stream)") }
        if flags & Flag.ack != 0 {
            if payload.readableBytes != 0 { throw fail(.frameSizeError, "a SETTINGS acknowledgement with a payload") }
            return nil
        }
        if payload.readableBytes % 6 != 0 { throw fail(.frameSizeError, "SETTINGS of \(payload.readableBytes) bytes, not a multiple of 6") }
        var payload = payload
        var windowChanged = false
        while let identifier = payload.readInteger(as: UInt16.self), let raw = payload.readInteger(as: UInt32.self) {
            let value = Int(raw)
            switch identifier {
            case 0x1:
                encoder.peerAllows(tableSize: value)
            case 0x2:
                // A server must not send 1 (RFC 9113 §6.5.2); it asks nothing of a client that
                // takes no pushes, so only a value outside 0 and 1 ends the connection.
                if value > 1 { throw fail(.protocolError, "SETTINGS_ENABLE_PUSH of \(value)") }
            case 0x3:
                peerMaximumStreams = value
            case 0x4:
                if value > Self.largestWindow { throw fail(.flowControlError, "SETTINGS_INITIAL_WINDOW_SIZE of \(value)") }
                windowChanged = windowChanged || value > outbound.initialWindow
                guard outbound.setInitialWindow(value) else { throw fail(.flowControlError, "a stream's send window above 2^31-1") }
            case 0x5:
                guard (Self.defaultFrameSize...16_777_215).contains(value) else {
                    throw fail(.protocolError, "SETTINGS_MAX_FRAME_SIZE of \(value)")
                }
                outbound.maximumFrameSize = value
            case 0x6:
                peerMaximumHeaderListSize = value
            default:
                break  // RFC 9113 §6.5.2: unknown settings are ignored
            }
        }
        output.writeFrameHeader(length: 0, type: .settings, flags: Flag.ack, stream: 0)
        let first = !receivedSettings
        receivedSettings = true
        if windowChanged { resumeBodies() }
        return .settings(first: first)
    }

    private mutating func handleWindowUpdate(stream id: Int32, payload: ByteBuffer) throws(HTTP2ConnectionError) -> Event? {
        guard payload.readableBytes == 4, let raw = payload.getInteger(at: payload.readerIndex, as: UInt32.self) else {
            throw fail(.frameSizeError, "a WINDOW_UPDATE of \(payload.readableBytes) bytes")
        }
        let increment = Int(raw & 0x7FFF_FFFF)
        if id == 0 {
            if increment == 0 { throw fail(.protocolError, "a WINDOW_UPDATE of 0 for the connection") }
            guard outbound.raiseConnectionWindow(by: increment) else {
                throw fail(.flowControlError, "the connection's send window above 2^31-1")
            }
            resumeBodies()
            return nil
        }
        try checkNotIdle(id, frame: "WINDOW_UPDATE")
        guard streams[id] != nil else { return nil }
        if increment == 0 { return streamError(id, .protocolError) }
        guard outbound.raiseWindow(of: id, by: increment) else { return streamError(id, .flowControlError) }
        if outbound.isHolding(id) { resumeBodies() }
        return nil
    }

    // MARK: Helpers

    /// A frame about a stream the client has not opened yet (or an even one, which only the
    /// server could open, and may not) is a connection error (RFC 9113 §5.1).
    private mutating func checkNotIdle(_ id: Int32, frame: String) throws(HTTP2ConnectionError) {
        if id & 1 == 0 || id >= nextStreamID {
            throw fail(.protocolError, "\(frame) on stream \(id), which the client has not opened")
        }
    }

    /// The payload without its padding (RFC 9113 §6.1).
    private mutating func unpadded(_ payload: ByteBuffer, flags: UInt8, frame: String) throws(HTTP2ConnectionError) -> ByteBuffer {
        guard let unpadded = unpaddedPayload(payload, flags: flags) else {
            throw fail(.protocolError, "\(frame) with more padding than payload")
        }
        return unpadded
    }

    /// The server ended its side of the stream. The stream is over unless the request body is
    /// still held back, which the server no longer wants: it is reset with NO_ERROR.
    private mutating func endRemote(_ id: Int32, _ stream: Stream) {
        streams.removeValue(forKey: id)
        outbound.close(id)
        if !stream.sentEnd { writeRstStream(id, code: .noError) }
    }

    private mutating func streamError(_ id: Int32, _ code: H2ErrorCode) -> Event? {
        guard let context = resetStream(id, code: code) else { return nil }
        return .reset(id, context, code)
    }

    private mutating func fail(_ code: H2ErrorCode, _ message: String) -> HTTP2ConnectionError {
        failed = true
        goAway(code: code)
        return HTTP2ConnectionError(code: code, message: message)
    }

    /// Sends what the windows now allow of the held-back bodies.
    private mutating func resumeBodies() {
        for id in outbound.resume(into: &output) { streams[id]?.sentEnd = true }
    }

    private mutating func writeWindowUpdate(stream: Int32, increment: Int) {
        output.writeFrameHeader(length: 4, type: .windowUpdate, flags: 0, stream: stream)
        output.writeInteger(UInt32(increment))
    }

    private mutating func writeRstStream(_ id: Int32, code: H2ErrorCode) {
        output.writeFrameHeader(length: 4, type: .rstStream, flags: 0, stream: id)
        output.writeInteger(code.rawValue)
    }
}

/// A frame the protocol forbids: the connection is over (a GOAWAY with ``code`` is queued).
package struct HTTP2ConnectionError: Error, CustomStringConvertible {
    package var code: H2ErrorCode
    package var message: String

    package var description: String { "HTTP/2 \(code): \(message)" }
}
