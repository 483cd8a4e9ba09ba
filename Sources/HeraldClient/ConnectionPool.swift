import Foundation
import HeraldAuth
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// One open (or opening) connection as the pool sees it.
final class PooledConnection: Sendable {
    let channel: any Channel
    let handler: NIOLoopBound<APNsClientConnectionHandler>
    let gauge: ConnectionGauge

    init(channel: any Channel, handler: APNsClientConnectionHandler) {
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        gauge = handler.gauge
    }

    /// Sends one attempt and waits for its outcome. The caller has counted it in the load.
    func perform(_ head: RequestHead, body: ByteBuffer, deadline: NIODeadline) async -> AttemptOutcome {
        await withUnsafeContinuation { continuation in
            submit(Attempt(head: head, body: body, deadline: deadline, completion: .resume(continuation)))
        }
    }

    /// Sends one attempt; `completion` is called with its outcome on the connection's event
    /// loop. The caller has counted it in the load.
    func submit(_ head: RequestHead, body: ByteBuffer, deadline: NIODeadline, completion: @escaping @Sendable (AttemptOutcome) -> Void) {
        submit(Attempt(head: head, body: body, deadline: deadline, completion: .call(completion)))
    }

    private func submit(_ attempt: Attempt) {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.submit(attempt) }
    }

    func drainAndClose() {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.drainAndClose() }
    }
}

/// Connections to one server, opened on demand up to a maximum, with the load spread over them.
final class ConnectionPool: Sendable {
    struct Endpoint: Sendable {
        var host: String
        var port: Int
    }

    private struct State {
        var connections: [PooledConnection] = []
        var opening: [EventLoopFuture<PooledConnection>] = []
        var shutDown = false
        var breaker = ConnectionBreaker()
    }

    let endpoint: Endpoint
    private let configuration: APNsClientConfiguration
    private let group: any EventLoopGroup
    private let sslContext: NIOSSLContext?
    private let token: SharedProviderToken?
    private let metrics: ClientMetrics
    private let state = Mutex(State())

    init(
        endpoint: Endpoint, configuration: APNsClientConfiguration, group: any EventLoopGroup, sslContext: NIOSSLContext?,
        token: SharedProviderToken?, metrics: ClientMetrics
    ) {
        self.endpoint = endpoint
        self.configuration = configuration
        self.group = group
        self.sslContext = sslContext
        self.token = token
        self.metrics = metrics
    }

    /// What a request does for a connection now.
    private enum Step {
        case use(PooledConnection), wait(EventLoopFuture<PooledConnection>), backOff(until: NIODeadline, lastError: ConnectionFailure, fatal: Bool), fail(String)
    }

    /// The connection to use now (the least loaded usable one, preferring one with a free
    /// stream, opening another when that helps), or what to do instead.
    private func nextStep(now: NIODeadline) -> Step {
        state.withLock { state in
            if state.shutDown { return .fail("the client is shut down") }
            state.connections.removeAll { !$0.gauge.open.load(ordering: .relaxed) }
            var best: PooledConnection?
            var bestLoad = Int.max
            var bestFree = false
            for connection in state.connections where connection.gauge.usable.load(ordering: .relaxed) {
                let load = connection.gauge.load.load(ordering: .relaxed)
                let free = load < connection.gauge.capacity.load(ordering: .relaxed)
                if (free && !bestFree) || (free == bestFree && load < bestLoad) {
                    best = connection
                    bestLoad = load
                    bestFree = free
                }
            }
            let usableCount = state.connections.count { $0.gauge.usable.load(ordering: .relaxed) }
            if (best == nil || !bestFree), usableCount + state.opening.count < configuration.maximumConnections {
                if state.breaker.mayConnect(now: now, opening: state.opening.count) {
                    state.opening.append(open())
                }
            }
            if let best {
                best.gauge.load.add(1, ordering: .relaxed)
                return .use(best)
            }
            if let opening = state.opening.first { return .wait(opening) }
            return .backOff(
                until: state.breaker.retryAt ?? now,
                lastError: state.breaker.lastError ?? ConnectionFailure(cause: .closed, endpoint: "\(endpoint.host):\(endpoint.port)", detail: ""),
                fatal: state.breaker.lastErrorIsFatal)
        }
    }

    /// A connection to use at once, if one is open and usable; `nil` when the caller would
    /// have to wait for one (``lease(deadline:)`` waits).
    func leaseNow() -> PooledConnection? {
        if case .use(let connection) = nextStep(now: NIODeadline.now()) { return connection }
        return nil
    }

    /// A connection for one attempt, counted in its load: the least loaded usable one, with a new
    /// connection opened when all are at the server's stream limit and the maximum allows.
    ///
    /// While the endpoint refuses connections, attempts are coalesced: one connection is tried
    /// at a time, after a backoff that grows to ``ConnectionBreaker/maximumBackoff``, and every
    /// request waits for that attempt (up to its own deadline) instead of opening its own.
    func lease(deadline: NIODeadline) async throws(AttemptFailure) -> PooledConnection {
        while true {
            switch nextStep(now: NIODeadline.now()) {
            case .use(let connection): return connection
            case .fail(let why): throw .notSent(why)
            case .backOff(let until, let lastError, let fatal):
                // The endpoint refused the last attempt: wait for the next one, or end at the
                // request's deadline with the reason (at once when waiting cannot help).
                if fatal { throw .connectFailed(lastError) }
                if until >= deadline {
                    try? await Task.sleep(for: .nanoseconds(max(0, (deadline - NIODeadline.now()).nanoseconds)))
                    throw .connectFailed(lastError)
                }
                try? await Task.sleep(for: .nanoseconds(max(1_000_000, (until - NIODeadline.now()).nanoseconds)))
            case .wait(let future):
                // The wait for a connection counts against the request's deadline.
                let bounded = future.eventLoop.makePromise(of: PooledConnection.self)
                let timer = future.eventLoop.scheduleTask(deadline: deadline) { bounded.fail(AttemptFailure.deadline) }
                future.cascade(to: bounded)
                bounded.futureResult.whenComplete { _ in timer.cancel() }
                do {
                    _ = try await bounded.futureResult.get()
                } catch let failure as AttemptFailure {
                    let (lastError, fatal) = state.withLock { ($0.breaker.lastError, $0.breaker.lastErrorIsFatal) }
                    switch failure {
                    case .connectFailed where !fatal && NIODeadline.now() < deadline:
                        // A refused attempt: the others wait for the next one rather than fail now.
                        continue
                    case .deadline where lastError != nil:
                        // Out of time while the endpoint refused: say why, not only "too late".
                        throw .connectFailed(lastError!)
                    default:
                        throw failure
                    }
                } catch {
                    throw .connectFailed(ConnectionFailure.classify(error, endpoint: "\(endpoint.host):\(endpoint.port)"))
                }
            }
        }
    }

    /// Opens connections ahead of time, up to `count`.
    func prewarm(_ count: Int) async throws {
        let futures: [EventLoopFuture<PooledConnection>] = state.withLock { state in
            var futures = state.opening
            while state.connections.count + state.opening.count < min(count, configuration.maximumConnections) {
                let future = open()
                state.opening.append(future)
                futures.append(future)
            }
            return futures
        }
        for future in futures { _ = try await future.get() }
    }

    /// Opens one connection; it joins the pool when the server's settings arrive.
    private func open() -> EventLoopFuture<PooledConnection> {
        let eventLoop = group.next()
        let ready = eventLoop.makePromise(of: Void.self)
        let gauge = ConnectionGauge()
        let handlerSettings = APNsClientConnectionHandler.Settings(
            authority: endpoint.host, plaintext: configuration.plaintext, token: token,
            idleTimeout: configuration.idleTimeout.map { .nanoseconds($0.nanoseconds) },
            pingInterval: configuration.pingInterval.map { .nanoseconds($0.nanoseconds) },
            pingTimeout: .nanoseconds(configuration.pingTimeout.nanoseconds),
            now: configuration.now, logger: configuration.logger)
        let handler = APNsClientConnectionHandler(settings: handlerSettings, gauge: gauge, ready: ready, allocator: ByteBufferAllocator())
        let sslContext = self.sslContext
        let endpoint = self.endpoint
        let proxy = configuration.proxy
        let connectHost = proxy?.host ?? endpoint.host
        let connectPort = proxy?.port ?? endpoint.port
        let bootstrap = ClientBootstrap(group: eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.nanoseconds(configuration.connectTimeout.nanoseconds))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    var protocolHandlers: [any ChannelHandler] = []
                    if let sslContext {
                        let hostname = Self.isIPAddress(endpoint.host) ? nil : endpoint.host
                        protocolHandlers.append(try NIOSSLClientHandler(context: sslContext, serverHostname: hostname))
                    }
                    protocolHandlers.append(handler)
                    if let proxy {
                        // The TLS and HTTP/2 handlers join once the proxy's tunnel is up.
                        try sync.addHandler(ProxyConnectHandler(target: endpoint, credentials: proxy.basicCredentials, then: protocolHandlers, failing: ready))
                    } else {
                        try sync.addHandlers(protocolHandlers)
                    }
                }
            }
        let timeout = eventLoop.scheduleTask(in: .nanoseconds(configuration.connectTimeout.nanoseconds)) {
            ready.fail(AttemptFailure.connectFailed(ConnectionFailure(
                cause: .timeout, endpoint: "\(endpoint.host):\(endpoint.port)", detail: "no HTTP/2 settings within \(self.configuration.connectTimeout)")))
        }
        let metrics = self.metrics
        let logger = configuration.logger
        let connected = bootstrap.connect(host: connectHost, port: connectPort)
        let result = connected.flatMap { channel -> EventLoopFuture<PooledConnection> in
            ready.futureResult.map { PooledConnection(channel: channel, handler: handler) }
                .flatMapErrorThrowing { error in
                    channel.close(promise: nil)
                    throw error
                }
        }.flatMapErrorThrowing { error -> PooledConnection in
            timeout.cancel()
            ready.fail(error)
            // Named by the endpoint asked for (through a proxy, the proxy's own failures say so).
            var failure = ConnectionFailure.classify(error, endpoint: "\(connectHost):\(connectPort)")
            if failure.cause != .proxy { failure.endpoint = "\(endpoint.host):\(endpoint.port)" }
            throw AttemptFailure.connectFailed(failure)
        }
        metrics.connectionAttempts.increment()
        result.whenComplete { [weak self] outcome in
            timeout.cancel()
            guard let self else { return }
            let now = NIODeadline.now()
            let server = "\(endpoint.host):\(endpoint.port)"
            // Under the lock, so no request is sent over the connection before it is counted
            // and, once per outage (not once per attempt), the change is logged.
            self.state.withLock { state in
                state.opening.removeAll { future in future.isSameFuture(as: result) }
                let change: ConnectionBreaker.Change
                switch outcome {
                case .success(let connection):
                    change = state.breaker.succeeded(now: now)
                    metrics.connectionOpened()
                    connection.channel.closeFuture.whenComplete { _ in metrics.connectionClosed() }
                    if state.shutDown {
                        connection.drainAndClose()
                    } else {
                        state.connections.append(connection)
                    }
                case .failure(let error):
                    change = state.breaker.failed(now: now, error: ConnectionFailure.classify(error, endpoint: server))
                    metrics.connectionFailures.increment()
                }
                switch change {
                case .none: break
                case .becameUnreachable(let error):
                    logger.warning(
                        "APNs endpoint unreachable; connection attempts back off up to \(ConnectionBreaker.maximumBackoff)",
                        metadata: ["server": "\(server)", "error": "\(error)"])
                case .becameReachable(let outage):
                    logger.notice("APNs endpoint reachable again", metadata: ["server": "\(server)", "unreachable for": "\(outage)"])
                }
            }
            switch outcome {
            case .success:
                logger.debug("connected", metadata: ["server": "\(server)"])
            case .failure(let error):
                logger.debug("connection attempt failed", metadata: ["server": "\(server)", "error": "\(error)"])
            }
        }
        return result
    }

    /// Stops opening connections and closes each once its streams have ended.
    func shutdown() async {
        let (connections, opening) = state.withLock { state in
            state.shutDown = true
            let connections = state.connections
            state.connections = []
            return (connections, state.opening)
        }
        for future in opening { _ = try? await future.get() }
        for connection in connections { connection.drainAndClose() }
        for connection in connections { try? await connection.channel.closeFuture.get() }
    }

    /// How the pool's connections stand now (``APNsClient/connectionStatus``).
    var status: APNsClient.ConnectionStatus {
        let now = NIODeadline.now()
        return state.withLock { state in
            APNsClient.ConnectionStatus(
                open: state.connections.count { $0.gauge.open.load(ordering: .relaxed) },
                failedAttempts: state.breaker.failures,
                lastFailure: state.breaker.failures > 0 ? state.breaker.lastError : nil,
                nextAttemptIn: state.breaker.retryAt.map { .nanoseconds(max(0, ($0 - now).nanoseconds)) })
        }
    }

    /// The connections open now.
    var openConnectionCount: Int {
        state.withLock { state in state.connections.count { $0.gauge.open.load(ordering: .relaxed) } }
    }

    static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}

extension EventLoopFuture {
    func isSameFuture(as other: EventLoopFuture<Value>) -> Bool { self === other }
}
