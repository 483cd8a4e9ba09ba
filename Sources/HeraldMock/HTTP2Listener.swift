import Foundation
import HeraldAuth
import HeraldProtocol
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// Sets up the HTTP/2 server pipeline for one listener (APNs or channel management).
struct HTTP2Listener: Sendable {
    let core: MockCore
    let listener: IncomingRequest.Listener
    let sslContext: NIOSSLContext?
    let acceptsAnyClientCertificate: Bool
    let requiresClientCertificate: Bool

    /// Binds and returns the server channel.
    func bind(host: String, port: Int, group: any EventLoopGroup) async throws -> any Channel {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try self.configure(channel) }
            }
        return try await bootstrap.bind(host: host, port: port).get()
    }

    /// Adds one connection's handlers to `channel`'s pipeline (on its event loop).
    func configure(_ channel: any Channel) throws {
        let sync = channel.pipeline.syncOperations
        // A client that does not read its answers stops being read from, so
        // answers cannot pile up in memory.
        try sync.addHandler(BackPressureHandler())
        if let sslContext {
            let handler = acceptsAnyClientCertificate
                ? NIOSSLServerHandler(context: sslContext, customVerificationCallback: { _, promise in promise.succeed(.certificateVerified) })
                : NIOSSLServerHandler(context: sslContext)
            try sync.addHandler(handler)
        }
        if let idleTimeout = core.configuration.idleTimeout {
            try sync.addHandler(IdleStateHandler(readTimeout: TimeAmount(idleTimeout)))
        }
        var state = ConnectionState(id: core.nextConnectionID())
        var settings = HTTP2Settings()
        // Token auth: one stream until a valid provider token is seen (Apple's
        // "Sending notification requests to APNs").
        let initialStreams = requiresClientCertificate || listener == .channels ? core.configuration.maximumConcurrentStreams : 1
        if listener == .channels || requiresClientCertificate { state.streamsRaised = true }
        settings.append(HTTP2Setting(parameter: .maxConcurrentStreams, value: initialStreams))
        settings.append(HTTP2Setting(parameter: .maxHeaderListSize, value: 16 * 1024))
        settings.append(HTTP2Setting(parameter: .initialWindowSize, value: 65_535))
        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.initialSettings = settings
        // Frames may still arrive for every stream a GOAWAY dropped (up to the stream limit),
        // and for streams the client opened before it read the GOAWAY: they are ignored
        // only while the stream is remembered as reset, and each refused stream counts as
        // a "glitch" that NIOHTTP2 would otherwise punish by resetting the connection.
        let inFlight = core.configuration.maximumConcurrentStreams
        connectionConfiguration.maximumRecentlyResetStreams = max(32, 2 * inFlight)
        connectionConfiguration.maximumConnectionGlitches = max(200, 2 * inFlight)  // NIOHTTP2 defaults to 200
        // NIOHTTP2 counts every RST_STREAM toward its rapid-reset limit, those of streams already
        // answered too (AsyncHTTPClient resets a stream whose body it does not read): out of
        // reach here; APNsConnectionHandler counts only resets of streams not yet answered.
        var streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
        // (A count in a window of one nanosecond, not a huge count: NIOHTTP2 reserves room for
        // `maximumCount` timestamps per connection, and Int32.max reserved 16 GB.)
        streamConfiguration.streamResetFrameRateLimit.maximumCount = 1_000
        streamConfiguration.streamResetFrameRateLimit.windowLength = .nanoseconds(1)
        try sync.addHandler(InboundSeal())
        // No stream multiplexer: frames come to one handler per connection, which
        // keeps each stream's request in a table (no channel per stream).
        try sync.addHandler(NIOHTTP2Handler(mode: .server, connectionConfiguration: connectionConfiguration, streamConfiguration: streamConfiguration))
        try sync.addHandler(APNsConnectionHandler(core: core, listener: listener, state: state, resolvesCertificate: requiresClientCertificate))
    }
}

enum GoAway {
    /// `GOAWAY` with `{"reason":…}` as opaque data, as APNs sends.
    static func frame(lastStreamID: Int, reason: APNsReason, code: HTTP2ErrorCode = .noError, allocator: ByteBufferAllocator) -> HTTP2Frame {
        var buffer = allocator.buffer(capacity: 32)
        buffer.writeString("{\"reason\":\"\(reason.rawValue)\"}")
        return HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: HTTP2StreamID(lastStreamID), errorCode: code, opaqueData: buffer))
    }
}

/// Below HTTP/2: once the mock's GOAWAY is written, what the client still sends is read and
/// dropped, not handed to NIOHTTP2 (which would answer streams opened after the GOAWAY with
/// RST_STREAM, and python-h2 raises on a reset for a stream it considers closed). Reading on
/// also keeps the socket from being closed with unread data, which makes the kernel send a
/// TCP reset that can reach the client before it has read the GOAWAY.
///
/// It follows the frames' boundaries from the connection's start (the preface, then each frame's
/// 9-byte header and its length), so that once sealed it can count the streams the client still
/// opens (HEADERS on a new stream above the last-stream-id): a client that does not send those
/// again loses them, and the connection log says so.
final class InboundSeal: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    // @unchecked: every member is touched only on the channel's event loop (by this handler,
    // and by the connection handler above it in the same pipeline).
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The client's connection preface ("PRI * HTTP/2.0…"), before the first frame.
    private var prefaceLeft = 24
    private var payloadLeft = 0
    private var header = InlineArray<9, UInt8>(repeating: 0)
    private var headerFill = 0
    private var sealedAbove: Int?
    /// Streams opened after the seal above its last-stream-id.
    private(set) var opened = StreamTally()

    /// From now on, frames are dropped; new streams above `lastStreamID` are counted.
    func seal(lastStreamID: Int) { sealedAbove = lastStreamID }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        track(buffer)
        if sealedAbove != nil { return }
        context.fireChannelRead(data)
    }

    /// Moves over `buffer` frame by frame: the payloads are skipped whole, only headers are read.
    private func track(_ buffer: ByteBuffer) {
        buffer.withUnsafeReadableBytes { bytes in
            var index = 0
            while index < bytes.count {
                if prefaceLeft > 0 || payloadLeft > 0 {
                    let skipped = min(prefaceLeft > 0 ? prefaceLeft : payloadLeft, bytes.count - index)
                    if prefaceLeft > 0 { prefaceLeft -= skipped } else { payloadLeft -= skipped }
                    index += skipped
                    continue
                }
                header[headerFill] = bytes[index]
                headerFill += 1
                index += 1
                guard headerFill == 9 else { continue }
                headerFill = 0
                payloadLeft = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
                let stream = (Int(header[5]) << 24 | Int(header[6]) << 16 | Int(header[7]) << 8 | Int(header[8])) & 0x7FFF_FFFF
                // HEADERS (type 1) on an odd (client) stream above the last-stream-id.
                if let last = sealedAbove, header[3] == 1, stream > last, stream & 1 == 1 { opened.add(stream) }
            }
        }
    }
}

/// Streams counted with their lowest and highest ids: what a log line needs, in constant space
/// whatever a client sends.
struct StreamTally: Sendable {
    private(set) var count = 0
    private(set) var lowest = Int.max
    private(set) var highest = 0

    mutating func add(_ stream: Int) {
        count += 1
        lowest = min(lowest, stream)
        highest = max(highest, stream)
    }

    mutating func add(_ other: StreamTally) {
        guard other.count > 0 else { return }
        count += other.count
        lowest = min(lowest, other.lowest)
        highest = max(highest, other.highest)
    }

    /// "ids 1003-1113", "id 1003".
    var ids: String { count == 1 ? "id \(lowest)" : "ids \(lowest)-\(highest)" }
}
