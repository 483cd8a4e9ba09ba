import Foundation
import HeraldAuth
import HeraldProtocol
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// One connection's shared state: its authentication, its streams and whether it is going
/// away. Touched only on the connection's event loop (stream channels share their parent's
/// loop), which every method asserts in debug builds.
final class ConnectionContext: @unchecked Sendable {
    let eventLoop: any EventLoop
    var state: ConnectionState
    /// The highest stream ID seen, for `GOAWAY`'s last-stream-id.
    var highestStreamID = 0
    var openStreams = 0
    var goingAway = false
    /// Whether the client certificate has been read (certificate auth).
    var certificateResolved = false

    init(eventLoop: any EventLoop, state: ConnectionState) {
        self.eventLoop = eventLoop
        self.state = state
    }
}

/// Sets up the HTTP/2 server pipeline for one listener (APNs or channel management).
struct HTTP2Listener {
    let core: MockCore
    let listener: IncomingRequest.Listener
    let sslContext: NIOSSLContext?
    let acceptsAnyClientCertificate: Bool
    let requiresClientCertificate: Bool

    /// Binds and returns the server channel.
    func bind(host: String, port: Int, group: any EventLoopGroup) async throws -> any Channel {
        let core = self.core
        let listener = self.listener
        let sslContext = self.sslContext
        let acceptAny = acceptsAnyClientCertificate
        let certificateAuth = requiresClientCertificate
        let idleTimeout = core.configuration.idleTimeout
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    // A client that does not read its answers stops being read from, so
                    // answers cannot pile up in memory.
                    try sync.addHandler(BackPressureHandler())
                    if let sslContext {
                        let handler = acceptAny
                            ? NIOSSLServerHandler(context: sslContext, customVerificationCallback: { _, promise in promise.succeed(.certificateVerified) })
                            : NIOSSLServerHandler(context: sslContext)
                        try sync.addHandler(handler)
                    }
                    if let idleTimeout {
                        try sync.addHandler(IdleStateHandler(readTimeout: TimeAmount.nanoseconds(Int64(idleTimeout.components.seconds) * 1_000_000_000 + idleTimeout.components.attoseconds / 1_000_000_000)))
                    }
                    let connection = ConnectionContext(eventLoop: channel.eventLoop, state: ConnectionState(id: core.nextConnectionID()))
                    if !certificateAuth { connection.certificateResolved = true }
                    var settings = HTTP2Settings()
                    // Token auth: one stream until a valid provider token is seen (Apple's
                    // "Sending notification requests to APNs").
                    let initialStreams = certificateAuth || listener == .channels ? core.configuration.maximumConcurrentStreams : 1
                    if listener == .channels || certificateAuth { connection.state.streamsRaised = true }
                    settings.append(HTTP2Setting(parameter: .maxConcurrentStreams, value: initialStreams))
                    settings.append(HTTP2Setting(parameter: .maxHeaderListSize, value: 16 * 1024))
                    settings.append(HTTP2Setting(parameter: .initialWindowSize, value: 65_535))
                    var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
                    connectionConfiguration.initialSettings = settings
                    connectionConfiguration.maximumRecentlyResetStreams = 32
                    var streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
                    streamConfiguration.targetWindowSize = 65_535
                    _ = try sync.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: connectionConfiguration, streamConfiguration: streamConfiguration
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(StreamHandler(core: core, connection: connection, listener: listener))
                        }
                    }
                    try sync.addHandler(ConnectionEventsHandler(core: core, connection: connection))
                }
            }
        return try await bootstrap.bind(host: host, port: port).get()
    }
}

/// Connection-level events: counts connections, and answers an idle timeout with `GOAWAY`
/// carrying `{"reason":"IdleTimeout"}`.
final class ConnectionEventsHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    let core: MockCore
    let connection: ConnectionContext

    init(core: MockCore, connection: ConnectionContext) {
        self.core = core
        self.connection = connection
    }

    func handlerAdded(context: ChannelHandlerContext) {
        core.metrics.connectionsOpened.increment()
        core.metrics.connectionsOpen.increment()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        core.metrics.connectionsOpen.decrement()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read, !connection.goingAway {
            connection.goingAway = true
            let frame = GoAway.frame(lastStreamID: connection.highestStreamID, reason: .idleTimeout, allocator: context.channel.allocator)
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(frame)).whenComplete { _ in bound.value.close(promise: nil) }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Protocol errors close the connection (NIOHTTP2 has sent GOAWAY); others too.
        context.close(promise: nil)
    }
}

enum GoAway {
    /// `GOAWAY` with `{"reason":…}` as opaque data, as APNs sends.
    static func frame(lastStreamID: Int, reason: APNsReason, allocator: ByteBufferAllocator) -> HTTP2Frame {
        var buffer = allocator.buffer(capacity: 32)
        buffer.writeString("{\"reason\":\"\(reason.rawValue)\"}")
        return HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: HTTP2StreamID(lastStreamID), errorCode: .noError, opaqueData: buffer))
    }
}

/// One HTTP/2 stream: gathers the header fields and the body, hands the request to the core,
/// and carries out its plan.
final class StreamHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    let core: MockCore
    let connection: ConnectionContext
    let listener: IncomingRequest.Listener
    private var fields = APNsHeaderFields()
    private var body: [UInt8] = []
    private var bodyByteCount = 0
    private var sawHeaders = false
    private var complete = false
    private var streamID = 0

    init(core: MockCore, connection: ConnectionContext, listener: IncomingRequest.Listener) {
        self.core = core
        self.connection = connection
        self.listener = listener
    }

    func handlerAdded(context: ChannelHandlerContext) {
        connection.openStreams += 1
        context.channel.getOption(HTTP2StreamChannelOptions.streamID).whenSuccess { [self] id in
            streamID = Int(id)
            connection.highestStreamID = max(connection.highestStreamID, streamID)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        connection.openStreams -= 1
        if connection.goingAway, connection.openStreams == 0 {
            context.channel.parent?.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !complete else { return }
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            if !sawHeaders {
                sawHeaders = true
                for header in headers.headers { fields.append(name: header.name, value: header.value) }
            }
            if headers.endStream { finish(context: context) }
        case .data(let frame):
            if case .byteBuffer(let buffer) = frame.data {
                bodyByteCount += buffer.readableBytes
                let room = core.configuration.maximumBodyBytes - body.count
                if room > 0 {
                    buffer.withUnsafeReadableBytes { bytes in body.append(contentsOf: bytes.prefix(room)) }
                }
            }
            if frame.endStream { finish(context: context) }
        default:
            break
        }
    }

    private func finish(context: ChannelHandlerContext) {
        complete = true
        resolveCertificate(context: context)
        let request = IncomingRequest(fields: fields, body: body, bodyByteCount: bodyByteCount, listener: listener)
        let plan = core.handle(request, connection: &connection.state)
        if let delay = plan.delay {
            let nanoseconds = Int64(delay.components.seconds) * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) { bound.value.0.perform(plan, context: bound.value.1) }
        } else {
            perform(plan, context: context)
        }
    }

    /// Reads the client certificate's topics and environments once per connection.
    private func resolveCertificate(context: ChannelHandlerContext) {
        guard !connection.certificateResolved else { return }
        connection.certificateResolved = true
        guard let parent = context.channel.parent,
              let tls = try? parent.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self),
              let certificate = tls.peerCertificate,
              let der = try? certificate.toDERBytes(),
              let info = try? APNsCertificateInfo(derEncoded: der)
        else { return }
        connection.state.certificate = info
    }

    private func perform(_ plan: Plan, context: ChannelHandlerContext) {
        let parent = context.channel.parent
        if let count = plan.lowerStreams ?? (plan.raiseStreams ? core.configuration.maximumConcurrentStreams : nil) {
            let settings = HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: count)])))
            parent?.writeAndFlush(settings, promise: nil)
        }
        if let goAway = plan.goAway, goAway.beforeAnswering {
            connection.goingAway = true
            let frame = GoAway.frame(lastStreamID: max(0, streamID - 2), reason: goAway.reason, allocator: context.channel.allocator)
            parent?.writeAndFlush(frame, promise: nil)
            context.close(promise: nil)
            return
        }
        if let code = plan.resetCode {
            context.writeAndFlush(wrapOutboundOut(.rstStream(HTTP2ErrorCode(networkCode: Int(code)))), promise: nil)
            return
        }
        if plan.closeConnection {
            parent?.close(promise: nil)
            return
        }
        guard let response = plan.response else { return }  // no answer
        var headers = HPACKHeaders([(":status", String(response.status))])
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        if response.body.isEmpty {
            context.write(wrapOutboundOut(.headers(.init(headers: headers, endStream: true))), promise: nil)
        } else {
            context.write(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
            var buffer = context.channel.allocator.buffer(capacity: response.body.count)
            buffer.writeBytes(response.body)
            context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(buffer), endStream: true))), promise: nil)
        }
        context.flush()
        if let goAway = plan.goAway, !goAway.beforeAnswering {
            connection.goingAway = true
            let frame = GoAway.frame(lastStreamID: connection.highestStreamID, reason: goAway.reason, allocator: context.channel.allocator)
            parent?.writeAndFlush(frame, promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
