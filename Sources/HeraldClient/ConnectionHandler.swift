import Foundation
import HeraldAuth
import Logging
import NIOCore
import NIOHPACK
import NIOHTTP2
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
/// the rest, matches answers to attempts, and ends each attempt exactly once. Lives on the
/// connection's event loop.
final class APNsClientConnectionHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// One attempt on this connection, held by reference so that the answer's fields are filled
    /// in place.
    private final class Pending {
        let attempt: Attempt
        var stream: HTTP2StreamID?
        var token: ProviderToken?
        var status = 0
        var apnsID: String?
        var uniqueID: String?
        var requestID: String?
        var channelID: String?
        var body: [UInt8] = []

        let id: Int

        init(attempt: Attempt, id: Int) {
            self.attempt = attempt
            self.id = id
        }
    }

    struct Settings {
        var authority: String
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
    private var pending: [Int: Pending] = [:]
    private var streams: [HTTP2StreamID: Pending] = [:]
    private var waiting = CircularBuffer<Int>()
    private var nextAttemptID = 0
    private var nextStreamID: Int32 = 1
    private var openStreams = 0
    private var maximumStreams = 1
    private var settingsReceived = false
    private var goingAway = false
    private var closed = false
    private var flushScheduled = false
    private var unacknowledged = 0
    private var tokenState = ConnectionTokenState()
    private var lastActivity = NIODeadline.now()
    private var pingOutstanding: NIODeadline?
    private var timers: [RepeatedTask] = []
    private var closeReason = "the connection closed"

    init(settings: Settings, gauge: ConnectionGauge, ready: EventLoopPromise<Void>) {
        self.settings = settings
        self.gauge = gauge
        self.ready = ready
    }

    // MARK: Submitting

    /// Takes an attempt (on the event loop). It is written when a stream is free.
    func submit(_ attempt: Attempt) {
        lastActivity = .now()
        guard let context, !goingAway, !closed else {
            attempt.continuation.resume(returning: .failed(.notSent(closed ? closeReason : "the connection is going away")))
            gauge.load.subtract(1, ordering: .relaxed)
            return
        }
        let id = nextAttemptID
        nextAttemptID += 1
        pending[id] = Pending(attempt: attempt, id: id)
        waiting.append(id)
        startWaiting()
    }

    /// Opens streams for waiting attempts while the server allows.
    private func startWaiting() {
        guard let context else { return }
        while openStreams < maximumStreams, settingsReceived, !goingAway, let id = waiting.popFirst() {
            guard let entry = pending[id] else { continue }  // expired while waiting
            if nextStreamID > Int32.max - 2 {
                retire("stream identifiers are used up")
                finish(id, .failed(.notSent("stream identifiers are used up")))
                continue
            }
            var headers = entry.attempt.headers
            if let shared = settings.token {
                guard let token = tokenState.current(from: shared, now: settings.now()) else {
                    // This connection can neither keep its token nor change it yet: a new
                    // connection takes over.
                    retire("its provider token cannot be changed yet on this connection")
                    finish(id, .failed(.notSent("the connection retired to change its provider token")))
                    continue
                }
                entry.token = token
                headers.add(name: "authorization", value: tokenState.bearer)
            }
            let stream = HTTP2StreamID(nextStreamID)
            nextStreamID += 2
            entry.stream = stream
            streams[stream] = entry
            openStreams += 1
            let hasBody = entry.attempt.body.readableBytes > 0
            let promise = context.eventLoop.makePromise(of: Void.self)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .headers(.init(headers: headers, endStream: !hasBody)))), promise: promise)
            if hasBody {
                context.write(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .data(.init(data: .byteBuffer(entry.attempt.body), endStream: true)))), promise: nil)
            }
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            promise.futureResult.whenFailure { error in
                let handler = bound.value
                if handler.streams.removeValue(forKey: stream) != nil {
                    handler.openStreams -= 1
                    handler.finish(id, .failed(.notSent("the request could not be written: \(error)")))
                }
            }
            scheduleFlush()
        }
    }

    private func scheduleFlush() {
        guard !flushScheduled, let context else { return }
        flushScheduled = true
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let handler = bound.value
            handler.flushScheduled = false
            handler.context?.flush()
        }
    }

    /// Ends an attempt once: resumes its task and frees its place in the load.
    private func finish(_ id: Int, _ outcome: AttemptOutcome) {
        guard let entry = pending.removeValue(forKey: id) else { return }
        gauge.load.subtract(1, ordering: .relaxed)
        entry.attempt.continuation.resume(returning: outcome)
    }

    /// Ends the attempts whose deadline has passed (run every ``sweepInterval``): a timer per
    /// request would cost an allocation and a heap operation on every send.
    private func sweepDeadlines() {
        guard !pending.isEmpty else { return }
        let now = NIODeadline.now()
        var expired: [Pending] = []
        for entry in pending.values where entry.attempt.deadline <= now { expired.append(entry) }
        for entry in expired {
            if let stream = entry.stream, streams.removeValue(forKey: stream) != nil {
                openStreams -= 1
                context?.write(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .rstStream(.cancel))), promise: nil)
                scheduleFlush()
            }
            finish(entry.id, .failed(.deadline))
        }
        if !expired.isEmpty { startWaiting() }
    }

    /// How often deadlines are checked: they fire at most this late.
    static let sweepInterval = TimeAmount.milliseconds(20)

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            guard let entry = streams[frame.streamID] else { return }
            for header in headers.headers {
                let name = header.name
                if name == ":status" {
                    entry.status = Int(header.value) ?? 0
                } else if name.utf8.count > 5, name.hasPrefix("apns-") {
                    switch name {
                    case "apns-id": entry.apnsID = header.value
                    case "apns-unique-id": entry.uniqueID = header.value
                    case "apns-request-id": entry.requestID = header.value
                    case "apns-channel-id": entry.channelID = header.value
                    default: break
                    }
                }
            }
            if headers.endStream { complete(frame.streamID) }
        case .data(let data):
            if case .byteBuffer(let buffer) = data.data {
                unacknowledged += buffer.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
                if let entry = streams[frame.streamID], entry.body.count < 65_536 {
                    entry.body.append(contentsOf: buffer.readableBytesView)
                }
            }
            if data.endStream { complete(frame.streamID) }
        case .rstStream(let code):
            guard let entry = streams.removeValue(forKey: frame.streamID) else { return }
            openStreams -= 1
            finish(entry.id, .failed(code == .refusedStream ? .notSent("the server refused the stream") : .reset(code)))
            startWaiting()
        case .settings(.settings(let values)):
            for setting in values where setting.parameter == .maxConcurrentStreams {
                maximumStreams = setting.value
                gauge.capacity.store(setting.value, ordering: .relaxed)
            }
            if !settingsReceived {
                settingsReceived = true
                lastActivity = .now()
                if !values.contains(where: { $0.parameter == .maxConcurrentStreams }) {
                    maximumStreams = 100
                    gauge.capacity.store(100, ordering: .relaxed)
                }
                ready.succeed()
            }
            startWaiting()
        case .ping(_, ack: true):
            pingOutstanding = nil
        case .goAway(let lastStreamID, let code, let opaque):
            let reason = opaque.flatMap { Self.reason(in: $0) } ?? "\(code)"
            settings.logger.debug("GOAWAY from the server", metadata: ["reason": "\(reason)", "last-stream-id": "\(lastStreamID)"])
            retire("the server sent GOAWAY (\(reason))")
            for (stream, entry) in streams where stream > lastStreamID {
                streams.removeValue(forKey: stream)
                openStreams -= 1
                finish(entry.id, .failed(.notSent("the server sent GOAWAY (\(reason)) before processing it")))
            }
            closeIfDrained()
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if unacknowledged >= 16_384 {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: unacknowledged))), promise: nil)
            unacknowledged = 0
            scheduleFlush()
        }
        context.fireChannelReadComplete()
    }

    private func complete(_ stream: HTTP2StreamID) {
        guard let entry = streams.removeValue(forKey: stream) else { return }
        openStreams -= 1
        lastActivity = .now()
        let answer = Answer(
            status: entry.status, apnsID: entry.apnsID, uniqueID: entry.uniqueID, requestID: entry.requestID,
            channelID: entry.channelID, body: entry.body)
        finish(entry.id, .answered(answer, token: entry.token))
        if goingAway { closeIfDrained() } else { startWaiting() }
    }

    /// `{"reason":"Shutdown"}` in a GOAWAY's opaque data.
    static func reason(in buffer: ByteBuffer) -> String? {
        guard let text = buffer.getString(at: buffer.readerIndex, length: buffer.readableBytes),
              let range = text.range(of: "\"reason\":\"") else { return nil }
        return String(text[range.upperBound...].prefix { $0 != "\"" })
    }

    // MARK: Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timers.append(context.eventLoop.scheduleRepeatedTask(initialDelay: Self.sweepInterval, delay: Self.sweepInterval) { _ in
            bound.value.sweepDeadlines()
        })
        if let idle = settings.idleTimeout {
            timers.append(context.eventLoop.scheduleRepeatedTask(initialDelay: idle, delay: .nanoseconds(max(idle.nanoseconds / 4, 1_000_000))) { _ in
                let handler = bound.value
                // Idle once open (a slow handshake is the connect timeout's business).
                if handler.settingsReceived, handler.pending.isEmpty, NIODeadline.now() - handler.lastActivity >= idle {
                    handler.retire("idle for \(idle)")
                    handler.closeIfDrained()
                }
            })
        }
        if let interval = settings.pingInterval {
            let timeout = settings.pingTimeout
            timers.append(context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
                let handler = bound.value
                guard let context = handler.context, !handler.closed else { return }
                if let sent = handler.pingOutstanding {
                    if NIODeadline.now() - sent >= timeout {
                        handler.closeReason = "the server did not answer a PING within \(timeout)"
                        handler.settings.logger.info("closing a connection: \(handler.closeReason)")
                        context.close(promise: nil)
                    }
                    return
                }
                handler.pingOutstanding = .now()
                context.writeAndFlush(handler.wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: 1), ack: false))), promise: nil)
                // The answer is awaited at the next tick, or sooner if the timeout is shorter.
                if timeout < interval {
                    context.eventLoop.scheduleTask(in: timeout) {
                        let handler = bound.value
                        if handler.pingOutstanding != nil, !handler.closed {
                            handler.closeReason = "the server did not answer a PING within \(timeout)"
                            handler.context?.close(promise: nil)
                        }
                    }
                }
            })
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted(let negotiated) = event, negotiated != "h2" {
            let error = AttemptFailure.connectFailed("the server did not agree to HTTP/2 (ALPN offered h2, the server chose \(negotiated ?? "nothing"))")
            ready.fail(error)
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        closeReason = "connection error: \(error)"
        ready.fail(AttemptFailure.connectFailed("\(error)"))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        gauge.usable.store(false, ordering: .relaxed)
        gauge.open.store(false, ordering: .relaxed)
        ready.fail(AttemptFailure.connectFailed(closeReason))
        for timer in timers { timer.cancel() }
        timers = []
        let written = streams
        streams = [:]
        openStreams = 0
        for (_, entry) in written { finish(entry.id, .failed(.connectionLost(closeReason))) }
        for id in Array(pending.keys) { finish(id, .failed(.notSent(closeReason))) }
        waiting.removeAll()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Takes no new requests; those waiting for a stream go elsewhere.
    private func retire(_ why: String) {
        if !goingAway {
            goingAway = true
            closeReason = why
            gauge.usable.store(false, ordering: .relaxed)
        }
        while let id = waiting.popFirst() {
            finish(id, .failed(.notSent(why)))
        }
    }

    /// Closes a retired connection once its streams have ended.
    private func closeIfDrained() {
        guard goingAway, streams.isEmpty, !closed else { return }
        context?.close(promise: nil)
    }

    /// Retires the connection and closes it when its streams end (on the event loop).
    func drainAndClose() {
        retire("the client is shutting down")
        closeIfDrained()
    }
}
