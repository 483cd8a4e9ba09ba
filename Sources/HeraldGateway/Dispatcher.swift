import Foundation
import HeraldClient
import HeraldJSON
import HeraldProtocol
import Logging
import Synchronization

/// A gateway process's worker: claims due deliveries from the store, sends each with the app's
/// HeraldClient, and records the outcomes in batches. It holds at most
/// ``GatewayConfiguration/maximumInFlight`` deliveries (claimed and not yet recorded), so memory
/// stays flat however long the queue; a claim is given back only once its outcome is committed.
final class Dispatcher: Sendable {
    let store: any GatewayStore
    let configuration: GatewayConfiguration
    let worker: String
    let apps: AppDirectory
    let metrics: GatewayMetrics
    private let jobs: JobCache
    private let capacity: CapacityGate
    private let pending = Mutex<(outcomes: [DeliveryOutcome], released: [Int64])>(([], []))
    // One signal per loop: a signal has one waiter at a time.
    private let wake = Signal()
    private let flushWake = Signal()
    private let depthWake = Signal()
    private let leaseWake = Signal()
    private let webhookWake = Signal()
    private let stopping = Atomic<Bool>(false)
    private let sending = Atomic<Int>(0)
    private var logger: Logger { configuration.logger }

    init(store: any GatewayStore, configuration: GatewayConfiguration, worker: String, apps: AppDirectory, metrics: GatewayMetrics) {
        self.store = store
        self.configuration = configuration
        self.worker = worker
        self.apps = apps
        self.metrics = metrics
        jobs = JobCache(store: store)
        capacity = CapacityGate(limit: max(1, configuration.maximumInFlight))
    }

    private var nowMilliseconds: Int64 { Int64((configuration.now().timeIntervalSince1970 * 1000).rounded()) }

    /// Something was submitted: look for due deliveries now rather than at the next poll.
    func nudge() { wake.signal() }

    /// Claims, sends and records until ``stop()``; then lets the sends in flight finish (they
    /// end within the request timeout), records them, and gives back what was not sent.
    func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.flushLoop() }
            group.addTask { await self.depthLoop() }
            group.addTask { await self.webhookLoop() }
            group.addTask { await self.leaseLoop() }
            await claimLoop(&group)
        }
    }

    /// Stops claiming; ``run()`` returns once what it holds is recorded or given back.
    func stop() {
        stopping.store(true, ordering: .relaxed)
        for signal in [wake, flushWake, depthWake, webhookWake, leaseWake] { signal.signal() }
        capacity.cancelWaiters()
    }

    private func claimLoop(_ group: inout DiscardingTaskGroup) async {
        let batch = max(1, min(configuration.claimBatch, configuration.maximumInFlight))
        var idle = false
        while !stopping.load(ordering: .relaxed) {
            // Claim only with room for a good part of a batch: fewer, larger claims.
            guard await capacity.waitForRoom(atLeast: max(1, batch / 2)) else { break }
            if stopping.load(ordering: .relaxed) { break }
            let room = min(batch, capacity.available)
            let now = nowMilliseconds
            let claimed: [ClaimedDelivery]
            do {
                claimed = try await store.claim(worker: worker, limit: room, now: now, leaseUntil: now + configuration.claimLease.milliseconds)
            } catch {
                logger.warning("claiming deliveries failed; trying again", metadata: ["error": "\(error)"])
                await wake.wait(timeout: .seconds(1))
                continue
            }
            if claimed.isEmpty {
                if !idle { logger.trace("nothing due") }
                idle = true
                await wake.wait(timeout: configuration.pollInterval)
                continue
            }
            idle = false
            capacity.take(claimed.count)
            metrics.inFlight.record(configuration.maximumInFlight - capacity.available)
            for delivery in claimed {
                sending.add(1, ordering: .relaxed)
                group.addTask {
                    await self.send(delivery)
                    self.sending.subtract(1, ordering: .relaxed)
                }
            }
        }
        // Stopping: wait for the sends (each ends by its deadline), then a last flush.
        while sending.load(ordering: .relaxed) > 0 { try? await Task.sleep(for: .milliseconds(10)) }
        flushWake.signal()
    }

    /// Keeps this process's claims: every third of the lease, the lease on everything it holds
    /// is extended, so only the claims of a process that died run out (sends waiting for a low
    /// rate limit, or a slow APNs, are not taken over and sent twice).
    private func leaseLoop() async {
        let lease = configuration.claimLease.milliseconds
        while !stopping.load(ordering: .relaxed) {
            await leaseWake.wait(timeout: configuration.claimLease / 3)
            if stopping.load(ordering: .relaxed) { break }
            let now = nowMilliseconds
            do {
                try await store.extendLeases(worker: worker, until: now + lease, now: now)
            } catch {
                logger.warning("extending the claims' leases failed; trying again", metadata: ["error": "\(error)"])
            }
        }
    }

    private func send(_ delivery: ClaimedDelivery) async {
        let started = ContinuousClock.now
        guard let job = await jobs.content(delivery.job), let entry = await apps.entry(delivery.app) else {
            add(DeliveryOutcome(delivery: delivery, result: .rejected(status: nil, reason: "the app or notification was deleted", unregisteredAt: nil, deadToken: false)))
            return
        }
        if let limiter = entry.limiter { await limiter.acquire() }
        guard let token = try? DeviceToken(hex: delivery.token) else {
            add(DeliveryOutcome(delivery: delivery, result: .rejected(status: nil, reason: "BadDeviceToken", unregisteredAt: nil, deadToken: true)))
            return
        }
        var request = job.request.to(token)
        request.headers.apnsID = try? APNsID(parsing: delivery.apnsID)
        let result = await entry.client.outcome(of: request)
        metrics.sent.increment()
        let elapsed = ContinuousClock.now - started
        metrics.latency.recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
        let now = nowMilliseconds
        guard let outcome = configuration.retry.outcome(of: result, attempts: delivery.attempts, expiresAt: job.expiresAt, now: now) else {
            pending.withLock { $0.released.append(delivery.id) }
            return
        }
        add(DeliveryOutcome(
            delivery: delivery, result: outcome,
            webhooks: WebhookEvents.bodies(for: outcome, delivery: delivery, webhook: entry.app.webhook, now: now)))
    }

    private func add(_ outcome: DeliveryOutcome) {
        let count = pending.withLock { pending in
            pending.outcomes.append(outcome)
            return pending.outcomes.count
        }
        if count >= configuration.claimBatch { flushWake.signal() }
    }

    /// Writes outcomes every flush interval (sooner when a batch is ready); frees their room
    /// only once committed. A write that fails is tried again: nothing answered is dropped.
    private func flushLoop() async {
        while true {
            await flushWake.wait(timeout: configuration.flushInterval)
            let (outcomes, released) = pending.withLock { pending in
                defer { pending = ([], []) }
                return (pending.outcomes, pending.released)
            }
            var written = 0
            var recorded = false
            do {
                if !outcomes.isEmpty {
                    try await store.record(outcomes, worker: worker, now: nowMilliseconds)
                    recorded = true
                    written += outcomes.count
                    for outcome in outcomes { count(outcome) }
                }
                if !released.isEmpty {
                    try await store.release(worker: worker, ids: released, now: nowMilliseconds)
                    written += released.count
                }
            } catch {
                logger.warning("recording outcomes failed; trying again", metadata: ["error": "\(error)", "outcomes": "\(outcomes.count)"])
                // What was not committed goes back, ahead of what came meanwhile.
                pending.withLock { pending in
                    if !recorded { pending.outcomes.insert(contentsOf: outcomes, at: 0) }
                    pending.released.insert(contentsOf: released, at: 0)
                }
                if written > 0 { capacity.give(written) }
                try? await Task.sleep(for: .milliseconds(500))
                continue
            }
            if written > 0 {
                capacity.give(written)
                metrics.inFlight.record(configuration.maximumInFlight - capacity.available)
            }
            if stopping.load(ordering: .relaxed), sending.load(ordering: .relaxed) == 0,
               pending.withLock({ $0.outcomes.isEmpty && $0.released.isEmpty }) {
                return
            }
        }
    }

    private func count(_ outcome: DeliveryOutcome) {
        switch outcome.result {
        case .accepted: metrics.delivery("accepted", reason: nil)
        case .rejected(_, let reason, _, _): metrics.delivery("rejected", reason: reason)
        case .retry(_, let reason): metrics.delivery("retry", reason: reason)
        case .expired(let reason): metrics.delivery("expired", reason: reason)
        }
    }

    /// The queue's depth for the metrics, once a second.
    private func depthLoop() async {
        while !stopping.load(ordering: .relaxed) {
            if let depth = try? await store.queueDepth(now: nowMilliseconds) {
                metrics.queueWaiting.record(depth.waiting)
                metrics.queueDue.record(depth.due)
            }
            await depthWake.wait(timeout: .seconds(1))
        }
    }

    // MARK: Webhooks

    /// Posts due webhook events, signed, with backoff on failure: 1 s, 2 s, 4 s … up to an hour,
    /// twelve attempts in all.
    private func webhookLoop() async {
        let poster: WebhookPoster
        do {
            poster = try WebhookPoster()
        } catch {
            logger.error("webhooks are off: cannot set up TLS", metadata: ["error": "\(error)"])
            return
        }
        while !stopping.load(ordering: .relaxed) {
            let now = nowMilliseconds
            guard let events = try? await store.claimWebhooks(worker: worker, limit: 32, now: now, leaseUntil: now + 60_000), !events.isEmpty else {
                await webhookWake.wait(timeout: .milliseconds(500))
                continue
            }
            await withTaskGroup(of: Void.self) { group in
                for event in events {
                    group.addTask { await self.post(event, with: poster) }
                }
            }
        }
    }

    static let webhookAttempts = 12

    private func post(_ event: WebhookEvent, with poster: WebhookPoster) async {
        let now = nowMilliseconds
        guard let app = await apps.entry(event.app)?.app, let webhook = app.webhook else {
            try? await store.finishWebhook(id: event.id, sent: false, retryAt: nil, error: "the app has no webhook now", now: now)
            return
        }
        let body = Array(event.body.utf8)
        let signature = WebhookSignature.value(body: body, secret: webhook.secret, timestamp: now / 1000)
        var failure: String?
        do {
            let status = try await poster.post(webhook.url, body: body, headers: [(WebhookSignature.header, signature)], timeout: .seconds(10))
            if !(200..<300).contains(status) { failure = "HTTP \(status)" }
        } catch {
            failure = "\(error)"
        }
        let done = nowMilliseconds
        if failure == nil {
            metrics.webhook("sent")
            try? await store.finishWebhook(id: event.id, sent: true, retryAt: nil, error: nil, now: done)
        } else if event.attempts >= Self.webhookAttempts {
            metrics.webhook("failed")
            logger.warning("a webhook failed for good", metadata: ["app": "\(event.app)", "error": "\(failure ?? "")"])
            try? await store.finishWebhook(id: event.id, sent: false, retryAt: nil, error: failure, now: done)
        } else {
            metrics.webhook("retry")
            let delay = min(Int64(1_000) << Int64(max(event.attempts - 1, 0)), 3_600_000)
            try? await store.finishWebhook(id: event.id, sent: false, retryAt: done + delay, error: failure, now: done)
        }
    }
}

/// A bound on deliveries held: room is taken by claims and given back by commits.
final class CapacityGate: Sendable {
    private struct State {
        var available: Int
        var waiters: [(need: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    private let state: Mutex<State>

    init(limit: Int) { state = Mutex(State(available: limit)) }

    var available: Int { state.withLock { $0.available } }

    func take(_ count: Int) { state.withLock { $0.available -= count } }

    func give(_ count: Int) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.available += count
            var ready: [CheckedContinuation<Bool, Never>] = []
            state.waiters.removeAll { waiter in
                guard state.available >= waiter.need else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// Waits until `count` is free; `false` when cancelled by ``cancelWaiters()``.
    func waitForRoom(atLeast count: Int) async -> Bool {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.available >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if now { continuation.resume(returning: true) }
        }
    }

    func cancelWaiters() {
        let waiters = state.withLock { state in
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: false) }
    }
}

/// A wake-up call a loop waits for, with a timeout.
final class Signal: Sendable {
    private let state = Mutex<(signalled: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.signalled = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns at the signal (or at once if one came since the last wait), or after `timeout`.
    func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let ready = self.state.withLock { state -> Bool in
                        if state.signalled {
                            state.signalled = false
                            return true
                        }
                        state.waiter?.resume()
                        state.waiter = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                self.signal()
            }
            await group.next()
            group.cancelAll()
        }
        // The timer's own signal, if it came second, is dropped.
        state.withLock { $0.signalled = false }
    }

}

/// The apps the dispatcher sends for: each app's definition, client and rate limiter, made on
/// first use and kept.
final class AppDirectory: Sendable {
    struct Entry: Sendable {
        var app: GatewayApp
        var client: APNsClient
        var limiter: RateLimiter?
    }

    private let store: any GatewayStore
    private let requestTimeout: Duration
    private let entries = Mutex<[String: Task<Entry?, Never>]>([:])
    private let logger: Logger

    init(store: any GatewayStore, requestTimeout: Duration, logger: Logger) {
        self.store = store
        self.requestTimeout = requestTimeout
        self.logger = logger
    }

    func entry(_ id: String) async -> Entry? {
        let task = entries.withLock { entries in
            if let task = entries[id] { return task }
            let task = Task { [store, requestTimeout, logger] () -> Entry? in
                guard let stored = try? await store.app(id: id),
                      let document = try? JSONDocument(parsing: Array(stored.definition.utf8)) else { return nil }
                do {
                    let app = try GatewayApp(json: document.root)
                    let client = try APNsClient(configuration: try app.clientConfiguration(requestTimeout: requestTimeout))
                    return Entry(app: app, client: client, limiter: app.rateLimit.map(RateLimiter.init))
                } catch {
                    logger.error("cannot send for an app", metadata: ["app": "\(id)", "error": "\(error)"])
                    return nil
                }
            }
            entries[id] = task
            return task
        }
        let entry = await task.value
        if entry == nil { entries.withLock { _ = $0.removeValue(forKey: id) } }
        return entry
    }

    /// Forgets an app (deleted): its client is shut down.
    func forget(_ id: String) async {
        let task = entries.withLock { $0.removeValue(forKey: id) }
        await task?.value?.client.shutdown()
    }

    func shutdown() async {
        let tasks = entries.withLock { entries in
            defer { entries.removeAll() }
            return Array(entries.values)
        }
        for task in tasks { await task.value?.client.shutdown() }
    }
}

/// Jobs' requests (headers and payload, immutable), fetched once and kept for the newest
/// thousand jobs.
final class JobCache: Sendable {
    struct Content: Sendable {
        var request: APNsRequest
        var expiresAt: Int64
    }

    private let store: any GatewayStore
    private let entries = Mutex<(tasks: [String: Task<Content?, Never>], order: [String])>(([:], []))

    init(store: any GatewayStore) { self.store = store }

    func content(_ id: String) async -> Content? {
        let task = entries.withLock { entries in
            if let task = entries.tasks[id] { return task }
            let task = Task { [store] () -> Content? in
                guard let job = try? await store.jobContent(id: id) else { return nil }
                return Content(request: APNsRequest(headers: Submission.headers(fromJSON: job.headers), body: job.payload), expiresAt: job.expiresAt)
            }
            entries.tasks[id] = task
            entries.order.append(id)
            if entries.order.count > 1_000 { entries.tasks[entries.order.removeFirst()] = nil }
            return task
        }
        return await task.value
    }
}

/// Sends per second, for an app's `rateLimit`: a token bucket holding at most a second's worth.
final class RateLimiter: Sendable {
    private let rate: Double
    private let state: Mutex<(tokens: Double, last: ContinuousClock.Instant)>

    init(_ rate: Int) {
        self.rate = Double(rate)
        state = Mutex((Double(rate), ContinuousClock.now))
    }

    func acquire() async {
        while true {
            let wait: Double? = state.withLock { state in
                let now = ContinuousClock.now
                let elapsed = now - state.last
                state.tokens = min(rate, state.tokens + rate * (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
                state.last = now
                if state.tokens >= 1 {
                    state.tokens -= 1
                    return nil
                }
                return (1 - state.tokens) / rate
            }
            guard let wait else { return }
            try? await Task.sleep(for: .milliseconds(max(1, Int64(wait * 1000))))
        }
    }
}
