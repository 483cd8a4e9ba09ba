import Foundation
import HeraldAuth
import HeraldHTTP2
import Logging
import NIOCore
import HeraldProtocol
import NIOHPACK
import NIOSSL
import NIOTLS
import Synchronization

/// The provider token a connection sends, changed no more often than APNs allows.
///
/// APNs answers 429 `TooManyProviderTokenUpdates` when a connection's token changes within 20
/// minutes of the previous change. A connection therefore keeps its token while the signer's
/// is newer, as long as the old one is still valid; when it can neither keep nor change it, the
/// connection retires and a new one takes over.
struct ConnectionTokenState {
    private(set) var token: ProviderToken?
    private(set) var bearer = ""
    private var changedAt: Date = .distantPast

    /// A margin over APNs' 20 minutes.
    static let updateInterval: TimeInterval = 20 * 60 + 15
    /// The oldest token still sent (APNs refuses them after 60 minutes).
    static let usableAge: TimeInterval = 58 * 60

    /// The token to send now, or `nil` when this connection cannot send a valid one.
    mutating func current(from shared: SharedProviderToken, now: Date) -> ProviderToken? {
        let latest = shared.signer.token()
        if let token {
            if token == latest { return token }
            if now.timeIntervalSince(changedAt) < Self.updateInterval {
                // Keep the older token while it is valid and APNs has not refused it.
                let usable = now.timeIntervalSince1970 - Double(token.issuedAt) < Self.usableAge && !shared.wasRejected(token)
                return usable ? token : nil
            }
        }
        token = latest
        bearer = "bearer " + latest.rawValue
        changedAt = now
        return latest
    }
}

/// The one provider token of a client: the signer shared by every connection, and the tokens APNs
/// answered `ExpiredProviderToken` to, which no connection sends again.
final class SharedProviderToken: Sendable {
    let signer: ProviderTokenSigner
    private let rejected = Mutex<[ProviderToken]>([])

    init(signer: ProviderTokenSigner) {
        self.signer = signer
    }

    /// Records that APNs refused `token` as expired, and makes a new one (once for all the
    /// requests that failed with it).
    func reject(_ token: ProviderToken) {
        rejected.withLock { list in
            if !list.contains(token) {
                list.append(token)
                if list.count > 8 { list.removeFirst() }
            }
        }
        _ = signer.token(replacing: token)
    }

    func wasRejected(_ token: ProviderToken) -> Bool {
        rejected.withLock { $0.contains(token) }
    }
}

/// Facts about a connection that the pool reads from any thread.
final class ConnectionGauge: Sendable {
    /// Attempts assigned to the connection and not finished.
    let load = Atomic<Int>(0)
    /// The server's `SETTINGS_MAX_CONCURRENT_STREAMS`.
    let capacity = Atomic<Int>(1)
    /// False once the connection takes no new requests (GOAWAY, retired, closed).
    let usable = Atomic<Bool>(true)
    /// False once the channel is closed.
    let open = Atomic<Bool>(true)
}

/// One HTTP/2 connection to APNs: opens a stream per attempt within the server's limit, queues
/// the rest, matches answers to attempts, and ends each attempt exactly once. The protocol is
/// ``HTTP2ClientSession``'s; this handler is the APNs side (tokens, attempts, deadlines, retiring
/// the connection) and lives on the connection's event loop.
final class APNsClientConnectionHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: every member is touched only on the channel's event loop (the pool reaches the
    // handler through NIOLoopBound).
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// One attempt on this connection, held by reference so that the answer's fields are filled
    /// in place.
    final class Pending {
        let attempt: Attempt
        let id: Int
        var stream: Int32?
        var token: ProviderToken?
        var status = 0
        var apnsID: String?
        var uniqueID: String?
        var requestID: String?
        var channelID: String?
        var body: [UInt8] = []

        init(attempt: Attempt, id: Int) {
            self.attempt = attempt
            self.id = id
        }
    }

    /// Where the connection is in its life; it only moves down this list.
    enum Lifecycle: Equatable {
        /// The preface is sent (or waits for the channel to become active); the server's first
        /// SETTINGS has not come, so no stream opens yet.
        case opening
        /// Streams open as the server's limit allows.
        case open
        /// Retired (the server's GOAWAY, idle, a token it cannot change, shutting down): takes
        /// no new attempts and closes, after its own GOAWAY, once its streams have ended.
        case draining(settingsReceived: Bool)
        /// Its GOAWAY is sent and the channel closing, or the channel is closed.
        case closed

        /// Whether the server's first SETTINGS has come (the idle check and PINGs wait for it).
        var settingsReceived: Bool {
            switch self {
            case .open: true
            case .draining(let received): received
            case .opening, .closed: false
            }
        }
    }

    struct Settings {
        var authority: String
        var plaintext: Bool
        var token: SharedProviderToken?
        var idleTimeout: TimeAmount?
        var pingInterval: TimeAmount?
        var pingTimeout: TimeAmount
        var now: @Sendable () -> Date
        var logger: Logger
    }

    let gauge: ConnectionGauge
    let ready: EventLoopPromise<Void>
    private let settings: Settings
    private var context: ChannelHandlerContext?
    private var session: HTTP2ClientSession<Pending>
    private var pending: [Int: Pending] = [:]
    private var waiting = CircularBuffer<Int>()
    private var nextAttemptID = 0
    /// Whether the preface is sent and the timers run (once the channel is active).
    private var started = false
    private(set) var lifecycle = Lifecycle.opening
    private var flushScheduled = false
    private var tokenState = ConnectionTokenState()
    private var lastActivity = NIODeadline.now()
    private var pingOutstanding: NIODeadline?
    private var timers: [RepeatedTask] = []
    /// The deadline sweep, running only while attempts are pending (an idle connection wakes
    /// nothing every 20 ms).
    private var sweep: RepeatedTask?
    private var closeReason = "the connection closed"

    init(settings: Settings, gauge: ConnectionGauge, ready: EventLoopPromise<Void>, allocator: ByteBufferAllocator) {
        self.settings = settings
        self.gauge = gauge
        self.ready = ready
        session = HTTP2ClientSession(allocator: allocator)
    }

    // MARK: Submitting

    /// Takes an attempt (on the event loop). It is written when a stream is free.
    func submit(_ attempt: Attempt) {
        guard context != nil, lifecycle == .opening || lifecycle == .open else {
            attempt.completion(.failed(.notSent(lifecycle == .closed ? closeReason : "the connection is going away")))
            gauge.load.subtract(1, ordering: .relaxed)
            return
        }
        let id = nextAttemptID
        nextAttemptID += 1
        pending[id] = Pending(attempt: attempt, id: id)
        waiting.append(id)
        if sweep == nil, let context { startSweep(context) }
        startWaiting()
    }

    private func startSweep(_ context: ChannelHandlerContext) {
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        sweep = context.eventLoop.scheduleRepeatedTask(initialDelay: Self.sweepInterval, delay: Self.sweepInterval) { _ in
            bound.value.sweepDeadlines()
        }
    }

    /// Reads the session where it is stored: a getter called on the property itself copied the
    /// whole session first (its tables, buffers and streams, a retain and a release each), once
    /// per stream opened and per flush.
    private func inPlace<T>(_ read: (inout HTTP2ClientSession<Pending>) -> T) -> T {
        read(&session)
    }

    /// Opens streams for waiting attempts while the server allows.
    private func startWaiting() {
        guard context != nil, lifecycle == .open else { return }
        while inPlace({ $0.canOpenStream }), let id = waiting.popFirst() {
            guard let entry = pending[id] else { continue }  // expired while waiting
            var bearer: String?
            if let shared = settings.token {
                guard let token = tokenState.current(from: shared, now: settings.now()) else {
                    // This connection can neither keep its token nor change it yet: a new
                    // connection takes over.
                    retire("its provider token cannot be changed yet on this connection")
                    finish(id, .failed(.notSent("the connection retired to change its provider token")))
                    continue
                }
                entry.token = token
                bearer = tokenState.bearer
            }
            let head = entry.attempt.head
            let authority = settings.authority
            let scheme = settings.plaintext ? HPACKBlockEncoder.Static.schemeHTTP : HPACKBlockEncoder.Static.schemeHTTPS
            entry.stream = session.openStream(entry, body: entry.attempt.body) { encoder, buffer in
                Self.writeHeaders(head, scheme: scheme, authority: authority, bearer: bearer, encoder: &encoder, into: &buffer)
            }
        }
        if session.nextStreamID >= Int32.max - 1, lifecycle == .open {
            retire("stream identifiers are used up")
        }
        scheduleFlush()
    }

    /// The request's header block: pseudo-headers, then the APNs headers, those that repeat from
    /// request to request kept in the server's table.
    static func writeHeaders(
        _ head: RequestHead, scheme: HPACKBlockEncoder.Static, authority: String, bearer: String?,
        encoder: inout HPACKBlockEncoder, into buffer: inout ByteBuffer
    ) {
        typealias Static = HPACKBlockEncoder.Static
        switch head.method {
        case .post: encoder.writeStatic(Static.methodPOST, into: &buffer)
        case .get: encoder.writeStatic(Static.methodGET, into: &buffer)
        case .delete: encoder.writeIndexed(name: ":method", staticName: Static.methodGET, value: "DELETE", into: &buffer)
        }
        encoder.writeStatic(scheme, into: &buffer)
        let fields = head.headers
        if let path = head.path {
            encoder.writeLiteral(staticName: Static.path, value: path, into: &buffer)
        } else {
            switch fields.target {
            case .device(let token)?: encoder.writePath(APNsPath.devicePrefix, token.hex, into: &buffer)
            case .broadcast(let bundleID)?: encoder.writePath(APNsPath.broadcastPrefix, bundleID, into: &buffer)
            case nil: encoder.writeLiteral(staticName: Static.path, value: "/", into: &buffer)
            }
        }
        encoder.writeIndexed(name: ":authority", staticName: Static.authority, value: authority, into: &buffer)
        if let bearer {
            encoder.writeIndexed(name: APNsHeader.authorization, staticName: Static.authorization, value: bearer, into: &buffer)
        }
        if let pushType = fields.pushType {
            encoder.writeIndexed(name: APNsHeader.pushType, value: pushType.rawValue, into: &buffer)
        }
        if let apnsID = fields.apnsID {
            encoder.writeLiteral(name: APNsHeader.id, value: apnsID.uuidString, into: &buffer)
        }
        if let expiration = fields.expiration {
            encoder.writeLiteral(name: APNsHeader.expiration, value: expiration.headerValue, into: &buffer)
        }
        if let priority = fields.priority {
            encoder.writeIndexed(name: APNsHeader.priority, value: priority.headerValue, into: &buffer)
        }
        if let topic = fields.topic {
            encoder.writeIndexed(name: APNsHeader.topic, value: topic, into: &buffer)
        }
        if let collapseID = fields.collapseID {
            encoder.writeLiteral(name: APNsHeader.collapseID, value: collapseID.value, into: &buffer)
        }
        if let channelID = fields.channelID {
            encoder.writeIndexed(name: APNsHeader.channelID, value: channelID, into: &buffer)
        }
    }

    /// Writes and flushes what the session queued, once per event-loop tick.
    private func scheduleFlush() {
        guard !flushScheduled, let context, inPlace({ $0.hasOutput }) else { return }
        flushScheduled = true
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let handler = bound.value
            handler.flushScheduled = false
            handler.flushNow()
        }
    }

    private func flushNow() {
        guard let context, inPlace({ $0.hasOutput }) else { return }
        context.writeAndFlush(wrapOutboundOut(session.takeOutput()), promise: nil)
    }

    /// Closes once the queued frames (a GOAWAY) are written: closing at once would drop them.
    private func flushAndClose(_ context: ChannelHandlerContext) {
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(session.takeOutput()), promise: written)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
    }

    /// Ends an attempt once: resumes its task (or calls its completion) and frees its place in
    /// the load.
    private func finish(_ id: Int, _ outcome: AttemptOutcome) {
        guard let entry = pending.removeValue(forKey: id) else { return }
        gauge.load.subtract(1, ordering: .relaxed)
        entry.attempt.completion(outcome)
    }

    /// Ends the attempts whose deadline has passed (run every ``sweepInterval``): a timer per
    /// request would cost an allocation and a heap operation on every send.
    private func sweepDeadlines() {
        guard !pending.isEmpty else {
            sweep?.cancel()
            sweep = nil
            return
        }
        let now = NIODeadline.now()
        var expired: [Pending] = []
        for entry in pending.values where entry.attempt.deadline <= now { expired.append(entry) }
        for entry in expired {
            if let stream = entry.stream { _ = session.resetStream(stream, code: .cancel) }
            finish(entry.id, .failed(.deadline))
        }
        if !expired.isEmpty {
            startWaiting()
            closeIfDrained()
        }
    }

    /// How often deadlines are checked: they fire at most this late.
    static let sweepInterval = TimeAmount.milliseconds(20)

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        session.receive(&bytes)
        do {
            while let event = try session.nextEvent() {
                handle(event)
            }
        } catch {
            settings.logger.debug("HTTP/2 connection error", metadata: ["error": "\(error)"])
            closeReason = "\(error)"
            flushAndClose(context)
        }
    }

    private func handle(_ event: HTTP2ClientSession<Pending>.Event) {
        switch event {
        case .headers(_, let entry, let headers, let endStream):
            for header in headers {
                let name = header.name
                if name == ":status" {
                    // 1xx answers are interim; the final status replaces them.
                    entry.status = Int(header.value) ?? 0
                } else if name.utf8.count > 5, name.hasPrefix("apns-") {
                    switch name {
                    case APNsHeader.id: entry.apnsID = header.value
                    case APNsHeader.uniqueID: entry.uniqueID = header.value
                    case APNsHeader.requestID: entry.requestID = header.value
                    case APNsHeader.channelID: entry.channelID = header.value
                    default: break
                    }
                }
            }
            if endStream { complete(entry) }
        case .data(_, let entry, let data, let endStream):
            if entry.body.count < 65_536 { entry.body.append(contentsOf: data.readableBytesView.prefix(65_536 - entry.body.count)) }
            if endStream { complete(entry) }
        case .reset(_, let entry, let code):
            finish(entry.id, .failed(code == .refusedStream ? .notSent("the server refused the stream") : .reset(code)))
            afterStreamEnded()
        case .settings(let first):
            gauge.capacity.store(min(session.peerMaximumStreams, Int(Int32.max)), ordering: .relaxed)
            if first {
                switch lifecycle {
                case .opening: lifecycle = .open
                case .draining: lifecycle = .draining(settingsReceived: true)
                case .open, .closed: break
                }
                lastActivity = .now()
                ready.succeed()
            }
            startWaiting()
        case .pingAcknowledged:
            pingOutstanding = nil
        case .goAway(let lastStreamID, let code, let debugData):
            let reason = Self.reason(in: debugData) ?? "\(code)"
            settings.logger.debug("GOAWAY from the server", metadata: ["reason": "\(reason)", "last-stream-id": "\(lastStreamID)"])
            retire("the server sent GOAWAY (\(reason))")
            for entry in session.abandonStreams(above: lastStreamID) {
                finish(entry.id, .failed(.notSent("the server sent GOAWAY (\(reason)) before processing it")))
            }
            closeIfDrained()
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Once per read burst rather than per answer: the idle timeout counts in seconds.
        lastActivity = .now()
        // Acknowledgements and window updates go out with the next flush, in this tick.
        scheduleFlush()
        context.fireChannelReadComplete()
    }

    private func complete(_ entry: Pending) {
        let answer = Answer(
            status: entry.status, apnsID: entry.apnsID, uniqueID: entry.uniqueID, requestID: entry.requestID,
            channelID: entry.channelID, body: entry.body)
        finish(entry.id, entry.status == 0 ? .failed(.reset(.protocolError)) : .answered(answer, token: entry.token))
        afterStreamEnded()
    }

    private func afterStreamEnded() {
        if case .draining = lifecycle { closeIfDrained() } else { startWaiting() }
    }

    /// `{"reason":"Shutdown"}` in a GOAWAY's debug data.
    static func reason(in buffer: ByteBuffer) -> String? {
        guard let text = buffer.getString(at: buffer.readerIndex, length: buffer.readableBytes),
              let range = text.range(of: "\"reason\":\"") else { return nil }
        return String(text[range.upperBound...].prefix { $0 != "\"" })
    }

    // MARK: Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // Added after a proxy's tunnel opened: the channel is already active.
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    /// The connection preface (TLS holds it back until the handshake is done).
    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        startTimers(context)
        session.start()
        flushNow()
    }

    /// The idle check and the PING: started once the channel is active and
    /// cancelled when it closes or the handler is removed, whichever comes first. A connection
    /// that was refused never becomes active, so it never starts them (they used to start in
    /// `handlerAdded` and outlive every refused connection).
    private func startTimers(_ context: ChannelHandlerContext) {
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        if let idle = settings.idleTimeout {
            timers.append(context.eventLoop.scheduleRepeatedTask(initialDelay: idle, delay: .nanoseconds(max(idle.nanoseconds / 4, 1_000_000))) { _ in
                let handler = bound.value
                // Idle once open (a slow handshake is the connect timeout's business).
                if handler.lifecycle.settingsReceived, handler.pending.isEmpty, NIODeadline.now() - handler.lastActivity >= idle {
                    handler.retire("idle for \(idle)")
                    handler.closeIfDrained()
                }
            })
        }
        if let interval = settings.pingInterval {
            let timeout = settings.pingTimeout
            let eventLoop = context.eventLoop
            timers.append(context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
                let handler = bound.value
                guard handler.context != nil, handler.lifecycle.settingsReceived else { return }
                if let sent = handler.pingOutstanding {
                    if NIODeadline.now() - sent >= timeout { handler.closeAfterUnansweredPing(timeout) }
                    return
                }
                handler.pingOutstanding = .now()
                handler.session.ping(1)
                handler.flushNow()
                // The answer is awaited at the next tick, or sooner if the timeout is shorter.
                if timeout < interval {
                    eventLoop.scheduleTask(in: timeout) {
                        let handler = bound.value
                        if handler.pingOutstanding != nil, handler.lifecycle != .closed { handler.closeAfterUnansweredPing(timeout) }
                    }
                }
            })
        }
    }

    private func cancelTimers() {
        for timer in timers { timer.cancel() }
        timers = []
        sweep?.cancel()
        sweep = nil
    }

    /// The repeating timers this connection holds now (for tests: none once it is gone).
    var scheduledTimerCount: Int { timers.count + (sweep == nil ? 0 : 1) }

    private func closeAfterUnansweredPing(_ timeout: TimeAmount) {
        closeReason = "the server did not answer a PING within \(timeout)"
        settings.logger.info("closing a connection: \(closeReason)")
        context?.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted(let negotiated) = event, negotiated != "h2" {
            let error = AttemptFailure.connectFailed(ConnectionFailure(
                cause: .notHTTP2, endpoint: settings.authority, detail: "ALPN offered h2, the server chose \(negotiated ?? "nothing")"))
            ready.fail(error)
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        closeReason = "connection error: \(error)"
        ready.fail(AttemptFailure.connectFailed(ConnectionFailure.classify(error, endpoint: settings.authority)))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        lifecycle = .closed
        gauge.usable.store(false, ordering: .relaxed)
        gauge.open.store(false, ordering: .relaxed)
        ready.fail(AttemptFailure.connectFailed(ConnectionFailure(cause: .closed, endpoint: settings.authority, detail: closeReason)))
        cancelTimers()
        for entry in session.removeAllStreams() { finish(entry.id, .failed(.connectionLost(closeReason))) }
        for id in Array(pending.keys) { finish(id, .failed(.notSent(closeReason))) }
        waiting.removeAll()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
        self.context = nil
    }

    /// Takes no new requests; those waiting for a stream go elsewhere.
    private func retire(_ why: String) {
        if lifecycle == .opening || lifecycle == .open {
            lifecycle = .draining(settingsReceived: lifecycle.settingsReceived)
            closeReason = why
            gauge.usable.store(false, ordering: .relaxed)
        }
        while let id = waiting.popFirst() {
            finish(id, .failed(.notSent(why)))
        }
    }

    /// Closes a retired connection once its streams have ended, after telling the server.
    private func closeIfDrained() {
        guard case .draining = lifecycle, inPlace({ $0.openStreamCount }) == 0, let context else { return }
        lifecycle = .closed
        session.goAway(code: .noError)
        flushAndClose(context)
    }

    /// Retires the connection and closes it when its streams end (on the event loop).
    func drainAndClose() {
        retire("the client is shutting down")
        closeIfDrained()
    }
}
