import Foundation
import HeraldAuth
import HeraldHTTP2
import HeraldProtocol
import NIOCore
import NIOSSL

/// One HTTP/2 connection of the mock: feeds the socket's bytes to an ``HTTP2ServerSession``
/// (HeraldHTTP2: frames, HPACK, flow control, stream states and the protocol's defences), gathers
/// each stream's header fields and body, hands complete requests to the core, carries out each
/// plan, and answers. What the session queues while reading is written and flushed once per read
/// burst. Lives on the connection's event loop.
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
/// what it processed.
///
/// ## Slow clients
///
/// A connection that has not completed its preface and first SETTINGS within 10 seconds, or a
/// request whose body is still unfinished 30 seconds after its header block, or a frame or a
/// header block still unfinished 30 seconds after its first byte (a slow-loris client, sending a
/// byte at a time) goes away: with GOAWAY, or closed if it never spoke HTTP/2. A client that
/// sends nothing at all is the idle timeout's (`--idle-timeout`).
final class APNsConnectionHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: every member is touched only on the channel's event loop.
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Where the connection is in its life.
    enum Lifecycle {
        case open
        /// Answering the streams up to `lastStreamID`; the GOAWAY follows them.
        case draining(lastStreamID: Int, reason: APNsReason, code: H2ErrorCode)
        /// The GOAWAY is written; the connection closes once it is on the wire.
        case closing
    }

    private struct Pending {
        var fields = APNsHeaderFields()
        var body: [UInt8] = []
        var byteCount = 0
        /// The request was handed to the core.
        var complete = false
        /// Header and body bytes counted against the connection's budget.
        var heldBytes = 0
        /// When the stream began (nanoseconds, monotonic), for the slow-request deadline.
        var startedAt: UInt64 = 0
    }

    let core: MockCore
    let listener: IncomingRequest.Listener
    private var state: ConnectionState
    private var lifecycle = Lifecycle.open
    private var session: HTTP2ServerSession
    private var prefaceSent = false
    /// Streams the mock has not finished answering: those still arriving and those handed over.
    private var streams: [Int32: Pending] = [:]
    /// The highest stream handed to the core: a GOAWAY never announces less.
    private var highestProcessed = 0
    private var certificateResolved: Bool
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
    private var slowTimer: Scheduled<Void>?
    /// Streams above the last-stream-id the connection saw while going away, and those the
    /// client opened after the GOAWAY was written; the GOAWAY's last-stream-id once written.
    private var notProcessed = StreamTally()
    private var goneAwayAt: Int?

    /// The most a connection may hold for unfinished requests: beyond it, the stream that
    /// would exceed it is reset (ENHANCE_YOUR_CALM), so a client that opens many streams and
    /// never finishes them cannot grow the server's memory.
    static let connectionBudget = 1 << 20

    /// Resets of unanswered streams tolerated per ``rapidResetWindow`` (NIOHTTP2's default
    /// count, applied only to the resets that cost the server work).
    static let rapidResetLimit = 200
    static let rapidResetWindow = TimeAmount.seconds(30)

    /// How long a going-away connection waits for its last streams before it closes anyway.
    static let drainGracePeriod = TimeAmount.seconds(10)
    /// How long the connection stays open after its GOAWAY (reading and dropping), so the
    /// client reads the GOAWAY before the connection ends, unless it closes first.
    static let lingerAfterGoAway = TimeAmount.seconds(2)
    /// How long a client has for its preface and first SETTINGS.
    private var prefaceTimeout: TimeAmount { TimeAmount(core.configuration.slowClientTimeouts.preface) }
    /// How long a request may take from its header block to the end of its body, and a frame
    /// (or a header block) from its first byte to its last.
    private var requestTimeout: TimeAmount { TimeAmount(core.configuration.slowClientTimeouts.request) }

    init(core: MockCore, listener: IncomingRequest.Listener, state: ConnectionState, resolvesCertificate: Bool, initialStreams: Int) {
        self.core = core
        self.listener = listener
        self.state = state
        certificateResolved = !resolvesCertificate
        var configuration = HTTP2ServerSession.Configuration()
        configuration.maximumConcurrentStreams = initialStreams
        session = HTTP2ServerSession(configuration: configuration)
    }

    private func log(_ kind: ConnectionEvent.Kind, stream: Int? = nil, code: H2ErrorCode? = nil, lastStreamID: Int? = nil, detail: String? = nil) {
        core.log(connection: state.id, peer: peer, kind, stream: stream, code: code?.description, lastStreamID: lastStreamID, detail: detail)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        peer = context.channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" }
        core.metrics.connectionsOpened.increment()
        core.metrics.connectionsOpen.increment()
        log(.opened)
        if context.channel.isActive { sendPreface(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        sendPreface(context: context)
        context.fireChannelActive()
    }

    /// The server's SETTINGS, and the deadline for the client's own preface.
    private func sendPreface(context: ChannelHandlerContext) {
        guard !prefaceSent else { return }
        prefaceSent = true
        session.start()
        writeOutput(context: context)
        context.flush()
        needsFlush = false
        scheduleSlowCheck(in: prefaceTimeout, context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        graceTimer?.cancel()
        slowTimer?.cancel()
        core.metrics.connectionsOpen.decrement()
        var summary = "\(processed) request\(processed == 1 ? "" : "s"); resets received: \(resetsOfAnswered) of answered streams, \(resetsOfOpen) of open ones"
        if notProcessed.count > 0, let last = goneAwayAt {
            // What a client that does not retry streams above the last-stream-id loses: the
            // mock never saw them as requests, so no record says so but this.
            let lost = notProcessed
            core.metrics.streamsNotProcessed.increment(by: lost.count)
            log(.streamsNotProcessed, lastStreamID: last,
                detail: "\(lost.count) stream\(lost.count == 1 ? "" : "s") opened above the GOAWAY's last-stream-id \(last) (\(lost.ids)) not processed: a client that does not send them again on a new connection loses them")
            summary += "; \(lost.count) stream\(lost.count == 1 ? "" : "s") above the last-stream-id not processed"
        }
        if let closeReason { summary = closeReason + "; " + summary }
        log(.closed, detail: summary)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        session.receive(&bytes, now: NIODeadline.now().uptimeNanoseconds)
        do {
            while let event = try session.nextEvent() {
                handle(event, context: context)
                if self.context == nil { return }
            }
        } catch {
            connectionFailed(error, context: context)
        }
    }

    private func handle(_ event: HTTP2ServerSession.Event, context: ChannelHandlerContext) {
        switch event {
        case .request(let id, let headers, let endStream):
            if case .draining(let last, _, _) = lifecycle, Int(id) > last {
                notProcessed.add(Int(id))
                return  // ignored, not reset
            }
            var pending = Pending()
            pending.startedAt = NIODeadline.now().uptimeNanoseconds
            var size = 0
            pending.fields.reserveCapacity(headers.count)
            // Read in place: a loop over the array copies each field before it is appended.
            headers.withUnsafeBufferPointer { all in
                for index in all.indices {
                    pending.fields.append(lowercaseName: all[index].name, value: all[index].value)
                    size += all[index].name.utf8.count + all[index].value.utf8.count + 32
                }
            }
            guard reserve(size, stream: id, context: context) else { return }
            pending.heldBytes = size
            streams[id] = pending
            if endStream {
                finish(id, context: context)
            } else {
                scheduleSlowCheck(in: requestTimeout, context: context)
            }
        case .data(let id, let buffer, let endStream):
            if streams[id] != nil, !streams[id]!.complete {
                streams[id]!.byteCount += buffer.readableBytes
                let room = core.configuration.maximumBodyBytes - streams[id]!.body.count
                if room > 0, buffer.readableBytes > 0 {
                    let kept = min(room, buffer.readableBytes)
                    guard reserve(kept, stream: id, context: context) else { return }
                    streams[id]!.heldBytes += kept
                    buffer.withUnsafeReadableBytes { bytes in streams[id]!.body.append(contentsOf: bytes.prefix(kept)) }
                }
            }
            if endStream { finish(id, context: context) }
        case .reset(let id, let code, _):
            resetReceived(id, code: code, context: context)
        case .streamError(let id, let code, let reason):
            release(id)
            log(.resetSent, stream: Int(id), code: code, detail: reason)
        case .goAway(let last, let code):
            log(.goAwayReceived, code: code, lastStreamID: Int(last))
        case .notProcessed(let id):
            notProcessed.add(Int(id))
        }
    }

    /// The client broke the protocol: the session has queued a GOAWAY with the error's code;
    /// the connection closes once it is written.
    private func connectionFailed(_ error: HTTP2ConnectionError, context: ChannelHandlerContext) {
        log(.protocolError, code: error.code, detail: error.message)
        closeReason = closeReason ?? "closed by the mock after a protocol error (\(error.code))"
        lifecycle = .closing
        closeAfterWriting(context: context)
    }

    private func closeAfterWriting(context: ChannelHandlerContext) {
        let written = context.eventLoop.makePromise(of: Void.self)
        if session.hasOutput {
            context.writeAndFlush(wrapOutboundOut(session.takeOutput()), promise: written)
        } else {
            context.flush()
            written.succeed()
        }
        needsFlush = false
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
    }

    /// A client's RST_STREAM: harmless on a stream already answered (or unknown: closed and
    /// forgotten); counted toward the rapid-reset defence when the mock had not answered yet.
    private func resetReceived(_ id: Int32, code: H2ErrorCode, context: ChannelHandlerContext) {
        let unanswered = streams[id] != nil
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
        if session.incompleteSince != nil { scheduleSlowCheck(in: requestTimeout, context: context) }
        checkDrained(context: context)
        writeOutput(context: context)
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    /// Writes what the session has queued (flushed by the caller).
    private func writeOutput(context: ChannelHandlerContext) {
        guard session.hasOutput else { return }
        context.write(wrapOutboundOut(session.takeOutput()), promise: nil)
        needsFlush = true
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            closeReason = "idle"
            startDraining(lastStreamID: highestProcessed, reason: .idleTimeout, code: .noError, context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A transport error (TLS, the socket): this connection ends.
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

    // MARK: Slow clients

    /// Checks the slow-client deadlines `delay` from now (one timer at a time; it re-arms itself
    /// while requests are unfinished).
    private func scheduleSlowCheck(in delay: TimeAmount, context: ChannelHandlerContext) {
        guard slowTimer == nil else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        slowTimer = context.eventLoop.scheduleTask(in: delay) {
            let handler = bound.value
            handler.slowTimer = nil
            handler.checkSlowClients()
        }
    }

    private func checkSlowClients() {
        guard let context, case .open = lifecycle else { return }
        if !session.hasReceivedSettings {
            // Not a client speaking HTTP/2 yet: nothing to send a GOAWAY to.
            log(.protocolError, detail: "no HTTP/2 preface and SETTINGS within \(Self.seconds(prefaceTimeout))")
            closeReason = "closed by the mock: no preface"
            lifecycle = .closing
            closeAfterWriting(context: context)
            return
        }
        let now = NIODeadline.now().uptimeNanoseconds
        let limit = UInt64(requestTimeout.nanoseconds)
        var oldest = session.incompleteSince
        for (_, pending) in streams where !pending.complete {
            oldest = min(oldest ?? pending.startedAt, pending.startedAt)
        }
        guard let oldest else { return }
        if now &- oldest >= limit {
            log(.protocolError, code: .enhanceYourCalm, detail: "a request or a frame unfinished \(Self.seconds(requestTimeout)) after it began (a slow client)")
            closeReason = "a request too slow"
            startDraining(lastStreamID: highestProcessed, reason: .idleTimeout, code: .enhanceYourCalm, context: context)
        } else {
            scheduleSlowCheck(in: .nanoseconds(Int64(limit - (now &- oldest))), context: context)
        }
    }

    /// "30 s", "1.5 s".
    private static func seconds(_ amount: TimeAmount) -> String {
        let milliseconds = amount.nanoseconds / 1_000_000
        return milliseconds % 1_000 == 0 ? "\(milliseconds / 1_000) s" : "\(Double(milliseconds) / 1_000) s"
    }

    // MARK: Requests

    /// Counts `size` more bytes held for `stream`, or resets the stream when the connection's
    /// budget would be exceeded.
    private func reserve(_ size: Int, stream id: Int32, context: ChannelHandlerContext) -> Bool {
        if bufferedBytes + size <= Self.connectionBudget {
            bufferedBytes += size
            return true
        }
        release(id)
        session.reset(stream: id, code: .enhanceYourCalm)
        log(.resetSent, stream: Int(id), code: .enhanceYourCalm, detail: "the connection holds more than \(Self.connectionBudget) bytes of unfinished requests")
        needsFlush = true
        return false
    }

    /// Forgets a stream's request and what it held.
    private func release(_ id: Int32) {
        if let pending = streams.removeValue(forKey: id) { bufferedBytes -= pending.heldBytes }
    }

    private func finish(_ id: Int32, context: ChannelHandlerContext) {
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
                handler.writeOutput(context: context)
                handler.checkDrained(context: context)
                context.flush()
            }
            return
        }
        answer(plan, stream: id, context: context)
    }

    /// Carries out a plan now, or after its delay.
    private func answer(_ plan: Plan, stream id: Int32, context: ChannelHandlerContext) {
        if let delay = plan.delay {
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: TimeAmount(delay)) {
                let (handler, context) = bound.value
                guard handler.context != nil else { return }
                handler.perform(plan, stream: id, context: context)
                handler.writeOutput(context: context)
                handler.checkDrained(context: context)
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
    private func startDraining(lastStreamID: Int, reason: APNsReason, code: H2ErrorCode, context: ChannelHandlerContext) {
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

    /// Once every stream up to the last-stream-id has ended (its answer written to the last
    /// byte), the GOAWAY: on the next turn of the loop, after what is being written now.
    private func checkDrained(context: ChannelHandlerContext) {
        guard case .draining(let last, _, _) = lifecycle, !session.hasOpenStream(atOrBelow: Int32(clamping: last)) else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.execute { bound.value.sendGoAwayAndClose() }
    }

    /// Writes the GOAWAY after every answer before it; from then on the session reads what the
    /// client sends only to count the streams it still opens, and the connection closes when
    /// the client closes it or ``lingerAfterGoAway`` after the GOAWAY is on the wire (closing at
    /// once, with the client's frames unread, would reset the connection under the GOAWAY).
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
        session.goAway(lastStreamID: Int32(clamping: last), code: code, debugData: Array("{\"reason\":\"\(reason.rawValue)\"}".utf8))
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(session.takeOutput()), promise: written)
        needsFlush = false
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in
            let context = bound.value
            let close = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: Self.lingerAfterGoAway) { close.value.close(promise: nil) }
        }
    }

    // MARK: Answering

    private func perform(_ plan: Plan, stream id: Int32, context: ChannelHandlerContext) {
        if case .closing = lifecycle { return }  // nothing for any stream after the GOAWAY
        if let count = plan.lowerStreams ?? (plan.raiseStreams ? core.configuration.maximumConcurrentStreams : nil) {
            session.announceMaximumConcurrentStreams(count)
        }
        if let goAway = plan.goAway, goAway.beforeAnswering {
            // This stream is not processed: the GOAWAY's last-stream-id is below it, unless a
            // higher stream was processed already (a last-stream-id is never below a processed
            // stream); then this one is refused, before the GOAWAY.
            var last = Int(id) - 2
            if case .draining(let draining, _, _) = lifecycle { last = draining } else if highestProcessed > Int(id) { last = highestProcessed }
            if last >= Int(id) {
                refuse(id)
            } else {
                // Not answered, not reset: the GOAWAY below its id says it was not processed.
                release(id)
            }
            startDraining(lastStreamID: max(0, last), reason: goAway.reason, code: .noError, context: context)
            return
        }
        if let code = plan.resetCode {
            let errorCode = H2ErrorCode(rawValue: code)
            session.reset(stream: id, code: errorCode)
            release(id)
            log(.resetSent, stream: Int(id), code: errorCode, detail: "a fault rule")
            return
        }
        if plan.closeConnection {
            closeReason = "closed by a fault rule"
            writeOutput(context: context)
            context.flush()
            context.close(promise: nil)
            return
        }
        guard let response = plan.response else { return }  // no answer
        release(id)
        session.respond(stream: id, status: response.status, fields: response.headers, body: response.body)
        needsFlush = true
        if let goAway = plan.goAway, !goAway.beforeAnswering {
            startDraining(lastStreamID: highestProcessed, reason: goAway.reason, code: .noError, context: context)
        }
    }

    /// REFUSED_STREAM: not processed, safe to send again (written before any GOAWAY).
    private func refuse(_ id: Int32) {
        session.reset(stream: id, code: .refusedStream)
        release(id)
        log(.resetSent, stream: Int(id), code: .refusedStream, detail: "refused before a GOAWAY")
    }
}
