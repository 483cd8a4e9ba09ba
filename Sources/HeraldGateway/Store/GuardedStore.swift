import HeraldProtocol
import Logging
import Synchronization

/// How a database call failed, as an operator reads it (`herald_gateway_store_errors_total{kind}`).
enum StoreFailureKind: String, Sendable, CaseIterable {
    /// The server refused the connection (not running, wrong port).
    case refused
    /// No answer within the call's deadline.
    case timeout
    /// The server refused the credentials.
    case authentication
    /// A connection broke or could not be made (closed, reset, shutting down, TLS).
    case connection
    /// The database refused a write for lack of space (SQLite `SQLITE_FULL`, PostgreSQL
    /// `53100 disk_full`): it answers, but takes no writes until it has room.
    case full
    /// The statement failed; the database itself answered.
    case query

    /// Whether the database cannot be reached (every kind but `full` and `query`).
    var isOutage: Bool { self != .query && self != .full }
}

/// The database cannot be reached now: the call was not made, or did not finish. The caller
/// tries again later (the dispatcher) or answers 503 with `Retry-After` (the API); nothing is
/// taken as absent or done.
struct StoreUnavailable: Error, CustomStringConvertible {
    var kind: StoreFailureKind
    var cause: String
    var description: String {
        kind == .full ? "the database takes no writes: its disk is full (\(cause))" : "the database is unreachable (\(kind.rawValue)): \(cause)"
    }
}

/// A call the database refused while it was reachable (a constraint, a deadlock, a bad value):
/// the store's own description of the cause, so the log says what happened (PostgresNIO's
/// errors print a placeholder).
struct StoreCallFailed: Error, CustomStringConvertible {
    var kind: StoreFailureKind
    var description: String
}

/// Every store call the gateway makes goes through here: each has a deadline, its failures are
/// counted by kind, and a failure that means the database is unreachable marks it down, which
/// the log says once (with the cause) and once again when it is back (with the outage's
/// length). While it is down, calls fail at once (no caller waits for a dead server) and a
/// probe looks for its return every second.
final class GuardedStore: GatewayStore {
    let base: any GatewayStore
    let health: DatabaseHealth
    /// The deadline of one call (a submission gets more per token).
    let timeout: Duration

    init(_ base: any GatewayStore, timeout: Duration, metrics: GatewayMetrics, logger: Logger) {
        self.base = base
        self.timeout = timeout
        health = DatabaseHealth(store: base, metrics: metrics, logger: logger)
    }

    func call<T: Sendable>(
        _ what: String, timeout: Duration? = nil, _ body: @escaping @Sendable (any GatewayStore) async throws -> T
    ) async throws -> T {
        if let down = health.unavailable { throw down }
        let base = self.base
        let health = self.health
        let id = health.nextCallID()
        defer { health.finished(id) }
        do {
            let value = try await withDeadline(timeout ?? self.timeout, "the database call \(what)", abort: { health.started(id, abort: $0) }) {
                try await body(base)
            }
            health.answered()
            return value
        } catch {
            throw health.failed(error, in: what)
        }
    }

    func migrate() async throws { try await call("migrate", timeout: .seconds(120)) { try await $0.migrate() } }

    func insertApp(_ app: StoredApp) async throws -> Bool { try await call("insertApp") { try await $0.insertApp(app) } }
    func app(id: String) async throws -> StoredApp? { try await call("app") { try await $0.app(id: id) } }
    func apps() async throws -> [StoredApp] { try await call("apps") { try await $0.apps() } }
    func updateApp(id: String, definition: String, resume: Bool, now: Int64) async throws -> StoredApp? {
        try await call("updateApp") { try await $0.updateApp(id: id, definition: definition, resume: resume, now: now) }
    }
    func pauseApp(id: String, version: Int64, reason: String, advice: String, webhook: String?, now: Int64) async throws -> Bool {
        try await call("pauseApp") { try await $0.pauseApp(id: id, version: version, reason: reason, advice: advice, webhook: webhook, now: now) }
    }
    func resumeApp(id: String, now: Int64) async throws -> Bool { try await call("resumeApp") { try await $0.resumeApp(id: id, now: now) } }
    func deleteApp(id: String) async throws -> AppDeletion? { try await call("deleteApp", timeout: timeout * 6) { try await $0.deleteApp(id: id) } }
    func insertKey(_ key: StoredKey) async throws { try await call("insertKey") { try await $0.insertKey(key) } }
    func key(hash: String) async throws -> StoredKey? { try await call("key") { try await $0.key(hash: hash) } }
    func keys() async throws -> [StoredKey] { try await call("keys") { try await $0.keys() } }
    func deleteKey(id: String) async throws -> Bool { try await call("deleteKey") { try await $0.deleteKey(id: id) } }

    func upsertDevices(app: String, tokens: [DeviceToken], registration: DeviceRegistration, now: Int64) async throws {
        try await call("upsertDevices", timeout: timeout + .milliseconds(tokens.count / 20)) {
            try await $0.upsertDevices(app: app, tokens: tokens, registration: registration, now: now)
        }
    }
    func devices(app: String, filter: DeviceFilter, after: String?, limit: Int) async throws -> [StoredDevice] {
        try await call("devices") { try await $0.devices(app: app, filter: filter, after: after, limit: limit) }
    }
    func deleteDevice(app: String, token: DeviceToken) async throws -> Bool {
        try await call("deleteDevice") { try await $0.deleteDevice(app: app, token: token) }
    }
    func eraseUser(app: String, user: String, now: Int64) async throws -> UserErasure? {
        try await call("eraseUser", timeout: timeout * 3) { try await $0.eraseUser(app: app, user: user, now: now) }
    }
    func audienceSize(app: String, audience: JobAudience) async throws -> Int {
        try await call("audienceSize", timeout: timeout * 3) { try await $0.audienceSize(app: app, audience: audience) }
    }

    /// A million tokens take seconds to store: the deadline grows by a second per 20,000 (an
    /// audience's size is given in `recipients`).
    func submit(_ job: NewJob, recipients: Int) async throws -> SubmitResult {
        try await call("submit", timeout: timeout + .milliseconds(recipients / 20)) { try await $0.submit(job) }
    }
    func submit(_ job: NewJob) async throws -> SubmitResult {
        let count = if case .tokens(let tokens) = job.audience { tokens.count } else { 0 }
        return try await submit(job, recipients: count)
    }
    func cancel(app: String, job: String, webhook: (@Sendable (StoredDelivery) -> String)?, now: Int64) async throws -> JobSummary? {
        try await call("cancel", timeout: timeout * 3) { try await $0.cancel(app: app, job: job, webhook: webhook, now: now) }
    }
    func job(app: String, id: String) async throws -> JobSummary? { try await call("job") { try await $0.job(app: app, id: id) } }
    func jobs(app: String, status: JobStatus?, now: Int64, from: Int64?, until: Int64?, before: JobCursor?, limit: Int) async throws -> [JobSummary] {
        try await call("jobs") { try await $0.jobs(app: app, status: status, now: now, from: from, until: until, before: before, limit: limit) }
    }
    func deliveries(job: String, state: DeliveryState?, after: Int64?, limit: Int) async throws -> [StoredDelivery] {
        try await call("deliveries") { try await $0.deliveries(job: job, state: state, after: after, limit: limit) }
    }
    func jobContent(id: String) async throws -> JobContent? { try await call("jobContent") { try await $0.jobContent(id: id) } }

    func claim(worker: String, limit: Int, now: Int64, leaseUntil: Int64, takeOver: Bool) async throws -> [ClaimedDelivery] {
        try await call("claim") { try await $0.claim(worker: worker, limit: limit, now: now, leaseUntil: leaseUntil, takeOver: takeOver) }
    }
    func record(_ outcomes: [DeliveryOutcome], worker: String, now: Int64) async throws {
        try await call("record") { try await $0.record(outcomes, worker: worker, now: now) }
    }
    func extendLeases(worker: String, ids: [Int64], until: Int64, now: Int64) async throws -> Set<Int64> {
        try await call("extendLeases") { try await $0.extendLeases(worker: worker, ids: ids, until: until, now: now) }
    }
    func existingDeliveries(ids: [Int64]) async throws -> Set<Int64> {
        try await call("existingDeliveries") { try await $0.existingDeliveries(ids: ids) }
    }
    func release(worker: String, ids: [Int64], reason: String?, now: Int64) async throws {
        try await call("release") { try await $0.release(worker: worker, ids: ids, reason: reason, now: now) }
    }
    func queueDepth(now: Int64) async throws -> (waiting: Int, due: Int) { try await call("queueDepth") { try await $0.queueDepth(now: now) } }

    func claimWebhooks(worker: String, limit: Int, now: Int64, leaseUntil: Int64) async throws -> [WebhookEvent] {
        try await call("claimWebhooks") { try await $0.claimWebhooks(worker: worker, limit: limit, now: now, leaseUntil: leaseUntil) }
    }
    func finishWebhook(id: Int64, sent: Bool, retryAt: Int64?, error: String?, attempt: WebhookAttempt?, now: Int64) async throws {
        try await call("finishWebhook") { try await $0.finishWebhook(id: id, sent: sent, retryAt: retryAt, error: error, attempt: attempt, now: now) }
    }
    func webhookEvents(app: String, before: Int64?, limit: Int) async throws -> [StoredWebhookEvent] {
        try await call("webhookEvents") { try await $0.webhookEvents(app: app, before: before, limit: limit) }
    }
    func prune(before: Int64, batch: Int) async throws -> Pruned { try await call("prune") { try await $0.prune(before: before, batch: batch) } }

    /// Answers within two seconds whether the database answers, probing it even while it is
    /// marked down (for `/readyz`).
    func ping() async throws {
        let base = self.base
        do {
            try await withDeadline(.seconds(2), "the database's ping") { try await base.ping() }
            health.answered()
        } catch {
            throw health.failed(error, in: "ping")
        }
    }

    func probeConnection(within timeout: Duration) async throws { try await base.probeConnection(within: timeout) }
    func probeWrite() async throws { try await base.probeWrite() }
    var canBeUnreachable: Bool { base.canBeUnreachable }
    func reconnect() async { await base.reconnect() }
    func classify(_ error: any Error) -> StoreFailureKind { base.classify(error) }
    func describe(_ error: any Error) -> String { base.describe(error) }

    func close() async {
        health.stop()
        let base = self.base
        _ = try? await withDeadline(.seconds(5), "closing the database") { await base.close() }
    }
}

/// Whether the database answers, as the gateway last saw it.
final class DatabaseHealth: Sendable {
    private struct State {
        var down: (failure: StoreUnavailable, since: ContinuousClock.Instant)?
        /// Writes are refused for lack of space since then (reads may still work).
        var full: (failure: StoreUnavailable, since: ContinuousClock.Instant)?
        var fullProbe: Task<Void, Never>?
        var lastRecovery: ContinuousClock.Instant?
        var probe: Task<Void, Never>?
        var watchdog: Task<Void, Never>?
        var checking = false
        var stopped = false
        var listeners: [@Sendable () -> Void] = []
        var nextCallID = 0
        /// Calls under way: when each started, and how to end its wait.
        var calls: [Int: (started: ContinuousClock.Instant, abort: (@Sendable (any Error) -> Void)?)] = [:]
    }

    private let store: any GatewayStore
    private let metrics: GatewayMetrics
    private let logger: Logger
    private let state = Mutex(State())

    init(store: any GatewayStore, metrics: GatewayMetrics, logger: Logger) {
        self.store = store
        self.metrics = metrics
        self.logger = logger
        metrics.databaseUp.record(1)
        if store.canBeUnreachable {
            let watchdog = Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    guard let self else { return }
                    await self.checkSlowCalls()
                }
            }
            state.withLock { $0.watchdog = watchdog }
        }
    }

    /// How long a call may wait before the server is checked with a connection of its own.
    static let suspicion: Duration = .seconds(2)
    /// The seconds the second connection of a check may take, when the first was not made.
    static let secondProbe: Int64 = 6

    func nextCallID() -> Int {
        state.withLock { state in
            state.nextCallID &+= 1
            state.calls[state.nextCallID] = (.now, nil)
            return state.nextCallID
        }
    }

    func started(_ id: Int, abort: @escaping @Sendable (any Error) -> Void) {
        state.withLock { if $0.calls[id] != nil { $0.calls[id]?.abort = abort } }
    }

    func finished(_ id: Int) {
        state.withLock { _ = $0.calls.removeValue(forKey: id) }
    }

    /// A server that stops answering often shows no error: its connections are gone and the
    /// pool waits to make new ones. Every second, if a call has waited two seconds, a
    /// connection of its own tells whether the server is there (refused at once if not); the
    /// outage is then known in seconds, not at the calls' deadline, and the waiting calls end.
    private func checkSlowCalls() async {
        let check = state.withLock { state -> Bool in
            guard state.down == nil, !state.checking, !state.stopped,
                  let oldest = state.calls.values.map(\.started).min(), ContinuousClock.now - oldest >= Self.suspicion else { return false }
            state.checking = true
            return true
        }
        guard check else { return }
        let store = self.store
        do {
            try await withDeadline(.seconds(3), "a connection to the database") { try await store.probeConnection(within: .seconds(2)) }
        } catch {
            // A refused connection fails again at once. A connection not made in time may be a
            // loaded host's (a new session's authentication is work for both sides): a second,
            // longer try before an outage stops sending.
            do {
                try await withDeadline(.seconds(Self.secondProbe + 1), "a connection to the database") {
                    try await store.probeConnection(within: .seconds(Self.secondProbe))
                }
            } catch {
                _ = failed(error, in: "a check of a slow call")
            }
        }
        state.withLock { $0.checking = false }
    }

    /// Why calls fail now, when the database is down.
    var unavailable: StoreUnavailable? { state.withLock { $0.down?.failure } }

    /// Why writes fail now, when the database's disk is full.
    var full: StoreUnavailable? { state.withLock { $0.full?.failure } }

    /// The write probe succeeded: the database has room (said once, with how long it had none).
    func wrote() {
        let (since, listeners) = state.withLock { state -> (ContinuousClock.Instant?, [@Sendable () -> Void]) in
            guard let full = state.full else { return (nil, []) }
            state.full = nil
            state.fullProbe?.cancel()
            state.fullProbe = nil
            return (full.since, state.down == nil ? state.listeners : [])
        }
        guard let since else { return }
        if unavailable == nil { metrics.databaseUp.record(1) }
        logger.notice("the database takes writes again", metadata: ["full for": "\((ContinuousClock.now - since).secondsText)"])
        for listener in listeners { Task { listener() } }
    }

    /// How long ago the database came back from its last outage (`nil`: never down).
    var sinceRecovery: Duration? { state.withLock { $0.lastRecovery.map { ContinuousClock.now - $0 } } }

    /// Called (on a task of its own) each time the database comes back.
    func onRecovery(_ listener: @escaping @Sendable () -> Void) { state.withLock { $0.listeners.append(listener) } }

    /// A call succeeded: the database answers.
    func answered() {
        let (outage, listeners) = state.withLock { state -> (Duration?, [@Sendable () -> Void]) in
            guard let down = state.down else { return (nil, []) }
            state.down = nil
            state.probe?.cancel()
            state.probe = nil
            let now = ContinuousClock.now
            state.lastRecovery = now
            return (now - down.since, state.listeners)
        }
        guard let outage else { return }
        metrics.databaseUp.record(1)
        logger.notice("the database answers again", metadata: ["unreachable for": "\(outage.secondsText)"])
        for listener in listeners { Task { listener() } }
    }

    /// A call failed with `error`: counted by kind; an outage marks the database down (said
    /// once) and starts the probe. Returns the error the caller sees.
    func failed(_ error: any Error, in what: String) -> any Error {
        if error is CancellationError { return error }
        if let already = error as? StoreUnavailable { return already }
        let kind: StoreFailureKind = error is DeadlineExceeded ? .timeout : store.classify(error)
        metrics.storeError(kind)
        if kind == .full { return markFull(StoreUnavailable(kind: .full, cause: store.describe(error)), in: what) }
        guard kind.isOutage else {
            if error is GatewayStoreError || error is DeadlineExceeded { return error }
            return StoreCallFailed(kind: kind, description: store.describe(error))
        }
        let failure = StoreUnavailable(kind: kind, cause: error is DeadlineExceeded ? "\(error)" : store.describe(error))
        let (first, waiting) = state.withLock { state -> (Bool, [@Sendable (any Error) -> Void]) in
            guard state.down == nil, !state.stopped else { return (false, []) }
            state.down = (failure, .now)
            state.probe = Task { [weak self] in await self?.probeUntilBack() }
            return (true, state.calls.values.compactMap(\.abort))
        }
        // The calls waiting on the server end now, not at their deadline.
        for abort in waiting { abort(failure) }
        if first {
            metrics.databaseUp.record(0)
            logger.error("the database is unreachable; the gateway answers 503 and sends nothing new until it is back", metadata: [
                "kind": "\(kind.rawValue)", "cause": "\(failure.cause)", "call": "\(what)",
            ])
        }
        return failure
    }

    /// The disk is full: said once, with what happens meanwhile; a write probe every two
    /// seconds looks for room (a gateway that writes nothing would not see it otherwise).
    private func markFull(_ failure: StoreUnavailable, in what: String) -> StoreUnavailable {
        let first = state.withLock { state -> Bool in
            guard state.full == nil, !state.stopped else { return false }
            state.full = (failure, .now)
            state.fullProbe = Task { [weak self] in await self?.probeForRoom() }
            return true
        }
        if first {
            metrics.databaseUp.record(0)
            logger.error("the database's disk is full: submissions answer 503 with Retry-After, /readyz answers 503, outcomes wait in memory until it has room", metadata: [
                "cause": "\(failure.cause)", "call": "\(what)",
            ])
        }
        return failure
    }

    private func probeForRoom() async {
        await probe(every: .seconds(2), while: { $0.full != nil }, named: "the database's write probe", still: "the database still takes no writes") {
            try await $0.probeWrite()
        } then: { self.wrote() }
    }

    /// Every second while down: a ping with a two-second deadline (a new connection pool once
    /// the server answers again, so recovery does not wait for the old pool's backoff).
    private func probeUntilBack() async {
        await probe(every: .seconds(1), while: { $0.down != nil }, named: "the database's probe", still: "the database is still unreachable") {
            try await $0.ping()
        } then: { self.answered() }
    }

    /// Every `interval` while `needed` holds: `check` with a three-second deadline; `then` once
    /// it passes.
    private func probe(
        every interval: Duration, while needed: @Sendable (State) -> Bool, named what: String, still: String,
        _ check: @escaping @Sendable (any GatewayStore) async throws -> Void, then passed: () -> Void
    ) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            guard !Task.isCancelled, state.withLock({ needed($0) }) else { return }
            let store = self.store
            do {
                try await withDeadline(.seconds(3), what) { try await check(store) }
                passed()
                return
            } catch {
                logger.debug("\(still)", metadata: ["cause": "\(store.describe(error))"])
            }
        }
    }

    func stop() {
        state.withLock { state in
            state.stopped = true
            state.probe?.cancel()
            state.probe = nil
            state.fullProbe?.cancel()
            state.fullProbe = nil
            state.watchdog?.cancel()
            state.watchdog = nil
        }
    }
}
