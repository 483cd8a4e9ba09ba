import NIOCore

/// The server side of one HTTP/2 connection (RFC 9113) as a value: bytes from the client go in,
/// requests and the bytes to send come out. It keeps the connection's rules (the preface,
/// settings, flow control in both directions, header compression, stream states, PING and
/// GOAWAY) and the defences a server on the open network needs, and knows nothing about APNs
/// or channels, so it can be tested and fuzzed with bytes alone.
///
/// ## Defences
///
/// Each bounds what one client can make the server hold or do:
/// - a frame larger than `SETTINGS_MAX_FRAME_SIZE` (16,384) ends the connection before its
///   payload is read (`FRAME_SIZE_ERROR`);
/// - a header block is bounded in bytes across its CONTINUATION frames
///   (``Configuration/maximumHeaderBlockSize``) and in frames
///   (``Configuration/maximumContinuationFrames``), and its decoded list by
///   `SETTINGS_MAX_HEADER_LIST_SIZE` (an HPACK bomb: a few bytes that name a large table entry
///   many times); the dynamic table by 4,096 bytes, HPACK's default, which the session never
///   raises;
/// - more PING, SETTINGS and PRIORITY frames than ``Configuration/controlFrameLimit`` allows,
///   empty DATA frames in a row beyond ``Configuration/maximumEmptyDataFrames``, or stream errors
///   (refused, malformed or over-window streams) beyond ``Configuration/streamErrorLimit`` end the
///   connection with `ENHANCE_YOUR_CALM`;
/// - a stream beyond `SETTINGS_MAX_CONCURRENT_STREAMS` is refused (`REFUSED_STREAM`: not
///   processed, safe to send again). A new limit applies once the client acknowledges it (until
///   then the client may not know it), except that a raise applies at once;
/// - DATA beyond a stream's or the connection's receive window is a flow-control error; a
///   response held back by the client's window waits in the session (bounded by the streams the
///   client may have open) until a WINDOW_UPDATE.
///
/// Rapid resets are the connection's to judge (``Event/reset(stream:code:)`` says whether the
/// server had answered), as are the deadlines of idle and slow connections: they need a clock
/// and timers, which a value fed bytes does not have.
///
/// A connection error throws ``HTTP2ConnectionError``; the session has then queued a GOAWAY with
/// the error's code and takes nothing more, and the connection is to be closed once
/// ``takeOutput()`` is written. A stream error resets that stream only.
package struct HTTP2ServerSession {
    /// What the server tells the client in its SETTINGS, and the bounds it keeps.
    package struct Configuration: Sendable {
        /// `SETTINGS_MAX_CONCURRENT_STREAMS` in the server's first SETTINGS.
        package var maximumConcurrentStreams = 100
        /// `SETTINGS_MAX_HEADER_LIST_SIZE`, and the most header bytes (RFC 7541 §4.1 sizes)
        /// decoded per block.
        package var maximumHeaderListSize = 16 * 1_024
        /// The most bytes of one header block across its CONTINUATION frames.
        package var maximumHeaderBlockSize = 64 * 1_024
        /// The most CONTINUATION frames after one HEADERS (NIOHTTP2's default).
        package var maximumContinuationFrames = 5
        /// Empty DATA frames without END_STREAM tolerated in a row (NIOHTTP2's default).
        package var maximumEmptyDataFrames = 1
        /// PING, SETTINGS and PRIORITY frames from the client (NIOHTTP2's default: 200 in 30 s).
        package var controlFrameLimit = RateLimit(count: 200, seconds: 30)
        /// Streams the session resets for an error of the client's (NIOHTTP2's default).
        package var streamErrorLimit = RateLimit(count: 200, seconds: 30)

        /// The defaults.
        package init() {}
    }

    /// At most `count` events in any `seconds`.
    package struct RateLimit: Sendable {
        package var count: Int
        package var seconds: Int

        /// A limit of `count` events in `seconds`.
        package init(count: Int, seconds: Int) {
            self.count = count
            self.seconds = seconds
        }
    }

    /// What a frame (or several) from the client meant.
    package enum Event {
        /// A new stream's header block: a request, its fields checked as RFC 9113 §8.3 asks.
        case request(stream: Int32, headers: [HPACKBlockDecoder.Field], endStream: Bool)
        /// Part of a request's body; trailers end it with an empty part.
        case data(stream: Int32, ByteBuffer, endStream: Bool)
        /// The client reset a stream (`open`: the server had not finished answering it).
        case reset(stream: Int32, code: H2ErrorCode, open: Bool)
        /// The session reset a stream for the client's error (a malformed request, a stream over
        /// the limit, DATA beyond its window), with what was wrong.
        case streamError(stream: Int32, code: H2ErrorCode, reason: String)
        /// The client is going away.
        case goAway(lastStreamID: Int32, code: H2ErrorCode)
        /// After the server's GOAWAY: the client opened a stream above its last-stream-id, which
        /// the server did not process.
        case notProcessed(stream: Int32)
    }

    private struct Stream {
        var receivedEnd: Bool
        var receiveWindow: Int
        var unacknowledged = 0
        /// `content-length`, if the request gave one, and the body bytes received so far.
        var expectedLength: Int?
        var receivedLength = 0
    }

    private static let preface: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    /// Streams reset by the server whose late frames are ignored (NIOHTTP2 keeps 32).
    private static let recentlyResetCapacity = 32

    package let configuration: Configuration
    private let allocator: ByteBufferAllocator
    private var streams: [Int32: Stream] = [:]
    /// Send windows, and the response bodies they hold back.
    private var outbound = OutboundFlow()
    /// The highest stream the client has opened (or had refused).
    package private(set) var highestStreamID: Int32 = 0
    private var recentlyReset: [Int32] = []
    private var recentlyResetNext = 0
    private var input: ByteBuffer
    /// An empty buffer that `input` returns to once read, so the read buffers are not held.
    private let empty: ByteBuffer
    private var output: ByteBuffer
    private var encoder = HPACKBlockEncoder()
    private var decoder: HPACKBlockDecoder
    /// A header block waiting for its CONTINUATION frames.
    private var continuing: (stream: Int32, endStream: Bool, block: ByteBuffer, frames: Int)?
    private var prefaceRead = 0
    private var receivedSettings = false
    private var failed = false
    /// Once the server's GOAWAY is written: its last-stream-id. Frames are then read only to see
    /// which streams the client still opens, and payloads are skipped.
    package private(set) var sealedAbove: Int32?
    private var skipping = 0

    private var connectionReceiveWindow = 65_535
    private var connectionUnacknowledged = 0

    /// `SETTINGS_MAX_CONCURRENT_STREAMS` of each SETTINGS sent and not yet acknowledged, oldest
    /// first (`nil`: that SETTINGS did not change it).
    private var unacknowledgedLimits: [Int?] = []
    private var acknowledgedLimit = 100
    /// The limit streams are held to now.
    package private(set) var streamLimit = 100

    private var emptyDataFrames = 0
    private var controlFrames: RateWindow
    private var streamErrors: RateWindow
    /// The time of the bytes being read (`receive(_:now:)`), for the rate limits.
    private var now: UInt64 = 0
    /// Since when the bytes read have ended inside a frame or a header block with no frame
    /// completed since (`nil`: they end on a whole frame): a client sending a byte at a time
    /// shows here, for the connection's slow-client deadline.
    package private(set) var incompleteSince: UInt64?

    /// A session for a new connection. Before the client acknowledges the server's SETTINGS,
    /// streams are held to 100 (NIOHTTP2's and many servers' assumption), or to the first
    /// limit if it is higher.
    package init(configuration: Configuration = Configuration(), allocator: ByteBufferAllocator = ByteBufferAllocator()) {
        self.configuration = configuration
        self.allocator = allocator
        output = allocator.buffer(capacity: 4_096)
        empty = allocator.buffer(capacity: 0)
        input = empty
        decoder = HPACKBlockDecoder(maximumListSize: configuration.maximumHeaderListSize)
        controlFrames = RateWindow(configuration.controlFrameLimit)
        streamErrors = RateWindow(configuration.streamErrorLimit)
    }

    // MARK: Sending

    /// Queues the server's connection preface: its SETTINGS.
    package mutating func start() {
        writeSettings([
            (0x3, configuration.maximumConcurrentStreams),  // SETTINGS_MAX_CONCURRENT_STREAMS
            (0x4, 65_535),  // SETTINGS_INITIAL_WINDOW_SIZE
            (0x6, configuration.maximumHeaderListSize),  // SETTINGS_MAX_HEADER_LIST_SIZE
        ])
    }

    /// Queues SETTINGS with a new `SETTINGS_MAX_CONCURRENT_STREAMS` (0 to 2^31-1).
    package mutating func announceMaximumConcurrentStreams(_ value: Int) {
        writeSettings([(0x3, min(max(value, 0), Int(Int32.max)))])
    }

    private mutating func writeSettings(_ settings: [(UInt16, Int)]) {
        output.writeFrameHeader(length: settings.count * 6, type: .settings, flags: 0, stream: 0)
        var limit: Int?
        for (identifier, value) in settings {
            output.writeInteger(identifier)
            output.writeInteger(UInt32(value))
            if identifier == 0x3 { limit = value }
        }
        unacknowledgedLimits.append(limit)
        if let limit, limit > streamLimit { streamLimit = limit }
    }

    /// Whether the client's preface and first SETTINGS have arrived.
    package var hasReceivedSettings: Bool { receivedSettings }

    /// Whether the stream is open: its request not finished, or its answer not all sent.
    package func isOpen(_ stream: Int32) -> Bool { streams[stream] != nil }

    /// Whether a stream at or below `id` is still open (a GOAWAY waits for them).
    package func hasOpenStream(atOrBelow id: Int32) -> Bool { streams.keys.contains { $0 <= id } }

    /// Streams open now.
    package var openStreamCount: Int { streams.count }

    /// Queues a response: HEADERS with `:status` and `fields` (written as literals the client's
    /// table does not keep, but for `content-type`, which it keeps), then as much of `body` as
    /// flow control allows; the rest follows as the client opens its windows. Returns `false`
    /// (and sends nothing) when the stream is no longer open.
    @discardableResult
    package mutating func respond(stream id: Int32, status: Int, fields: [(String, String)], body: [UInt8]) -> Bool {
        guard !failed, sealedAbove == nil, streams[id] != nil, !outbound.isHolding(id) else { return false }
        let frameStart = output.beginHeaderBlock()
        encoder.startBlock(into: &output)
        encoder.writeStatus(status, into: &output)
        for (name, value) in fields {
            if name == "content-type" {
                encoder.writeIndexed(name: name, staticName: .contentType, value: value, into: &output)
            } else {
                encoder.writeLiteral(name: name, value: value, into: &output)
            }
        }
        output.endHeaderBlock(startingAt: frameStart, stream: id, endStream: body.isEmpty, maximumFrameSize: outbound.maximumFrameSize)
        if body.isEmpty || outbound.send(ByteBuffer(bytes: body), on: id, into: &output) { endLocal(id) }
        return true
    }

    /// Resets a stream (RST_STREAM) and forgets it; frames the client sent before it read the
    /// reset are ignored. Returns whether the stream was open.
    @discardableResult
    package mutating func reset(stream id: Int32, code: H2ErrorCode) -> Bool {
        guard !failed, sealedAbove == nil, streams.removeValue(forKey: id) != nil else { return false }
        outbound.close(id)
        writeRstStream(id, code: code)
        rememberReset(id)
        return true
    }

    /// Queues a GOAWAY (`debugData` as its opaque data); from then on the session writes
    /// nothing more and reads the client's frames only to report streams opened above
    /// `lastStreamID` (``Event/notProcessed(stream:)``).
    package mutating func goAway(lastStreamID: Int32, code: H2ErrorCode, debugData: some Collection<UInt8> = []) {
        guard !failed, sealedAbove == nil else { return }
        writeGoAway(lastStreamID: lastStreamID, code: code, debugData: debugData)
        sealedAbove = lastStreamID
        streams.removeAll()
        outbound.closeAll()
        continuing = nil
    }

    /// Whether frames are waiting to be written.
    package var hasOutput: Bool { output.readableBytes > 0 }

    /// The frames queued since the last call.
    package mutating func takeOutput() -> ByteBuffer {
        let bytes = output
        output.clear()
        return bytes
    }

    // MARK: Receiving

    /// Bytes read from the connection at `now` (nanoseconds on a monotonic clock, for the rate
    /// limits); ``nextEvent()`` parses them.
    package mutating func receive(_ bytes: inout ByteBuffer, now: UInt64) {
        self.now = now
        input.append(&bytes)
    }

    /// The next event from the bytes received, or `nil` when they hold no more whole frame.
    /// Frames that need only an answer (SETTINGS, PING, WINDOW_UPDATE) queue it and are passed
    /// over.
    package mutating func nextEvent() throws(HTTP2ConnectionError) -> Event? {
        if failed {
            input = empty
            return nil
        }
        if prefaceRead < Self.preface.count {
            try readPreface()
            if prefaceRead < Self.preface.count { return nil }
        }
        if sealedAbove != nil { return skipSealed() }
        while !failed, let header = input.peekFrameHeader() {
            // The client never learns a larger SETTINGS_MAX_FRAME_SIZE: refused before the
            // payload is buffered.
            if header.length > FrameLimits.defaultFrameSize {
                throw fail(.frameSizeError, "a frame of \(header.length) bytes is larger than the \(FrameLimits.defaultFrameSize) allowed")
            }
            guard input.readableBytes >= FrameLimits.headerSize + header.length else { break }
            input.moveReaderIndex(forwardBy: FrameLimits.headerSize)
            let payload = input.readSlice(length: header.length)!
            incompleteSince = nil
            if let event = try handleFrame(type: header.type, flags: header.flags, stream: header.stream, payload: payload) {
                releaseInputIfRead()
                return event
            }
        }
        if input.readableBytes > 0 || continuing != nil {
            if incompleteSince == nil { incompleteSince = now }
        }
        releaseInputIfRead()
        return nil
    }

    private mutating func readPreface() throws(HTTP2ConnectionError) {
        while prefaceRead < Self.preface.count, let byte = input.readInteger(as: UInt8.self) {
            guard byte == Self.preface[prefaceRead] else {
                input = empty
                throw fail(.protocolError, "the connection does not start with HTTP/2's preface (is the client speaking HTTP/1.1, or TLS to a plaintext port?)")
            }
            prefaceRead += 1
        }
        releaseInputIfRead()
    }

    /// After the GOAWAY: frame headers only, payloads skipped as they arrive.
    private mutating func skipSealed() -> Event? {
        while input.readableBytes > 0 {
            if skipping > 0 {
                let skipped = min(skipping, input.readableBytes)
                input.moveReaderIndex(forwardBy: skipped)
                skipping -= skipped
                continue
            }
            guard let header = input.peekFrameHeader() else { break }
            input.moveReaderIndex(forwardBy: FrameLimits.headerSize)
            skipping = header.length
            if header.type == FrameType.headers.rawValue, header.stream & 1 == 1, header.stream > highestStreamID {
                highestStreamID = header.stream
                if let last = sealedAbove, header.stream > last {
                    releaseInputIfRead()
                    return .notProcessed(stream: header.stream)
                }
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
            throw fail(.protocolError, "the client's first frame is not SETTINGS")
        }
        if let continuing, type != .continuation || stream != continuing.stream {
            throw fail(.protocolError, "a header block on stream \(continuing.stream) was interrupted by another frame")
        }
        guard let type else {
            return nil  // RFC 9113 §5.5: frames of unknown types are ignored
        }
        if type != .data { emptyDataFrames = 0 }
        switch type {
        case .data: return try handleData(flags: flags, stream: stream, payload: payload)
        case .headers: return try handleHeaders(flags: flags, stream: stream, payload: payload)
        case .continuation: return try handleContinuation(flags: flags, stream: stream, payload: payload)
        case .priority:
            try countControlFrame("PRIORITY")
            if stream == 0 { throw fail(.protocolError, "PRIORITY on stream 0") }
            if payload.readableBytes != 5 { return try streamError(stream, .frameSizeError, "a PRIORITY of \(payload.readableBytes) bytes") }
            return nil
        case .rstStream: return try handleRstStream(stream: stream, payload: payload)
        case .settings: return try handleSettings(flags: flags, stream: stream, payload: payload)
        case .pushPromise:
            throw fail(.protocolError, "PUSH_PROMISE from a client")
        case .ping:
            try countControlFrame("PING")
            if stream != 0 { throw fail(.protocolError, "PING on stream \(stream)") }
            if payload.readableBytes != 8 { throw fail(.frameSizeError, "a PING of \(payload.readableBytes) bytes") }
            if flags & Flag.ack != 0 { return nil }  // the server sends no PING of its own
            output.writeFrameHeader(length: 8, type: .ping, flags: Flag.ack, stream: 0)
            output.writeImmutableBuffer(payload)
            return nil
        case .goAway:
            if stream != 0 { throw fail(.protocolError, "GOAWAY on stream \(stream)") }
            var payload = payload
            guard let last = payload.readInteger(as: UInt32.self), let code = payload.readInteger(as: UInt32.self) else {
                throw fail(.frameSizeError, "a GOAWAY of \(payload.readableBytes) bytes")
            }
            return .goAway(lastStreamID: Int32(bitPattern: last & 0x7FFF_FFFF), code: H2ErrorCode(rawValue: code))
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
        if connectionUnacknowledged >= 65_535 / 2 {
            writeWindowUpdate(stream: 0, increment: connectionUnacknowledged)
            connectionReceiveWindow += connectionUnacknowledged
            connectionUnacknowledged = 0
        }
        guard let data = unpaddedPayload(payload, flags: flags) else {
            throw fail(.protocolError, "DATA with more padding than payload")
        }
        let endStream = flags & Flag.endStream != 0
        if endStream {
            emptyDataFrames = 0
        } else if data.readableBytes == 0 {
            emptyDataFrames += 1
            if emptyDataFrames > configuration.maximumEmptyDataFrames {
                throw fail(.enhanceYourCalm, "\(emptyDataFrames) empty DATA frames in a row")
            }
        }
        try checkNotIdle(id, frame: "DATA")
        guard var stream = streams[id] else { return nil }  // closed or reset: dropped
        if stream.receivedEnd { return try streamError(id, .streamClosed, "DATA after the request's END_STREAM") }
        if flowControlled > stream.receiveWindow {
            return try streamError(id, .flowControlError, "DATA beyond the stream's receive window")
        }
        stream.receiveWindow -= flowControlled
        stream.receivedLength += data.readableBytes
        if let expected = stream.expectedLength, stream.receivedLength > expected || endStream && stream.receivedLength != expected {
            return try streamError(id, .protocolError, "a body of \(stream.receivedLength)\(endStream ? "" : " or more") bytes, though content-length says \(expected)")
        }
        stream.unacknowledged += flowControlled
        if !endStream, stream.unacknowledged >= 65_535 / 2 {
            writeWindowUpdate(stream: id, increment: stream.unacknowledged)
            stream.receiveWindow += stream.unacknowledged
            stream.unacknowledged = 0
        }
        stream.receivedEnd = endStream
        streams[id] = stream
        return .data(stream: id, data, endStream: endStream)
    }

    private mutating func handleHeaders(flags: UInt8, stream id: Int32, payload: ByteBuffer) throws(HTTP2ConnectionError) -> Event? {
        if id == 0 { throw fail(.protocolError, "HEADERS on stream 0") }
        if id & 1 == 0 { throw fail(.protocolError, "HEADERS on stream \(id), which a client may not open") }
        guard var fragment = unpaddedPayload(payload, flags: flags) else {
            throw fail(.protocolError, "HEADERS with more padding than payload")
        }
        var dependsOnItself = false
        if flags & Flag.priority != 0 {
            guard let dependency = fragment.readInteger(as: UInt32.self), fragment.readInteger(as: UInt8.self) != nil else {
                throw fail(.frameSizeError, "HEADERS too short for its priority fields")
            }
            dependsOnItself = Int32(bitPattern: dependency & 0x7FFF_FFFF) == id
        }
        if fragment.readableBytes > configuration.maximumHeaderBlockSize {
            throw fail(.enhanceYourCalm, "a header block of more than \(configuration.maximumHeaderBlockSize) bytes")
        }
        let endStream = flags & Flag.endStream != 0
        if flags & Flag.endHeaders == 0 {
            continuing = (id, endStream, fragment, 0)
            return nil
        }
        return try headerBlockComplete(stream: id, endStream: endStream, block: &fragment, dependsOnItself: dependsOnItself)
    }

    private mutating func handleContinuation(flags: UInt8, stream id: Int32, payload: ByteBuffer) throws(HTTP2ConnectionError) -> Event? {
        guard var pending = continuing else { throw fail(.protocolError, "CONTINUATION without HEADERS") }
        pending.frames += 1
        if pending.frames > configuration.maximumContinuationFrames {
            throw fail(.enhanceYourCalm, "more than \(configuration.maximumContinuationFrames) CONTINUATION frames in one header block")
        }
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
        return try headerBlockComplete(stream: id, endStream: pending.endStream, block: &pending.block, dependsOnItself: false)
    }

    private mutating func headerBlockComplete(stream id: Int32, endStream: Bool, block: inout ByteBuffer, dependsOnItself: Bool) throws(HTTP2ConnectionError) -> Event? {
        // Decoded whatever becomes of the stream: the decoder's table must follow the client's.
        let headers: [HPACKBlockDecoder.Field]
        do throws(HPACKBlockDecoder.DecodingError) {
            headers = try decoder.decode(block)
        } catch {
            switch error {
            case .listTooLarge:
                throw fail(.enhanceYourCalm, "a header list larger than SETTINGS_MAX_HEADER_LIST_SIZE (\(configuration.maximumHeaderListSize) bytes)")
            case .malformed(let reason):
                throw fail(.compressionError, "the client's header block cannot be decoded: \(reason)")
            }
        }
        emptyDataFrames = 0

        if id <= highestStreamID {
            guard var stream = streams[id] else {
                // A stream the server reset may still get what the client sent before it read the
                // reset; any other closed stream may not.
                if recentlyReset.contains(id) { return nil }
                throw fail(.streamClosed, "HEADERS on stream \(id), which is closed")
            }
            // Trailers: they end the request and carry no pseudo-header (RFC 9113 §8.1).
            if stream.receivedEnd { return try streamError(id, .streamClosed, "HEADERS after the request's END_STREAM") }
            if !endStream { return try streamError(id, .protocolError, "trailers without END_STREAM") }
            if let problem = RequestHeaderCheck.trailersProblem(headers) { return try streamError(id, .protocolError, problem) }
            if let expected = stream.expectedLength, stream.receivedLength != expected {
                return try streamError(id, .protocolError, "a body of \(stream.receivedLength) bytes, though content-length says \(expected)")
            }
            stream.receivedEnd = true
            streams[id] = stream
            return .data(stream: id, empty, endStream: true)
        }

        highestStreamID = id
        if dependsOnItself { return try streamError(id, .protocolError, "stream \(id) depends on itself") }
        if streams.count >= streamLimit {
            return try streamError(id, .refusedStream, "stream \(id) is beyond the \(streamLimit) concurrent streams the server allows")
        }
        let expectedLength: Int?
        switch RequestHeaderCheck.requestProblem(headers) {
        case .failure(let problem): return try streamError(id, .protocolError, problem.reason)
        case .success(let length): expectedLength = length
        }
        if endStream, let expectedLength, expectedLength != 0 {
            return try streamError(id, .protocolError, "no body, though content-length says \(expectedLength)")
        }
        streams[id] = Stream(receivedEnd: endStream, receiveWindow: 65_535, expectedLength: expectedLength)
        outbound.open(id)
        return .request(stream: id, headers: headers, endStream: endStream)
    }

    private mutating func handleRstStream(stream id: Int32, payload: ByteBuffer) throws(HTTP2ConnectionError) -> Event? {
        if id == 0 { throw fail(.protocolError, "RST_STREAM on stream 0") }
        guard payload.readableBytes == 4, let code = payload.getInteger(at: payload.readerIndex, as: UInt32.self) else {
            throw fail(.frameSizeError, "an RST_STREAM of \(payload.readableBytes) bytes")
        }
        try checkNotIdle(id, frame: "RST_STREAM")
        let open = streams.removeValue(forKey: id) != nil
        outbound.close(id)
        return .reset(stream: id, code: H2ErrorCode(rawValue: code), open: open)
    }

    private mutating func handleSettings(flags: UInt8, stream: Int32, payload: ByteBuffer) throws(HTTP2ConnectionError) -> Event? {
        try countControlFrame("SETTINGS")
        if stream != 0 { throw fail(.protocolError, "SETTINGS on stream \(stream)") }
        if flags & Flag.ack != 0 {
            if payload.readableBytes != 0 { throw fail(.frameSizeError, "a SETTINGS acknowledgement with a payload") }
            guard !unacknowledgedLimits.isEmpty else { throw fail(.protocolError, "a SETTINGS acknowledgement for no SETTINGS") }
            if let limit = unacknowledgedLimits.removeFirst() { acknowledgedLimit = limit }
            // Held to the acknowledged limit, or to a higher one the client has not read yet.
            streamLimit = unacknowledgedLimits.reduce(acknowledgedLimit) { max($0, $1 ?? 0) }
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
                if value > 1 { throw fail(.protocolError, "SETTINGS_ENABLE_PUSH of \(value)") }
            case 0x4:
                if value > FrameLimits.largestWindow { throw fail(.flowControlError, "SETTINGS_INITIAL_WINDOW_SIZE of \(value)") }
                windowChanged = windowChanged || value > outbound.initialWindow
                guard outbound.setInitialWindow(value) else { throw fail(.flowControlError, "a stream's send window above 2^31-1") }
            case 0x5:
                guard (FrameLimits.defaultFrameSize...16_777_215).contains(value) else {
                    throw fail(.protocolError, "SETTINGS_MAX_FRAME_SIZE of \(value)")
                }
                outbound.maximumFrameSize = value
            default:
                break  // the client's own limits on streams and header lists concern pushes and responses; unknown settings are ignored (RFC 9113 §6.5.2)
            }
        }
        output.writeFrameHeader(length: 0, type: .settings, flags: Flag.ack, stream: 0)
        receivedSettings = true
        if windowChanged { resumeBodies() }
        return nil
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
        if increment == 0 { return try streamError(id, .protocolError, "a WINDOW_UPDATE of 0") }
        guard outbound.raiseWindow(of: id, by: increment) else { return try streamError(id, .flowControlError, "a send window above 2^31-1") }
        if outbound.isHolding(id) { resumeBodies() }
        return nil
    }

    // MARK: Helpers

    /// A frame about a stream the client has not opened yet is a connection error (RFC 9113
    /// §5.1); so is one on an even stream, which only the server could open (and never does).
    private mutating func checkNotIdle(_ id: Int32, frame: String) throws(HTTP2ConnectionError) {
        if id & 1 == 0 || id > highestStreamID {
            throw fail(.protocolError, "\(frame) on stream \(id), which the client has not opened")
        }
    }

    private mutating func countControlFrame(_ frame: String) throws(HTTP2ConnectionError) {
        if !controlFrames.record(now) {
            throw fail(.enhanceYourCalm, "more than \(configuration.controlFrameLimit.count) PING, SETTINGS and PRIORITY frames within \(configuration.controlFrameLimit.seconds) s (the last a \(frame))")
        }
    }

    /// The answer is all sent: the stream closes, and if the request is not finished the client
    /// is asked to stop sending it (RST_STREAM with NO_ERROR, RFC 9113 §8.1).
    private mutating func endLocal(_ id: Int32) {
        guard let stream = streams[id] else { return }
        if stream.receivedEnd {
            streams.removeValue(forKey: id)
            outbound.close(id)
        } else {
            reset(stream: id, code: .noError)
        }
    }

    private mutating func streamError(_ id: Int32, _ code: H2ErrorCode, _ reason: String) throws(HTTP2ConnectionError) -> Event? {
        if !streamErrors.record(now) {
            throw fail(.enhanceYourCalm, "more than \(configuration.streamErrorLimit.count) streams reset for errors within \(configuration.streamErrorLimit.seconds) s (the last: \(reason))")
        }
        streams.removeValue(forKey: id)
        outbound.close(id)
        writeRstStream(id, code: code)
        rememberReset(id)
        return .streamError(stream: id, code: code, reason: reason)
    }

    private mutating func rememberReset(_ id: Int32) {
        if recentlyReset.count < Self.recentlyResetCapacity {
            recentlyReset.append(id)
        } else {
            recentlyReset[recentlyResetNext] = id
            recentlyResetNext = (recentlyResetNext + 1) % Self.recentlyResetCapacity
        }
    }

    private mutating func fail(_ code: H2ErrorCode, _ message: String) -> HTTP2ConnectionError {
        failed = true
        writeGoAway(lastStreamID: highestStreamID, code: code, debugData: EmptyCollection())
        sealedAbove = highestStreamID
        streams.removeAll()
        outbound.closeAll()
        return HTTP2ConnectionError(code: code, message: message)
    }

    /// Sends what the windows now allow of the held-back bodies.
    private mutating func resumeBodies() {
        for id in outbound.resume(into: &output) { endLocal(id) }
    }

    private mutating func writeWindowUpdate(stream: Int32, increment: Int) {
        output.writeFrameHeader(length: 4, type: .windowUpdate, flags: 0, stream: stream)
        output.writeInteger(UInt32(increment))
    }

    private mutating func writeRstStream(_ id: Int32, code: H2ErrorCode) {
        output.writeFrameHeader(length: 4, type: .rstStream, flags: 0, stream: id)
        output.writeInteger(code.rawValue)
    }

    private mutating func writeGoAway(lastStreamID: Int32, code: H2ErrorCode, debugData: some Collection<UInt8>) {
        output.writeFrameHeader(length: 8 + debugData.count, type: .goAway, flags: 0, stream: 0)
        output.writeInteger(UInt32(bitPattern: lastStreamID))
        output.writeInteger(code.rawValue)
        output.writeBytes(debugData)
    }
}

/// Events counted in a sliding window: the last `count` times are kept, so a new event is over
/// the limit when the oldest of them is less than the window old.
struct RateWindow {
    private let count: Int
    private let window: UInt64
    private var times: [UInt64] = []
    private var next = 0

    init(_ limit: HTTP2ServerSession.RateLimit) {
        count = max(limit.count, 1)
        window = UInt64(max(limit.seconds, 0)) * 1_000_000_000
        times.reserveCapacity(min(count, 1_024))
    }

    /// Records an event at `now`; `false` when it is more than `count` within the window.
    mutating func record(_ now: UInt64) -> Bool {
        if times.count < count {
            times.append(now)
            return true
        }
        let oldest = times[next]
        times[next] = now
        next = (next + 1) % count
        return now &- oldest >= window
    }
}
