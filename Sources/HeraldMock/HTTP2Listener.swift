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
        // No stream multiplexer: frames come to one handler per connection, which
        // keeps each stream's request in a table (no channel per stream).
        try sync.addHandler(NIOHTTP2Handler(mode: .server, connectionConfiguration: connectionConfiguration, streamConfiguration: .init()))
        try sync.addHandler(APNsConnectionHandler(core: core, listener: listener, state: state, resolvesCertificate: requiresClientCertificate))
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

/// One HTTP/2 connection of the mock: gathers each stream's header fields and body, hands
/// complete requests to the core, carries out each plan, and answers. Writes made while reading
/// are flushed once per read burst. Lives on the connection's event loop.
final class APNsConnectionHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private struct Pending {
        var fields = APNsHeaderFields()
        var body: [UInt8] = []
        var byteCount = 0
        /// Bytes received on the stream not yet returned with WINDOW_UPDATE.
        var unacknowledged = 0
        var complete = false
        /// Header and body bytes counted against the connection's budget.
        var heldBytes = 0
    }

    let core: MockCore
    let listener: IncomingRequest.Listener
    private var state: ConnectionState
    private var streams: [HTTP2StreamID: Pending] = [:]
    private var openStreamIDs = Set<Int>()
    private var highestStreamID = 0
    private var goingAway = false
    /// The last-stream-id of the GOAWAY sent: streams above it are not processed.
    private var goAwayLastStreamID = Int.max
    private var closing = false
    /// Once going away, the last frame written: the connection closes only when it (and so
    /// every answer before it) is on the wire, since closing a channel drops unwritten data.
    private var lastWrite: EventLoopFuture<Void>?
    private var certificateResolved: Bool
    /// Connection-level bytes received and not yet returned with WINDOW_UPDATE.
    private var connectionUnacknowledged = 0
    private var needsFlush = false
    private var context: ChannelHandlerContext?
    /// Header and body bytes held for unfinished requests on this connection.
    private var bufferedBytes = 0

    /// The most a connection may hold for unfinished requests: beyond it, the stream that
    /// would exceed it is reset (ENHANCE_YOUR_CALM), so a client that opens many streams and
    /// never finishes them cannot grow the server's memory.
    static let connectionBudget = 1 << 20

    /// Half the default 65,535-byte window: return received bytes once this many are read.
    private static let windowUpdateThreshold = 32_768

    init(core: MockCore, listener: IncomingRequest.Listener, state: ConnectionState, resolvesCertificate: Bool) {
        self.core = core
        self.listener = listener
        self.state = state
        certificateResolved = !resolvesCertificate
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        core.metrics.connectionsOpened.increment()
        core.metrics.connectionsOpen.increment()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        core.metrics.connectionsOpen.decrement()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let id = frame.streamID
        switch frame.payload {
        case .headers(let headers):
            if streams[id] == nil {
                var pending = Pending()
                var size = 0
                for header in headers.headers {
                    pending.fields.append(name: header.name, value: header.value)
                    size += header.name.utf8.count + header.value.utf8.count + 32
                }
                highestStreamID = max(highestStreamID, Int(id))
                guard reserve(size, stream: id, context: context) else { return }
                pending.heldBytes = size
                streams[id] = pending
            }
            if headers.endStream { finish(id, context: context) }
        case .data(let data):
            guard case .byteBuffer(let buffer) = data.data else { return }
            let flowControlled = buffer.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
            connectionUnacknowledged += flowControlled
            if streams[id] != nil {
                streams[id]!.byteCount += buffer.readableBytes
                let room = core.configuration.maximumBodyBytes - streams[id]!.body.count
                if room > 0 {
                    let kept = min(room, buffer.readableBytes)
                    guard reserve(kept, stream: id, context: context) else { return }
                    streams[id]!.heldBytes += kept
                    buffer.withUnsafeReadableBytes { bytes in streams[id]!.body.append(contentsOf: bytes.prefix(kept)) }
                }
                streams[id]!.unacknowledged += flowControlled
                if !data.endStream, streams[id]!.unacknowledged >= Self.windowUpdateThreshold {
                    // A large body: let the client send the rest (kept bodies are bounded).
                    // The table is done with first: a write can fail the connection there and
                    // then, and its streams close (StreamClosedEvent) before the write returns.
                    let returned = streams[id]!.unacknowledged
                    streams[id]!.unacknowledged = 0
                    needsFlush = true
                    context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .windowUpdate(windowSizeIncrement: returned))), promise: nil)
                }
            }
            if data.endStream { finish(id, context: context) }
        case .rstStream:
            release(id)
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if connectionUnacknowledged >= Self.windowUpdateThreshold {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: connectionUnacknowledged))), promise: nil)
            connectionUnacknowledged = 0
            needsFlush = true
        }
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let created as NIOHTTP2StreamCreatedEvent:
            openStreamIDs.insert(Int(created.streamID))
        case let closed as StreamClosedEvent:
            openStreamIDs.remove(Int(closed.streamID))
            release(closed.streamID)
            // Streams above the GOAWAY's last-stream-id are not waited for.
            if goingAway, !closing, !openStreamIDs.contains(where: { $0 <= goAwayLastStreamID }) {
                // On the next turn of the loop: this event may come from inside the GOAWAY's own
                // write (NIO closes the streams above last-stream-id as it sends it), and the
                // frame must be through before the flush and close.
                closing = true
                let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
                context.eventLoop.execute { bound.value.closeOnceWritten() }
            }
        case let idle as IdleStateHandler.IdleStateEvent where idle == .read:
            if !goingAway {
                goAway(reason: .idleTimeout, lastStreamID: highestStreamID, context: context)
                context.flush()
                context.close(promise: nil)
            }
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A write to a stream that has ended (the client reset it, or it is above a GOAWAY's
        // last-stream-id) concerns that stream only; so does a stream error, which NIOHTTP2 has
        // answered with RST_STREAM (a stream the client opened before it read our GOAWAY is
        // refused that way). Closing here would drop the answers still being written.
        if error is NIOHTTP2Errors.NoSuchStream || error is NIOHTTP2Errors.StreamClosed || error is NIOHTTP2Errors.StreamError { return }
        // A protocol error (NIOHTTP2 has sent GOAWAY) or a transport error: this connection ends.
        // Once going away, frames the client sent before it read the GOAWAY can trip one; the
        // answers already written still go out first.
        if goingAway {
            closing = true
            closeOnceWritten()
        } else {
            context.close(promise: nil)
        }
    }

    /// Flushes and closes once the last frame written is on the wire: closing a channel drops
    /// what the socket has not taken yet, so answers already written would be lost and their
    /// requests sent again elsewhere.
    private func closeOnceWritten() {
        guard let context else { return }
        context.flush()
        guard let written = lastWrite else {
            context.close(promise: nil)
            return
        }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        written.whenComplete { _ in bound.value.context?.close(promise: nil) }
    }

    /// Counts `size` more bytes held for `stream`, or resets the stream when the connection's
    /// budget would be exceeded.
    private func reserve(_ size: Int, stream id: HTTP2StreamID, context: ChannelHandlerContext) -> Bool {
        if bufferedBytes + size <= Self.connectionBudget {
            bufferedBytes += size
            return true
        }
        release(id)
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.enhanceYourCalm))), promise: nil)
        needsFlush = true
        return false
    }

    /// Forgets a stream's request and what it held.
    private func release(_ id: HTTP2StreamID) {
        if let pending = streams.removeValue(forKey: id) { bufferedBytes -= pending.heldBytes }
    }

    private func finish(_ id: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let pending = streams[id], !pending.complete else { return }
        if Int(id) > goAwayLastStreamID {
            // Above the GOAWAY's last-stream-id: not processed, as the client was told.
            release(id)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.refusedStream))), promise: nil)
            needsFlush = true
            return
        }
        // The request is handed over: the table keeps only that the stream is answered, and
        // its bytes no longer count against the budget.
        bufferedBytes -= pending.heldBytes
        var answered = Pending()
        answered.complete = true
        streams[id] = answered
        resolveCertificate(context: context)
        let request = IncomingRequest(fields: pending.fields, body: pending.body, bodyByteCount: pending.byteCount, listener: listener)
        var plan = core.handle(request, connection: &state)
        if let stored = plan.stored {
            // With a database, the answer goes out once the request's row is committed: what a
            // sender is told was received survives a crash. A failed write answers 500.
            plan.stored = nil
            let planned = plan
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            stored.hop(to: context.eventLoop).whenComplete { result in
                let (handler, context) = bound.value
                guard handler.context != nil else { return }
                var plan = planned
                if case .failure = result, plan.response != nil {
                    plan.response = MockResponse(
                        status: 500, headers: [(APNsHeader.contentType, "application/json")],
                        body: Array(#"{"reason":"InternalServerError"}"#.utf8))
                }
                handler.answer(plan, stream: id, context: context)
                context.flush()
            }
            return
        }
        answer(plan, stream: id, context: context)
        needsFlush = true
    }

    /// Carries out a plan now, or after its delay.
    private func answer(_ plan: Plan, stream id: HTTP2StreamID, context: ChannelHandlerContext) {
        if let delay = plan.delay {
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: TimeAmount(delay)) {
                let (handler, context) = bound.value
                guard handler.context != nil else { return }
                handler.perform(plan, stream: id, context: context)
                context.flush()
            }
        } else {
            perform(plan, stream: id, context: context)
        }
    }

    /// Reads the client certificate's topics and environments once per connection.
    private func resolveCertificate(context: ChannelHandlerContext) {
        guard !certificateResolved else { return }
        certificateResolved = true
        guard let tls = try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self),
              let certificate = tls.peerCertificate,
              let der = try? certificate.toDERBytes(),
              let info = try? APNsCertificateInfo(derEncoded: der)
        else { return }
        state.certificate = info
    }

    private func goAway(reason: APNsReason, lastStreamID: Int, context: ChannelHandlerContext) {
        // One GOAWAY per connection: a second may not raise the last-stream-id, and the first
        // already told the client where processing stops.
        guard !goingAway else { return }
        goingAway = true
        goAwayLastStreamID = lastStreamID
        // Flushed at once (with the answers before it): NIO may close a connection that a GOAWAY
        // leaves without streams, and an unflushed frame would be lost with it.
        let written = context.eventLoop.makePromise(of: Void.self)
        lastWrite = written.futureResult
        context.writeAndFlush(wrapOutboundOut(GoAway.frame(lastStreamID: lastStreamID, reason: reason, allocator: context.channel.allocator)), promise: written)
        // Streams up to last-stream-id may finish; the connection closes when none is left, or
        // after a grace period.
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: .seconds(10)) {
            bound.value.flush()
            bound.value.close(promise: nil)
        }
    }

    private func perform(_ plan: Plan, stream id: HTTP2StreamID, context: ChannelHandlerContext) {
        if let count = plan.lowerStreams ?? (plan.raiseStreams ? core.configuration.maximumConcurrentStreams : nil) {
            // A rule made in code is not range-checked as a parsed one is: the field is 32 bits.
            let value = min(max(count, 0), Int(Int32.max))
            context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: value)])))), promise: nil)
        }
        if let goAway = plan.goAway, goAway.beforeAnswering {
            if goingAway {
                // A GOAWAY was sent already (and a second may not change it): this stream is
                // refused as not processed, which is what the GOAWAY would have said.
                context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.refusedStream))), promise: nil)
            } else {
                self.goAway(reason: goAway.reason, lastStreamID: max(0, Int(id) - 2), context: context)
            }
            return
        }
        if let code = plan.resetCode {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(HTTP2ErrorCode(networkCode: Int(code))))), promise: nil)
            return
        }
        if plan.closeConnection {
            context.flush()
            context.close(promise: nil)
            return
        }
        guard let response = plan.response else { return }  // no answer
        var headers = HPACKHeaders()
        headers.reserveCapacity(response.headers.count + 1)
        headers.add(name: ":status", value: String(response.status))
        // Identifiers are new in every answer: indexing them would only churn the HPACK table.
        for (name, value) in response.headers { headers.add(name: name, value: value, indexing: name == APNsHeader.contentType ? .indexable : .nonIndexable) }
        // Once going away, the connection's close waits for this answer to be written.
        let written = goingAway ? context.eventLoop.makePromise(of: Void.self) : nil
        if let written { lastWrite = written.futureResult }
        if response.body.isEmpty {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: true)))), promise: written)
        } else {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers)))), promise: nil)
            var buffer = context.channel.allocator.buffer(capacity: response.body.count)
            buffer.writeBytes(response.body)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))), promise: written)
        }
        if let goAway = plan.goAway, !goAway.beforeAnswering {
            self.goAway(reason: goAway.reason, lastStreamID: highestStreamID, context: context)
        }
    }
}
