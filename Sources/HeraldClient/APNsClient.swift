import Foundation
import HeraldAsync
import HeraldAuth
import HeraldJSON
import HeraldLint
import HeraldPayload
import HeraldProtocol
import Logging
import Metrics
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// An HTTP/2 provider client for APNs: sends notifications over a pool of connections, within
/// the server's stream limits, with one outcome per request.
///
/// ```swift
/// let client = try APNsClient(configuration: .init(server: .sandbox, credentials: .token(key)))
/// let response = try await client.send(.alert(title: "Hello", body: "World"), to: token, topic: "com.example.app")
/// print(response.apnsID)
/// ```
///
/// Each call of `send` ends in exactly one outcome: an ``APNsResponse`` or an
/// ``APNsClientError``. Nothing waits forever (``APNsClientConfiguration/requestTimeout``), and
/// at most ``APNsClientConfiguration/maximumRequestsInFlight`` requests are in flight: beyond
/// that, `send` suspends. Connection failures, GOAWAY, 429, 500 and 503 are retried on the
/// policy; a rejection Apple says not to retry is returned at once. Call ``shutdown()`` before
/// the client goes away: it lets requests in flight finish.
public final class APNsClient: Sendable {
    /// The configuration.
    public let configuration: APNsClientConfiguration
    private let pool: ConnectionPool
    private let channelPool: ConnectionPool
    private let token: SharedProviderToken?
    private let limiter: InFlightLimiter
    private let metrics: ClientMetrics
    private let linter: Linter?
    private let closed = ClosedFlag()

    /// A client; no connection is opened until the first request (or ``prewarm()``).
    ///
    /// - Throws: ``APNsClientError`` (``APNsClientError/Kind/connectionFailed``) when the
    ///   trusted certificates or the client certificate cannot be used.
    public init(configuration: APNsClientConfiguration, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws(APNsClientError) {
        self.configuration = configuration
        var tlsContext: NIOSSLContext?
        if !configuration.plaintext {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.minimumTLSVersion = .tlsv12
            tls.applicationProtocols = ["h2"]
            do {
                let extra = try configuration.additionalTrustRootsPEM.flatMap { pem in
                    try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
                }
                if configuration.trustsSystemRoots {
                    if !extra.isEmpty { tls.additionalTrustRoots = [.certificates(extra)] }
                } else {
                    tls.trustRoots = .certificates(extra)
                }
                if case .certificate(let identity) = configuration.credentials {
                    tls.certificateChain = identity.certificateChain.map { .certificate($0) }
                    tls.privateKey = .privateKey(identity.privateKey)
                }
                tlsContext = try NIOSSLContext(configuration: tls)
            } catch {
                throw APNsClientError(kind: .connectionFailed, message: "cannot set up TLS: \(error)")
            }
        }
        if case .token(let key, let refresh) = configuration.credentials {
            token = SharedProviderToken(signer: ProviderTokenSigner(key: key, policy: refresh, now: configuration.now))
        } else {
            token = nil
        }
        metrics = ClientMetrics(prefix: configuration.metricsPrefix, factory: configuration.metricsFactory ?? MetricsSystem.factory)
        limiter = InFlightLimiter(limit: configuration.maximumRequestsInFlight)
        linter = configuration.lintsBeforeSending ? Linter() : nil
        pool = ConnectionPool(
            endpoint: .init(host: configuration.server.host, port: configuration.effectivePort), configuration: configuration,
            group: eventLoopGroup, sslContext: tlsContext, token: token, metrics: metrics)
        var channelConfiguration = configuration
        channelConfiguration.maximumConnections = 1
        channelPool = ConnectionPool(
            endpoint: Self.channelEndpoint(configuration), configuration: channelConfiguration,
            group: eventLoopGroup, sslContext: tlsContext, token: token, metrics: metrics)
    }

    private static func channelEndpoint(_ configuration: APNsClientConfiguration) -> ConnectionPool.Endpoint {
        if let host = configuration.channelManagementHost, let port = configuration.channelManagementPort {
            return .init(host: host, port: port)
        }
        switch configuration.server {
        case .production, .sandbox:
            let environment = configuration.server.environment
            return .init(
                host: configuration.channelManagementHost ?? environment.channelManagementHost,
                port: configuration.channelManagementPort ?? environment.channelManagementPort)
        case .custom(let host, _, let environment):
            return .init(
                host: configuration.channelManagementHost ?? host,
                port: configuration.channelManagementPort ?? environment.channelManagementPort)
        }
    }

    // MARK: Sending

    /// Sends a payload to one device: the three-line way to send an alert.
    ///
    /// - Returns: the accepted response, with its `apns-id`.
    /// - Throws: ``APNsClientError``: rejected by APNs (with its reason and advice), refused
    ///   before sending, or no answer within the deadline.
    @discardableResult
    public func send(
        _ payload: Payload, to token: DeviceToken, topic: String, pushType: PushType = .alert,
        priority: PushPriority? = nil, collapseID: CollapseID? = nil, expiration: Expiration? = nil, apnsID: APNsID? = nil
    ) async throws(APNsClientError) -> APNsResponse {
        let request: APNsRequest
        do {
            request = try APNsRequest(
                payload: payload, to: token, topic: topic, pushType: pushType, priority: priority,
                collapseID: collapseID, expiration: expiration, apnsID: apnsID)
        } catch {
            throw APNsClientError(kind: .refusedByLint, message: "the payload cannot be encoded: \(error)")
        }
        return try await send(request)
    }

    /// Sends one request (a device push or a broadcast); `timeout` replaces
    /// ``APNsClientConfiguration/requestTimeout`` for this request.
    @discardableResult
    public func send(_ request: APNsRequest, timeout: Duration? = nil) async throws(APNsClientError) -> APNsResponse {
        try await outcome(of: request, timeout: timeout).get()
    }

    /// Sends one request and returns its outcome as a `Result`; `timeout` replaces
    /// ``APNsClientConfiguration/requestTimeout`` for this request.
    public func outcome(of given: APNsRequest, timeout: Duration? = nil) async -> Result<APNsResponse, APNsClientError> {
        let request: APNsRequest, apnsID: String?
        switch prepare(given) {
        case .success(let prepared): (request, apnsID) = prepared
        case .failure(let error): return .failure(error)
        }
        return await perform(RequestHead(headers: request.headers), body: request.buffer, on: pool, apnsID: apnsID, token: request.headers.deviceToken, timeout: timeout)
            .map { Self.response($0, apnsID: apnsID) }
    }

    /// A request as it is sent (with an `apns-id` of its own when a device push has none), and
    /// that id; or why it is not sent (too large, or refused by the linter).
    private func prepare(_ request: APNsRequest) -> Result<(APNsRequest, String?), APNsClientError> {
        var request = request
        if request.headers.apnsID == nil, case .device = request.headers.target {
            request.headers.apnsID = .fastRandom()
        }
        let apnsID = request.headers.apnsID?.uuidString
        if request.buffer.readableBytes > request.payloadLimit {
            return .failure(APNsClientError(
                kind: .payloadTooLarge, reason: .payloadTooLarge, apnsID: apnsID,
                message: "the payload is \(request.buffer.readableBytes) bytes; the limit for \(request.headers.pushType?.rawValue ?? "this") push is \(request.payloadLimit)"))
        }
        if let linter {
            let report = request.buffer.withUnsafeReadableBytes { bytes in
                linter.lint(bytes, context: LintContext(request: request.headers))
            }
            if let reason = report.apnsRejection {
                let errors = report.diagnostics.filter { $0.severity == .error }
                return .failure(APNsClientError(
                    kind: .refusedByLint, reason: reason, apnsID: apnsID, diagnostics: report.diagnostics,
                    message: "not sent: APNs would answer \(reason.statusAndReason): \(errors.first.map { "\($0.message)" } ?? "")"))
            }
        }
        return .success((request, apnsID))
    }

    /// The response for an accepted request's answer after `attempts`.
    private static func response(_ accepted: (Answer, Int), apnsID: String?) -> APNsResponse {
        let (answer, attempts) = accepted
        return APNsResponse(
            apnsID: answer.apnsID ?? apnsID ?? "", uniqueID: answer.uniqueID, requestID: answer.requestID,
            channelID: answer.channelID, status: answer.status, body: answer.body, attempts: attempts)
    }

    /// Sends one request and calls `completion` with its outcome, once: on a connection's event
    /// loop when the first attempt ends it (nearly always), else from a task that goes on with
    /// the attempts the retry policy allows. For a caller with many requests in flight for
    /// whom a task per request costs more than the request (the gateway's dispatcher);
    /// `completion` must not block.
    package func send(_ given: APNsRequest, timeout: Duration? = nil, completion: @escaping @Sendable (Result<APNsResponse, APNsClientError>) -> Void) {
        let request: APNsRequest, apnsID: String?
        switch prepare(given) {
        case .success(let prepared): (request, apnsID) = prepared
        case .failure(let error): return completion(.failure(error))
        }
        let started = NIODeadline.now()
        let limit = timeout ?? configuration.requestTimeout
        let deadline = started + .nanoseconds(limit.nanoseconds)
        // Without a place among those in flight and an open connection now, the request takes
        // the path that waits for them. That task holds a place in the limiter while it sends, so
        // shutdown() waits for it as for any request.
        guard !closed.isClosed, limiter.acquireNow() else { return sendWaiting(request, apnsID: apnsID, timeout: timeout, completion: completion) }
        guard let connection = pool.leaseNow() else {
            limiter.release()
            return sendWaiting(request, apnsID: apnsID, timeout: timeout, completion: completion)
        }
        metrics.requestStarted()
        metrics.sent.increment()
        let head = RequestHead(headers: request.headers), body = request.buffer, token = request.headers.deviceToken
        connection.submit(head, body: body, deadline: deadline) { outcome in
            var attempts = Attempts(made: 1)
            let step = self.nextStep(after: outcome, &attempts, apnsID: apnsID, limit: limit)
            if case .finished(let result) = step {
                return self.finish(result, started: started, token: token, apnsID: apnsID, completion: completion)
            }
            Task {
                let result = await self.attempts(head, body: body, on: self.pool, apnsID: apnsID, deadline: deadline, limit: limit, after: (step, attempts))
                self.finish(result, started: started, token: token, apnsID: apnsID, completion: completion)
            }
        }
    }

    /// ``send(_:timeout:completion:)`` through ``outcome(of:timeout:)``, which waits for a place and
    /// a connection.
    private func sendWaiting(
        _ request: APNsRequest, apnsID: String?, timeout: Duration?, completion: @escaping @Sendable (Result<APNsResponse, APNsClientError>) -> Void
    ) {
        Task {
            let result = await perform(RequestHead(headers: request.headers), body: request.buffer, on: pool, apnsID: apnsID, token: request.headers.deviceToken, timeout: timeout)
            completion(result.map { Self.response($0, apnsID: apnsID) })
        }
    }

    /// The end of a request sent by ``send(_:timeout:completion:)``: its place is free, it is
    /// counted, and its caller is told.
    private func finish(
        _ result: Result<(Answer, Int), APNsClientError>, started: NIODeadline, token: DeviceToken?, apnsID: String?,
        completion: @Sendable (Result<APNsResponse, APNsClientError>) -> Void
    ) {
        metrics.requestEnded()
        limiter.release()
        record(result, started: started, token: token)
        completion(result.map { Self.response($0, apnsID: apnsID) })
    }

    /// Sends one request to many devices; the results come as they arrive, one per token.
    ///
    /// At most ``APNsClientConfiguration/maximumRequestsInFlight`` are sent ahead of the
    /// results read, so memory stays bounded however many tokens there are.
    public func send(_ request: APNsRequest, to tokens: [DeviceToken]) -> APNsBatch {
        APNsBatch(client: self, request: request, tokens: tokens, window: configuration.maximumRequestsInFlight)
    }

    /// Opens the pool's connections now rather than on the first requests.
    public func prewarm() async throws(APNsClientError) {
        do {
            try await pool.prewarm(configuration.maximumConnections)
        } catch {
            let failure = ConnectionFailure.classify(error, endpoint: "\(pool.endpoint.host):\(pool.endpoint.port)")
            throw APNsClientError(kind: .connectionFailed, connectionFailure: failure, message: failure.description)
        }
    }

    /// Stops taking requests, lets those in flight finish (each within its deadline), and closes
    /// the connections.
    public func shutdown() async {
        closed.close()
        await limiter.waitUntilIdle()
        await pool.shutdown()
        await channelPool.shutdown()
    }

    /// Connections open now (to the provider API).
    public var openConnectionCount: Int { pool.openConnectionCount }

    /// How the connections to the provider API stand now: what a dashboard shows as connected,
    /// refusing (backing off) or idle.
    public var connectionStatus: ConnectionStatus { pool.status }

    /// The state of a client's connections to its endpoint at one moment.
    public struct ConnectionStatus: Sendable, Hashable {
        /// Connections open.
        public var open: Int
        /// Failed attempts to connect since the last one that succeeded (0 while it connects).
        public var failedAttempts: Int
        /// Why the last attempt failed, while attempts fail.
        public var lastFailure: ConnectionFailure?
        /// How long until the next attempt may begin, while attempts fail (one at a time, backing
        /// off to 30 seconds).
        public var nextAttemptIn: Duration?

        /// A status: `open` connections, `failedAttempts` since the last success, the last
        /// failure, the wait before the next attempt.
        public init(open: Int, failedAttempts: Int, lastFailure: ConnectionFailure?, nextAttemptIn: Duration?) {
            self.open = open
            self.failedAttempts = failedAttempts
            self.lastFailure = lastFailure
            self.nextAttemptIn = nextAttemptIn
        }
    }

    // MARK: Attempts and retries

    /// Sends until an answer that ends the request, a failure that may not be retried, the
    /// attempts run out or the deadline passes.
    func perform(
        _ head: RequestHead, body: ByteBuffer, on pool: ConnectionPool, apnsID: String?, token: DeviceToken?,
        timeout: Duration? = nil
    ) async -> Result<(Answer, Int), APNsClientError> {
        if closed.isClosed {
            return .failure(APNsClientError(kind: .shutDown, apnsID: apnsID, message: "the client is shut down"))
        }
        // The deadline counts from the call: the wait for a place among those in flight too.
        let started = NIODeadline.now()
        let limit = timeout ?? configuration.requestTimeout
        let deadline = started + .nanoseconds(limit.nanoseconds)
        guard await limiter.acquire(before: deadline) else {
            return .failure(APNsClientError(
                kind: .deadlineExceeded, apnsID: apnsID, attempts: 0,
                message: "not sent: no place among the \(configuration.maximumRequestsInFlight) requests in flight came free within \(limit)"))
        }
        metrics.requestStarted()
        defer {
            metrics.requestEnded()
            limiter.release()
        }
        metrics.sent.increment()
        let result = await attempts(head, body: body, on: pool, apnsID: apnsID, deadline: deadline, limit: limit)
        record(result, started: started, token: token)
        return result
    }

    /// Where a request stands between its attempts: what the retry policy reads.
    struct Attempts {
        /// Attempts made (those the server did not process are not counted).
        var made = 0
        /// Attempts the server did not process.
        var unsent = 0
        /// Whether a refused provider token was replaced once already.
        var refreshedToken = false
        var lastFailure = AttemptFailure.notSent("no attempt was made")
    }

    /// What the retry policy makes of an attempt's outcome.
    enum NextStep {
        /// The request's outcome.
        case finished(Result<(Answer, Int), APNsClientError>)
        /// Another attempt, now.
        case again
        /// Another attempt after the backoff for `attempt`; `otherwise` when that would pass
        /// the deadline.
        case backOff(attempt: Int, otherwise: Result<(Answer, Int), APNsClientError>)
    }

    /// Attempts until an outcome: from the first, or after one made already (`after`: the
    /// step its outcome gave, and the attempts so far).
    func attempts(
        _ head: RequestHead, body: ByteBuffer, on pool: ConnectionPool, apnsID: String?, deadline: NIODeadline, limit: Duration,
        after first: (step: NextStep, attempts: Attempts)? = nil
    ) async -> Result<(Answer, Int), APNsClientError> {
        var attempts = first?.attempts ?? Attempts()
        var given = first?.step
        while true {
            let step: NextStep
            if let next = given {
                step = next
                given = nil
            } else {
                if NIODeadline.now() >= deadline {
                    return .failure(deadlineError(apnsID: apnsID, attempts: attempts.made, last: attempts.lastFailure, limit: limit))
                }
                let outcome: AttemptOutcome
                do {
                    let connection = try await pool.lease(deadline: deadline)
                    attempts.made += 1
                    outcome = await connection.perform(head, body: body, deadline: deadline)
                } catch {
                    attempts.made += 1
                    outcome = .failed(error)
                }
                step = nextStep(after: outcome, &attempts, apnsID: apnsID, limit: limit)
            }
            switch step {
            case .finished(let result):
                return result
            case .again:
                metrics.retries.increment()
            case .backOff(let attempt, let otherwise):
                guard await backoff(attempt: attempt, deadline: deadline) else { return otherwise }
                metrics.retries.increment()
            }
        }
    }

    /// The retry policy, in one place: what an attempt's outcome makes of the request.
    func nextStep(after outcome: AttemptOutcome, _ attempts: inout Attempts, apnsID: String?, limit: Duration) -> NextStep {
        let policy = configuration.retry
        switch outcome {
        case .answered(let answer, let usedToken):
            if (200..<300).contains(answer.status) { return .finished(.success((answer, attempts.made))) }
            let error = rejection(answer, apnsID: apnsID, attempts: attempts.made)
            if error.reason == .expiredProviderToken, !attempts.refreshedToken, let shared = self.token, let usedToken {
                // Once per request: a new token (shared by every request that failed with the
                // same one), never the refused one again, then another attempt.
                attempts.refreshedToken = true
                shared.reject(usedToken)
                return .again
            }
            if [429, 500, 503].contains(answer.status), attempts.made < policy.maximumAttempts {
                attempts.lastFailure = .notSent(error.message)
                return .backOff(attempt: attempts.made, otherwise: .failure(error))
            }
            return .finished(.failure(error))
        case .failed(let failure):
            attempts.lastFailure = failure
            switch failure {
            case .deadline:
                return .finished(.failure(deadlineError(apnsID: apnsID, attempts: attempts.made, last: failure, limit: limit)))
            case .notSent:
                // Not processed by the server (above a GOAWAY's last-stream-id, refused): always
                // safe to send again, and not counted as an attempt. The first few go again at
                // once, on another connection; then after a growing pause, so a server going
                // away again and again is not stormed, until the deadline.
                attempts.unsent += 1
                attempts.made -= 1
                if attempts.unsent <= Self.immediateResends { return .again }
                return .backOff(attempt: attempts.unsent - Self.immediateResends, otherwise: connectionError(failure, attempts: attempts.made, apnsID: apnsID))
            case .connectionLost, .reset, .connectFailed:
                if attempts.made < policy.maximumAttempts {
                    return .backOff(attempt: attempts.made, otherwise: connectionError(failure, attempts: attempts.made, apnsID: apnsID))
                }
                return .finished(connectionError(failure, attempts: attempts.made, apnsID: apnsID))
            }
        }
    }

    /// The outcome of a request whose last attempt got no answer.
    private func connectionError(_ failure: AttemptFailure, attempts: Int, apnsID: String?) -> Result<(Answer, Int), APNsClientError> {
        let connection: ConnectionFailure? = if case .connectFailed(let why) = failure { why } else { nil }
        let tries = "\(max(attempts, 1)) attempt\(attempts == 1 ? "" : "s")"
        return .failure(APNsClientError(
            kind: .connectionFailed, apnsID: apnsID, attempts: max(attempts, 1),
            connectionFailure: connection, message: connection.map { "\($0) (\(tries))" } ?? "no answer after \(tries): \(failure)"))
    }

    /// How many times a request the server did not process is sent again at once, before the
    /// next resends wait a backoff.
    static let immediateResends = 4

    /// Waits the backoff before attempt `attempt + 1`; false when it would pass the deadline.
    private func backoff(attempt: Int, deadline: NIODeadline) async -> Bool {
        let policy = configuration.retry
        let base = policy.initialBackoff.nanoseconds
        let cap = policy.maximumBackoff.nanoseconds
        let exponential = base.multipliedReportingOverflow(by: 1 << min(attempt - 1, 30))
        let ceiling = min(exponential.overflow ? cap : exponential.partialValue, cap)
        // Full jitter: anywhere between none and the exponential ceiling.
        let wait = Int64.random(in: 0...max(ceiling, 1))
        if NIODeadline.now() + .nanoseconds(wait) >= deadline { return false }
        try? await Task.sleep(nanoseconds: UInt64(wait))
        return true
    }

    private func deadlineError(apnsID: String?, attempts: Int, last: AttemptFailure, limit: Duration) -> APNsClientError {
        let connection: ConnectionFailure? = if case .connectFailed(let why) = last { why } else { nil }
        return APNsClientError(
            kind: .deadlineExceeded, apnsID: apnsID, attempts: attempts, connectionFailure: connection,
            message: "no answer within \(limit) (\(attempts) attempt\(attempts == 1 ? "" : "s"); last: \(last))")
    }

    /// The error for an answer with an error status: APNs' `{"reason":…,"timestamp":…}`, or the
    /// status alone when the body is not that.
    private func rejection(_ answer: Answer, apnsID: String?, attempts: Int) -> APNsClientError {
        var reason: APNsReason?
        var timestamp: Date?
        if let document = try? JSONDocument(parsing: answer.body), document.root.kind == .object {
            reason = document.root["reason"]?.stringValue.map(APNsReason.init(rawValue:))
            if let milliseconds = document.root["timestamp"]?.int64Value {
                timestamp = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            }
        }
        var message = "APNs answered \(answer.status) \(reason?.rawValue ?? "without a reason")"
        if let reason, let meaning = reason.info?.meaning { message += ": \(meaning)" }
        if let timestamp { message += " Last valid: \(timestamp)." }
        return APNsClientError(
            kind: .rejected, reason: reason, status: answer.status, unregisteredAt: timestamp, apnsID: answer.apnsID ?? apnsID,
            body: reason == nil ? answer.body : nil, attempts: attempts, message: message)
    }

    private func record(_ result: Result<(Answer, Int), APNsClientError>, started: NIODeadline, token: DeviceToken?) {
        metrics.latency.recordNanoseconds((NIODeadline.now() - started).nanoseconds)
        let logger = configuration.logger
        switch result {
        case .success:
            metrics.accepted.increment()
        case .failure(let error):
            if let reason = error.reason, error.kind == .rejected { metrics.rejected(reason) } else { metrics.failed.increment() }
            if logger.logLevel <= .debug {
                logger.debug("request failed", metadata: [
                    "token": "\(token.map { redact($0) } ?? "-")", "error": "\(error.message)",
                ])
            }
        }
    }

    /// A device token as logs show it: the first 8 hex digits unless full tokens are asked for.
    func redact(_ token: DeviceToken) -> String {
        configuration.logsFullDeviceTokens ? token.hex : String(token.hex.prefix(8)) + "…"
    }

    // MARK: Broadcast and channels

    /// Sends a broadcast push to a channel's subscribers (`POST /4/broadcasts/apps/<bundle-id>`).
    @discardableResult
    public func broadcast(
        _ payload: Payload, bundleID: String, channelID: String, priority: PushPriority? = nil, expiration: Expiration? = nil
    ) async throws(APNsClientError) -> APNsResponse {
        let request: APNsRequest
        do {
            request = try APNsRequest(
                headers: APNsRequestHeaders(
                    target: .broadcast(bundleID: bundleID), pushType: .liveactivity, priority: priority,
                    expiration: expiration, channelID: channelID),
                payload: payload)
        } catch {
            throw APNsClientError(kind: .refusedByLint, message: "the payload cannot be encoded: \(error)")
        }
        return try await send(request)
    }

    /// A broadcast channel's settings.
    public struct Channel: Sendable, Hashable {
        /// The channel's identifier (base64).
        public var id: String
        /// Whether APNs stores the newest message for devices that are offline (policy 1).
        public var storesMessages: Bool
    }

    /// Creates a broadcast channel for `bundleID` and returns its identifier.
    public func createChannel(bundleID: String, storesMessages: Bool = false) async throws(APNsClientError) -> String {
        let body = "{\"message-storage-policy\":\(storesMessages ? 1 : 0),\"push-type\":\"LiveActivity\"}"
        let response = try await manageChannels(method: .post, path: APNsPath.channels(bundleID: bundleID), channelID: nil, body: Array(body.utf8))
        guard let id = response.channelID else {
            throw APNsClientError(kind: .rejected, status: response.status, message: "the server created a channel but sent no apns-channel-id")
        }
        return id
    }

    /// Reads a channel's settings.
    public func channel(_ id: String, bundleID: String) async throws(APNsClientError) -> Channel {
        let response = try await manageChannels(method: .get, path: APNsPath.channels(bundleID: bundleID), channelID: id, body: [])
        let policy = (try? JSONDocument(parsing: response.body))?.root["message-storage-policy"]?.int64Value ?? 0
        return Channel(id: id, storesMessages: policy == 1)
    }

    /// Deletes a channel.
    public func deleteChannel(_ id: String, bundleID: String) async throws(APNsClientError) {
        _ = try await manageChannels(method: .delete, path: APNsPath.channels(bundleID: bundleID), channelID: id, body: [])
    }

    /// The identifiers of every channel of `bundleID`.
    public func channelIDs(bundleID: String) async throws(APNsClientError) -> [String] {
        let response = try await manageChannels(method: .get, path: APNsPath.allChannels(bundleID: bundleID), channelID: nil, body: [])
        guard let list = (try? JSONDocument(parsing: response.body))?.root["channels"], list.kind == .array else { return [] }
        return list.elements.compactMap(\.stringValue)
    }

    private func manageChannels(method: RequestHead.Method, path: String, channelID: String?, body: [UInt8]) async throws(APNsClientError) -> APNsResponse {
        let head = RequestHead(method: method, headers: APNsRequestHeaders(channelID: channelID), path: path)
        let result = await perform(head, body: ByteBuffer(bytes: body), on: channelPool, apnsID: nil, token: nil)
        switch result {
        case .success(let (answer, attempts)):
            return APNsResponse(
                apnsID: answer.requestID ?? "", uniqueID: nil, requestID: answer.requestID, channelID: answer.channelID ?? channelID,
                status: answer.status, body: answer.body, attempts: attempts)
        case .failure(let error):
            throw error
        }
    }
}

/// Set once, when the client shuts down.
final class ClosedFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func close() { flag.store(true, ordering: .relaxed) }
    var isClosed: Bool { flag.load(ordering: .relaxed) }
}

extension APNsClient {
    /// Requests holding a place in flight now (for tests and metrics).
    var requestsInFlight: Int { limiter.inFlight }
}
