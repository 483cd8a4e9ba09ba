import Foundation
import HeraldAuth
import HeraldProtocol
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOSSL

/// One HTTP/2 connection of the mock: gathers each stream's header fields and body, hands
/// complete requests to the core, carries out each plan, and answers. Writes made while reading
/// are flushed once per read burst. Lives on the connection's event loop.
///
/// ## Going away, safely for strict clients
///
/// A connection goes away (a GOAWAY fault, the idle timeout, a client resetting too many
/// streams it had not been answered on) in three steps, ``Lifecycle``:
///
/// 1. `open` → `draining(lastStreamID)`: the last-stream-id is the highest stream the mock has
///    processed (never lower: a client would send again what was already answered). Streams
///    above it that arrive now are ignored, neither processed nor reset (RFC 9113 §6.8 lets a
///    server ignore them; python-h2 raises on a reset for a stream it considers closed).
/// 2. When every stream up to the last-stream-id is answered (or after a grace period), the
///    GOAWAY is written after those answers, so nothing for those streams follows it (python-h2
///    treats such a frame as an error, and aioapns closes on a GOAWAY as soon as it reads it).
/// 3. `closing`: the connection closes once the GOAWAY is on the wire.
///
/// ## Resets
///
/// A client may reset a stream it was already answered on (AsyncHTTPClient does, for a body it
/// does not read): harmless, counted, never punished. Resets of streams the mock had not
/// answered yet are what a rapid-reset flood is made of: more than ``rapidResetLimit`` in
/// ``rapidResetWindow`` make the connection go away with `ENHANCE_YOUR_CALM`, still answering
/// what it processed. (NIOHTTP2's own limit counts every reset; it is set out of reach.)
final class APNsConnectionHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: every member is touched only on the channel's event loop.
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// Where the connection is in its life.
    enum Lifecycle {
        case open
        /// Answering the streams up to `lastStreamID`; the GOAWAY follows them.
        case draining(lastStreamID: Int, reason: APNsReason, code: HTTP2ErrorCode)
        /// The GOAWAY is written; the connection closes once it is on the wire.
        case closing
    }

    private struct Pending {
        var fields = APNsHeaderFields()
        var body: [UInt8] = []
        var byteCount = 0
        /// Bytes received on the stream not yet returned with WINDOW_UPDATE.
        var unacknowledged = 0
        /// The request was handed to the core.
        var complete = false
        /// Its last frame (an answer's END_STREAM or a reset) is written.
        var answered = false
        /// Header and body bytes counted against the connection's budget.
        var heldBytes = 0
    }

    let core: MockCore
    let listener: IncomingRequest.Listener
    private var state: ConnectionState
    private var lifecycle = Lifecycle.open
    private var streams: [HTTP2StreamID: Pending] = [:]
    private var openStreamIDs = Set<Int>()
    /// The highest stream handed to the core: a GOAWAY never announces less.
    private var highestProcessed = 0
    private var certificateResolved: Bool
    /// Connection-level bytes received and not yet returned with WINDOW_UPDATE.
    private var connectionUnacknowledged = 0
    private var needsFlush = false
    private var context: ChannelHandlerContext?
    private var peer: String?
    /// Header and body bytes held for unfinished requests on this connection.
    private var bufferedBytes = 0
    /// For the closing summary and the rapid-reset defence.
    private var processed = 0
    private var resetsOfAnswered = 0
    private var resetsOfOpen = 0
    private var openResetTimes: [NIODeadline] = []
    private var closeReason: String?
    private var graceTimer: Scheduled<Void>?
    /// Streams above the last-stream-id the connection saw while going away (the seal counts
    /// those opened after the GOAWAY was written); the GOAWAY's last-stream-id once written.
    private var notProcessed = StreamTally()
    private var seal: InboundSeal?
    private var goneAwayAt: Int?

    /// The most a connection may hold for unfinished requests: beyond it, the stream that
    /// would exceed it is reset (ENHANCE_YOUR_CALM), so a client that opens many streams and
    /// never finishes them cannot grow the server's memory.
    static let connectionBudget = 1 << 20

    /// Half the default 65,535-byte window: return received bytes once this many are read.
    private static let windowUpdateThreshold = 32_768

    /// Resets of unanswered streams tolerated per ``rapidResetWindow`` (NIOHTTP2's default
    /// count, applied only to the resets that cost the server work).
    static let rapidResetLimit = 200
    static let rapidResetWindow = TimeAmount.seconds(30)

    /// How long a going-away connection waits for its last streams before it closes anyway.
    static let drainGracePeriod = TimeAmount.seconds(10)
    /// How long the connection stays open after its GOAWAY (reading and dropping), so the
    /// client reads the GOAWAY before the connection ends, unless it closes first.
    static let lingerAfterGoAway = TimeAmount.seconds(2)

    init(core: MockCore, listener: IncomingRequest.Listener, state: ConnectionState, resolvesCertificate: Bool) {
        self.core = core
        self.listener = listener
        self.state = state
        certificateResolved = !resolvesCertificate
    }

    private func log(_ kind: ConnectionEvent.Kind, stream: Int? = nil, code: HTTP2ErrorCode? = nil, lastStreamID: Int? = nil, detail: String? = nil) {
        core.log(connection: state.id, peer: peer, kind, stream: stream, code: code.map(Self.name), lastStreamID: lastStreamID, detail: detail)
    }

    /// RFC 9113's name of an error code (`CANCEL`, `REFUSED_STREAM`).
    static func name(_ code: HTTP2ErrorCode) -> String {
        let names = [
            "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR",
            "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
        ]
        return code.networkCode < names.count ? names[code.networkCode] : "0x\(String(code.networkCode, radix: 16))"
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        peer = context.channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" }
        core.metrics.connectionsOpened.increment()
        core.metrics.connectionsOpen.increment()
        log(.opened)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        graceTimer?.cancel()
        core.metrics.connectionsOpen.decrement()
        var summary = "\(processed) request\(processed == 1 ? "" : "s"); resets received: \(resetsOfAnswered) of answered streams, \(resetsOfOpen) of open ones"
        var lost = notProcessed
        if let seal { lost.add(seal.opened) }
        if lost.count > 0, let last = goneAwayAt {
            // What a client that does not retry streams above the last-stream-id loses: the
            // mock never saw them as requests, so no record says so but this.
            core.metrics.streamsNotProcessed.increment(by: lost.count)
            log(.streamsNotProcessed, lastStreamID: last,
                detail: "\(lost.count) stream\(lost.count == 1 ? "" : "s") opened above the GOAWAY's last-stream-id \(last) (\(lost.ids)) not processed: a client that does not send them again on a new connection loses them")
            summary += "; \(lost.count) stream\(lost.count == 1 ? "" : "s") above the last-stream-id not processed"
        }
        if let closeReason { summary = closeReason + "; " + summary }
        log(.closed, detail: summary)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let id = frame.streamID
        switch frame.payload {
        case .headers(let headers):
            if case .draining(let last, _, _) = lifecycle, Int(id) > last {
                if streams[id] == nil { notProcessed.add(Int(id)) }
                return  // ignored, not reset
            }
            if case .closing = lifecycle {
                if let last = goneAwayAt, Int(id) > last, streams[id] == nil { notProcessed.add(Int(id)) }
                return
            }
            if streams[id] == nil {
                var pending = Pending()
                var size = 0
                for header in headers.headers {
                    pending.fields.append(name: header.name, value: header.value)
                    size += header.name.utf8.count + header.value.utf8.count + 32
                }
                guard reserve(size, stream: id, context: context) else { return }
                pending.heldBytes = size
                streams[id] = pending
            }
            if headers.endStream { finish(id, context: context) }
        case .data(let data):
            guard case .byteBuffer(let buffer) = data.data else { return }
            let flowControlled = buffer.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
            connectionUnacknowledged += flowControlled
            if streams[id] != nil, !streams[id]!.complete {
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
        case .rstStream(let code):
            resetReceived(id, code: code, context: context)
        case .goAway(let last, let code, _):
            log(.goAwayReceived, code: code, lastStreamID: Int(last))
        default:
            break
        }
    }

    /// A client's RST_STREAM: harmless on a stream already answered (or unknown: closed and
    /// forgotten); counted toward the rapid-reset defence when the mock had not answered yet.
    private func resetReceived(_ id: HTTP2StreamID, code: HTTP2ErrorCode, context: ChannelHandlerContext) {
        let unanswered = streams[id].map { !$0.answered } ?? false
        release(id)
        guard unanswered else {
            resetsOfAnswered += 1
            core.metrics.resetsOfAnsweredStreams.increment()
            return
        }
        resetsOfOpen += 1
        core.metrics.resetsOfOpenStreams.increment()
        log(.resetReceived, stream: Int(id), code: code)
        let now = NIODeadline.now()
        openResetTimes.append(now)
        if openResetTimes.count > Self.rapidResetLimit {
            openResetTimes.removeFirst(openResetTimes.count - Self.rapidResetLimit - 1)
            if now - openResetTimes[0] < Self.rapidResetWindow {
                log(.protocolError, code: .enhanceYourCalm, detail: "more than \(Self.rapidResetLimit) streams reset before their answer within \(Self.rapidResetWindow.nanoseconds / 1_000_000_000) s (a rapid-reset flood)")
                startDraining(lastStreamID: highestProcessed, reason: .tooManyRequests, code: .enhanceYourCalm, context: context)
            }
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
            checkDrained(context: context)
        case let idle as IdleStateHandler.IdleStateEvent where idle == .read:
            closeReason = "idle"
            startDraining(lastStreamID: highestProcessed, reason: .idleTimeout, code: .noError, context: context)
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A write to a stream that has ended (the client reset it, or it is above a GOAWAY's
        // last-stream-id) concerns that stream only; so does a stream error, which NIOHTTP2 has
        // answered with RST_STREAM. Closing here would drop the answers still being written.
        if error is NIOHTTP2Errors.NoSuchStream || error is NIOHTTP2Errors.StreamClosed || error is NIOHTTP2Errors.StreamError { return }
        // A protocol error (NIOHTTP2 has sent GOAWAY) or a transport error: this connection ends.
        log(.protocolError, detail: "\(error)")
        closeReason = closeReason ?? "closed by the mock after an error"
        context.flush()
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if closeReason == nil {
            switch lifecycle {
            case .open: closeReason = "closed by the client"
            case .draining: closeReason = "closed by the client while the mock was going away"
            case .closing: break
            }
        }
        context.fireChannelInactive()
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
        log(.resetSent, stream: Int(id), code: .enhanceYourCalm, detail: "the connection holds more than \(Self.connectionBudget) bytes of unfinished requests")
        needsFlush = true
        return false
    }

    /// Forgets a stream's request and what it held.
    private func release(_ id: HTTP2StreamID) {
        if let pending = streams.removeValue(forKey: id) { bufferedBytes -= pending.heldBytes }
    }

    private func finish(_ id: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let pending = streams[id], !pending.complete else { return }
        switch lifecycle {
        case .draining(let last, _, _) where Int(id) > last:
            // Above the last-stream-id: not processed, as the GOAWAY will say; not reset either.
            notProcessed.add(Int(id))
            release(id)
            return
        case .closing:
            if let last = goneAwayAt, Int(id) > last { notProcessed.add(Int(id)) }
            release(id)
            return
        default:
            break
        }
        // The request is handed over: the table keeps only that the stream is being answered,
        // and its bytes no longer count against the budget.
        bufferedBytes -= pending.heldBytes
        var handed = Pending()
        handed.complete = true
        streams[id] = handed
        highestProcessed = max(highestProcessed, Int(id))
        processed += 1
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
        state.authentication.certificate = info
    }

    // MARK: Going away

    /// Starts going away (once per connection: a second GOAWAY may not raise the first's
    /// last-stream-id, and the first already told the client where processing stops).
    private func startDraining(lastStreamID: Int, reason: APNsReason, code: HTTP2ErrorCode, context: ChannelHandlerContext) {
        guard case .open = lifecycle else { return }
        lifecycle = .draining(lastStreamID: lastStreamID, reason: reason, code: code)
        // Streams up to last-stream-id finish; the GOAWAY goes when none is left, or after the
        // grace period.
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        graceTimer = context.eventLoop.scheduleTask(in: Self.drainGracePeriod) {
            bound.value.sendGoAwayAndClose()
        }
        checkDrained(context: context)
    }

    /// Once every stream up to the last-stream-id has ended, the GOAWAY: on the next turn of the
    /// loop (this may run inside a write's stream-closed event, which must finish first).
    private func checkDrained(context: ChannelHandlerContext) {
        guard case .draining(let last, _, _) = lifecycle, !openStreamIDs.contains(where: { $0 <= last }) else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.execute { bound.value.sendGoAwayAndClose() }
    }

    /// Writes the GOAWAY after every answer before it; from then on what the client sends is
    /// dropped below HTTP/2 (``InboundSeal``), and the connection closes when the client closes
    /// it or ``lingerAfterGoAway`` after the GOAWAY is on the wire (closing at once, with the
    /// client's frames unread, would reset the connection under the GOAWAY).
    private func sendGoAwayAndClose() {
        guard case .draining(let last, let reason, let code) = lifecycle, let context else { return }
        lifecycle = .closing
        goneAwayAt = last
        graceTimer?.cancel()
        // Streams above the last-stream-id still waiting for their body will not get it.
        for (id, pending) in streams where Int(id) > last && !pending.complete {
            notProcessed.add(Int(id))
            release(id)
        }
        closeReason = closeReason ?? "GOAWAY (\(reason.rawValue))"
        log(.goAwaySent, code: code, lastStreamID: last, detail: reason.rawValue)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(
            wrapOutboundOut(GoAway.frame(lastStreamID: last, reason: reason, code: code, allocator: context.channel.allocator)), promise: written)
        seal = try? context.pipeline.syncOperations.handler(type: InboundSeal.self)
        seal?.seal(lastStreamID: last)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in
            let context = bound.value
            let close = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: Self.lingerAfterGoAway) { close.value.close(promise: nil) }
        }
    }

    // MARK: Answering

    private func markAnswered(_ id: HTTP2StreamID) {
        if streams[id] != nil { streams[id]!.answered = true }
    }

    private func perform(_ plan: Plan, stream id: HTTP2StreamID, context: ChannelHandlerContext) {
        if case .closing = lifecycle { return }  // nothing for any stream after the GOAWAY
        if let count = plan.lowerStreams ?? (plan.raiseStreams ? core.configuration.maximumConcurrentStreams : nil) {
            // A rule made in code is not range-checked as a parsed one is: the field is 32 bits.
            let value = min(max(count, 0), Int(Int32.max))
            context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: value)])))), promise: nil)
        }
        if let goAway = plan.goAway, goAway.beforeAnswering {
            // This stream is not processed: the GOAWAY's last-stream-id is below it, unless a
            // higher stream was processed already (a last-stream-id is never below a processed
            // stream); then this one is refused, before the GOAWAY.
            var last = Int(id) - 2
            if case .draining(let draining, _, _) = lifecycle { last = draining } else if highestProcessed > Int(id) { last = highestProcessed }
            if last >= Int(id) {
                refuse(id, context: context)
            } else {
                // Not answered, not reset: the GOAWAY below its id says it was not processed.
                release(id)
            }
            startDraining(lastStreamID: max(0, last), reason: goAway.reason, code: .noError, context: context)
            return
        }
        if let code = plan.resetCode {
            let errorCode = HTTP2ErrorCode(networkCode: Int(code))
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(errorCode))), promise: nil)
            markAnswered(id)
            log(.resetSent, stream: Int(id), code: errorCode, detail: "a fault rule")
            return
        }
        if plan.closeConnection {
            closeReason = "closed by a fault rule"
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
        markAnswered(id)
        if response.body.isEmpty {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: true)))), promise: nil)
        } else {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers)))), promise: nil)
            var buffer = context.channel.allocator.buffer(capacity: response.body.count)
            buffer.writeBytes(response.body)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))), promise: nil)
        }
        if let goAway = plan.goAway, !goAway.beforeAnswering {
            startDraining(lastStreamID: highestProcessed, reason: goAway.reason, code: .noError, context: context)
        }
    }

    /// REFUSED_STREAM: not processed, safe to send again (written before any GOAWAY).
    private func refuse(_ id: HTTP2StreamID, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.refusedStream))), promise: nil)
        markAnswered(id)
        log(.resetSent, stream: Int(id), code: .refusedStream, detail: "refused before a GOAWAY")
    }
}
