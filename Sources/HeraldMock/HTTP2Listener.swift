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
final class InboundSeal: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    // @unchecked: `sealed` is touched only on the channel's event loop (by this handler, and by
    // the connection handler above it in the same pipeline).
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private var sealed = false

    func seal() { sealed = true }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if sealed { return }
        context.fireChannelRead(data)
    }
}
