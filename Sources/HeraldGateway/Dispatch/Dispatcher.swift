import Foundation
import HeraldAsync
import HeraldClient
import HeraldHTTPAPI
import HeraldJSON
import HeraldProtocol
import Logging
import Synchronization

/// A gateway process's worker: claims due deliveries from the store, sends each with the app's
/// HeraldClient, and records the outcomes in batches.
///
/// - It holds at most ``GatewayConfiguration/maximumInFlight`` deliveries (claimed and not yet
///   recorded or given back), so memory stays flat however long the queue; room is given back
///   only once a commit has ended the hold.
/// - Claims are fenced (``HeldClaims``): a delivery is sent only while its lease outlasts the
///   send, every lease is extended while the process lives, and one the database could not
///   extend runs out here before anyone may take the row over, so a takeover never overlaps a
///   live sender.
/// - A store error is never an outcome: a delivery whose job or app could not be read waits and
///   tries again while it holds its lease, and is given back after; only APNs' answers, expiry
///   and a real deletion end a delivery.
/// - ``stop()`` stops claiming at once, gives back what has not started sending, and lets the
///   sends under way end (within the request timeout) and be recorded.
final class Dispatcher: Sendable {
    let store: GuardedStore
    let configuration: GatewayConfiguration
    let worker: String
    let apps: AppDirectory
    let metrics: GatewayMetrics
    private let jobs: JobCache
    /// Live Activities' own sender (their rows are their queue).
    let activities: ActivitySender
    private let capacity: CapacityGate
    private let held = HeldClaims()
    /// Outcomes to record, and deliveries to give back (with why they wait, when that changed).
    private let pending = Mutex<(outcomes: [(DeliveryOutcome, Int)], released: [Release])>(([], []))

    private struct Release: Sendable {
        var id: Int64
        var ticket: Int
        var reason: String?
    }
    // One signal per loop: a signal has one waiter at a time.
    private let wake = Signal()
    private let flushWake = Signal()
    private let depthWake = Signal()
    private let leaseWake = Signal()
    private let webhookWake = Signal()
    private let retentionWake = Signal()
    /// Wakes the deliveries waiting for a lease extension or for the store, and for the stop.
    private let leaseEvents = Broadcast()
    private let stopping = Atomic<Bool>(false)
    private let sending = Atomic<Int>(0)
    private var logger: Logger { configuration.logger }

    /// Spans for the attempts, when traces are exported.
    private let tracer: GatewayTracer?

    init(store: GuardedStore, configuration: GatewayConfiguration, worker: String, apps: AppDirectory, metrics: GatewayMetrics, tracer: GatewayTracer? = nil) {
        self.store = store
        self.tracer = tracer
        self.configuration = configuration
        self.worker = worker
        self.apps = apps
        self.metrics = metrics
        jobs = JobCache(store: store)
        capacity = CapacityGate(limit: max(1, configuration.maximumInFlight))
        activities = ActivitySender(store: store, configuration: configuration, worker: worker, apps: apps, metrics: metrics, tracer: tracer)
        store.health.onRecovery { [leaseWake, wake, flushWake] in
            // Back from an outage: keep what is held (before another process may take it
            // over), record what waited, and claim again.
            leaseWake.signal()
            flushWake.signal()
            wake.signal()
        }
    }

    private var nowMilliseconds: Int64 { Int64((configuration.now().timeIntervalSince1970 * 1000).rounded()) }

    /// The lease a send needs left when it starts: the longest a send takes (the client's
    /// deadline, retries included) and a margin for the deadline's granularity.
    var sendAllowance: Duration { configuration.requestTimeout + .milliseconds(500) }

    /// How often the leases are extended: often enough that a lease never drops below
    /// ``sendAllowance`` between two extensions, and at least three times per lease.
    var extensionInterval: Duration {
        let slack = configuration.claimLease - sendAllowance
        return max(.milliseconds(100), min(configuration.claimLease / 3, slack / 2))
    }

    /// After an outage, another process's expired claims are left alone this long: that process
    /// may be alive and about to extend them (its outcomes waiting to be recorded).
    var takeoverHold: Duration { min(configuration.claimLease, .seconds(15)) }

    /// Something was submitted: look for due deliveries now rather than at the next poll.
    func nudge() { wake.signal() }

    /// Claims, sends and records until ``stop()``; then gives back what has not started, lets
    /// the sends under way finish (they end within the request timeout), records them, and
    /// gives back what is left.
    func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.flushLoop() }
            group.addTask { await self.depthLoop() }
            group.addTask { await self.webhookLoop() }
            group.addTask { await self.retentionLoop() }
            group.addTask { await self.leaseLoop() }
            group.addTask { await self.activities.run() }
            await claimLoop(&group)
        }
    }

    /// Stops claiming; ``run()`` returns once what it holds is recorded or given back.
    func stop() {
        stopping.store(true, ordering: .relaxed)
        activities.stop()
        for signal in [wake, flushWake, depthWake, webhookWake, leaseWake, retentionWake] { signal.signal() }
        leaseEvents.notifyAll()
        capacity.cancelWaiters()
    }

    var isStopping: Bool { stopping.load(ordering: .relaxed) }

    /// Errors not worth a line of their own: an outage or a full disk (the store's health says
    /// each once), and what a stop cancels.
    private func isQuiet(_ error: any Error) -> Bool {
        error is StoreUnavailable || error is CancellationError || isStopping
    }

    private func claimLoop(_ group: inout DiscardingTaskGroup) async {
        let batch = max(1, min(configuration.claimBatch, configuration.maximumInFlight))
        var idle = false
        while !isStopping {
            // Claim only with room for a good part of a batch: fewer, larger claims.
            guard await capacity.waitForRoom(atLeast: max(1, batch / 2)) else { break }
            if isStopping { break }
            let room = min(batch, capacity.available)
            let now = nowMilliseconds
            let started = ContinuousClock.now
            // Right after an outage, rows whose lease ran out may belong to a live process.
            let takeOver = store.health.sinceRecovery.map { $0 >= takeoverHold } ?? true
            let claimed: [ClaimedDelivery]
            do {
                claimed = try await store.claim(
                    worker: worker, limit: room, now: now, leaseUntil: now + configuration.claimLease.milliseconds, takeOver: takeOver)
            } catch {
                // An outage is logged once, by the store's health; anything else here.
                if !isQuiet(error) { logger.warning("claiming deliveries failed; trying again", metadata: ["error": "\(error)"]) }
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
            let tickets = held.add(claimed.map(\.id), lease: started + configuration.claimLease)
            // One task a batch (its sends in a group of its own): a group's children are a list
            // its task walks when one ends, so thousands under one task cost more each.
            sending.add(claimed.count, ordering: .relaxed)
            group.addTask { await self.dispatch(claimed, tickets: tickets) }
        }
        // Stopping: wait for the sends (each ends by its deadline, or is given back), then a last flush.
        while sending.load(ordering: .relaxed) > 0 { try? await Task.sleep(for: .milliseconds(10)) }
        flushWake.signal()
    }

    /// Keeps this process's claims: every ``extensionInterval``, the lease on everything it
    /// holds is extended (however long the sends wait for a low rate limit, or the database was
    /// away); what the database no longer gives it is marked lost at once.
    private func leaseLoop() async {
        let lease = configuration.claimLease
        while !isStopping {
            await leaseWake.wait(timeout: extensionInterval)
            if isStopping { break }
            let ids = held.ids
            if !ids.isEmpty {
                let started = ContinuousClock.now
                let now = nowMilliseconds
                do {
                    let kept = try await store.extendLeases(worker: worker, ids: ids, until: now + lease.milliseconds, now: now)
                    let lost = held.extended(ids, kept: kept, lease: started + lease)
                    if !lost.isEmpty {
                        // Gone from the database (their app was deleted), or another's now.
                        let remaining = (try? await store.existingDeliveries(ids: lost)) ?? Set(lost)
                        if !remaining.isEmpty {
                            logger.warning("claims were taken over by another process; they are not sent here", metadata: ["deliveries": "\(remaining.count)"])
                        }
                        if lost.count > remaining.count {
                            logger.debug("claims ended: their app was deleted", metadata: ["deliveries": "\(lost.count - remaining.count)"])
                        }
                    }
                } catch {
                    if !isQuiet(error) {
                        logger.warning("extending the claims' leases failed; trying again", metadata: ["error": "\(error)"])
                    }
                }
            }
            // Whatever happened, those waiting look again: sent, still waiting, or lost.
            leaseEvents.notifyAll()
        }
    }

    /// What a claimed delivery is sent with: its job and its app, read once for every delivery of
    /// a batch that shares them, and held by reference so that a send's task keeps a small frame
    /// (a task's first frame larger than its allocator's slab is a `malloc` of its own).
    private final class Sending: Sendable {
        let job: JobCache.Content
        let entry: AppDirectory.Entry
        /// Whether the job's topic is the app's own (an app-level failure then pauses the app).
        let usesAppTopic: Bool
        /// Where the app's sends are counted.
        let meter: GatewayMetrics.SendMeter

        init(job: JobCache.Content, entry: AppDirectory.Entry, meter: GatewayMetrics.SendMeter) {
            self.job = job
            self.entry = entry
            self.meter = meter
            let headers = job.request.headers
            usesAppTopic = headers.topic == entry.app.topic(for: headers.pushType ?? .alert)
        }
    }

    /// A claimed batch: the jobs and apps its deliveries need are read once (waiting while the
    /// database is away, as long as the leases last), what needs no send is decided at once,
    /// and the rest are sent, each in a task of the batch's own group.
    private func dispatch(_ claimed: [ClaimedDelivery], tickets: [Int]) async {
        // The attempts' spans start at the claim.
        let claimedAt = tracer == nil ? 0 : Span.now()
        var open = Array(claimed.indices)
        var jobs: [String: JobCache.Content?] = [:]
        var apps: [String: AppDirectory.Lookup] = [:]
        while true {
            let generation = leaseEvents.generation
            let stopping = isStopping
            let stillHeld = held.areHeld(open.map { (claimed[$0].id, tickets[$0]) }, now: .now)
            var kept: [Int] = []
            for (index, isHeld) in zip(open, stillHeld) {
                if isHeld, !stopping { kept.append(index) } else { giveBack((claimed[index].id, tickets[index])) }
            }
            open = kept
            guard !open.isEmpty else { return finishedSending(claimed.count) }
            do {
                for index in open {
                    let delivery = claimed[index]
                    if jobs.index(forKey: delivery.job) == nil { jobs[delivery.job] = try await self.jobs.content(delivery.job) }
                    if apps.index(forKey: delivery.app) == nil { apps[delivery.app] = try await self.apps.lookup(delivery.app) }
                }
                break
            } catch {
                if !isQuiet(error) {
                    logger.warning("reading a delivery's job or app failed; trying again", metadata: ["error": "\(error)"])
                }
                await leaseEvents.wait(since: generation)
            }
        }
        var sendings: [String: Sending] = [:]
        var paused: Set<String> = []
        var ready: [(delivery: ClaimedDelivery, ticket: Int, token: DeviceToken, sending: Sending)] = []
        let now = nowMilliseconds
        for index in open {
            let delivery = claimed[index], ticket = tickets[index]
            let hold = (delivery.id, ticket)
            let job = jobs[delivery.job] ?? nil
            let entry: AppDirectory.Entry
            switch apps[delivery.app] {
            case .found(let found)? where job != nil:
                entry = found
            case .unusable(let app, let why, let version)? where job != nil:
                // The app's fault, not the device's: its deliveries wait for a fix.
                let failure = AppFailure(
                    reason: "the app's credentials cannot be used: \(why)", advice: "PATCH /v1/apps/\(delivery.app) with credentials that load")
                if paused.insert(delivery.app).inserted { await pause(delivery.app, version: version, app: app, failure: failure) }
                giveBack(hold, reason: Self.waiting(failure.reason))
                continue
            default:
                add(.rejected(status: nil, reason: "the app or notification was deleted", unregisteredAt: nil, deadToken: false), delivery, ticket)
                continue
            }
            guard let job else { continue }
            // Paused (here, or in the database as last read): back to the queue, where it waits.
            if let reason = entry.pausedReason {
                if tracer != nil {
                    var span = attemptSpan(delivery, job: job, start: claimedAt)
                    span.set("herald.outcome", "waiting")
                    tracer?.finish(span)
                }
                giveBack(hold, reason: Self.waiting(reason))
                continue
            }
            // Its time passed while it waited (a long queue, a paused app, a retry's backoff): not
            // sent. A notification with expiration 0 ("try once, now") is still tried once. What its
            // last attempt got stays in the reason.
            if job.request.headers.expiration != .immediately, job.expiresAt <= now {
                let reason = delivery.lastReason.map { "expired before it could be sent again (last answer: \($0))" } ?? "expired before it could be sent"
                let outcome = DeliveryOutcome.Result.expired(reason: reason)
                if tracer != nil {
                    var span = attemptSpan(delivery, job: job, start: claimedAt)
                    span.note(outcome)
                    tracer?.finish(span)
                }
                add(outcome, delivery, ticket, webhooks: WebhookEvents.bodies(
                    for: outcome, delivery: delivery, metadata: job.metadata, webhook: entry.app.webhook, now: now), doneWebhook: entry.wantsJobDone)
                continue
            }
            guard let token = try? DeviceToken(hex: delivery.token) else {
                add(.rejected(status: nil, reason: "BadDeviceToken", unregisteredAt: nil, deadToken: true), delivery, ticket)
                continue
            }
            let key = delivery.job + "\u{0}" + delivery.app
            let sending = sendings[key] ?? Sending(job: job, entry: entry, meter: metrics.sendMeter(delivery.app))
            sendings[key] = sending
            ready.append((delivery, ticket, token, sending))
        }
        finishedSending(claimed.count - ready.count)
        // Nearly every delivery can go at once (no rate limit to wait for, the app's gate open,
        // the lease long enough): it is handed to the client, whose answer is taken on the
        // connection's event loop, with no task of its own. The others wait in a task each.
        var waiting: [(delivery: ClaimedDelivery, ticket: Int, token: DeviceToken, sending: Sending)] = []
        for item in ready {
            switch sendsNow(item.delivery, ticket: item.ticket, with: item.sending) {
            case true?: send(item.delivery, ticket: item.ticket, token: item.token, with: item.sending)
            case false?: finishedSending(1)
            case nil: waiting.append(item)
            }
        }
        guard !waiting.isEmpty else { return }
        await withDiscardingTaskGroup { group in
            for (delivery, ticket, token, sending) in waiting {
                group.addTask {
                    await self.send(delivery, ticket: ticket, token: token, with: sending, claimedAt: claimedAt)
                    self.finishedSending(1)
                }
            }
        }
    }

    /// Whether a delivery may be sent at once: `true` (it holds a place at its app's gate and
    /// the fence's permission), `false` (given back: stopping, paused, or its lease lost), or
    /// `nil` when it would have to wait (a rate limit, a closed gate, a lease too short, a span
    /// to carry).
    private func sendsNow(_ delivery: ClaimedDelivery, ticket: Int, with sending: Sending) -> Bool? {
        let entry = sending.entry
        guard tracer == nil, entry.limiter == nil, !isStopping else { return nil }
        switch entry.gate.enterNow() {
        case nil: return nil
        case false?:
            giveBack((delivery.id, ticket), reason: entry.pausedReason.map(Self.waiting))
            return false
        case true?: break
        }
        switch held.permission(delivery.id, ticket: ticket, now: .now, needed: sendAllowance) {
        case .send:
            return true
        case .lost:
            entry.gate.leave(accepted: false)
            giveBack((delivery.id, ticket))
            return false
        case .wait:
            entry.gate.leave(accepted: false)
            return nil
        }
    }

    /// Sends a delivery that may go at once (``sendsNow(_:ticket:with:)``); its answer is taken
    /// where it arrives.
    private func send(_ delivery: ClaimedDelivery, ticket: Int, token: DeviceToken, with sending: Sending) {
        let started = ContinuousClock.now
        sending.entry.client.send(request(delivery, token: token, job: sending.job), timeout: configuration.requestTimeout) { result in
            var span: Span?
            guard let failure = self.received(result, delivery, ticket: ticket, with: sending, elapsed: ContinuousClock.now - started, span: &span) else {
                return self.finishedSending(1)
            }
            // Rare (the app's credentials or server failed): the pause is awaited before the
            // gate is left, in a task the stop waits for (it holds this delivery's count).
            Task {
                await self.pause(for: failure, delivery, ticket: ticket, with: sending, span: &span)
                self.finishedSending(1)
            }
        }
    }

    /// `count` deliveries of a batch are done with (sent, given back, or decided without a send).
    private func finishedSending(_ count: Int) {
        if count > 0 { sending.subtract(count, ordering: .relaxed) }
    }

    /// One delivery's send: the app's rate limit and gate, the fence, the request, and what its
    /// answer makes of the delivery.
    private func send(_ delivery: ClaimedDelivery, ticket: Int, token: DeviceToken, with sending: Sending, claimedAt: UInt64) async {
        let hold = (delivery.id, ticket)
        let entry = sending.entry
        var span = tracer == nil ? nil : attemptSpan(delivery, job: sending.job, start: claimedAt)
        defer { if let span { tracer?.finish(span) } }
        if let limiter = entry.limiter {
            guard await limiter.acquire(while: { !self.isStopping }) else { return giveBack(hold) }
        }
        // Until the app's first accepted push, a few at a time; none while it is paused. (Before
        // the fence: the wait here may be long, the fence's permission is for a send now.)
        guard await entry.gate.enter() else { return giveBack(hold, reason: entry.pausedReason.map(Self.waiting)) }
        // The fence: only with lease enough for the whole send.
        while true {
            let generation = leaseEvents.generation
            if isStopping {
                entry.gate.leave(accepted: false)
                return giveBack(hold)
            }
            switch held.permission(delivery.id, ticket: ticket, now: .now, needed: sendAllowance) {
            case .send: break
            case .lost:
                entry.gate.leave(accepted: false)
                return giveBack(hold)
            case .wait:
                await leaseEvents.wait(since: generation)
                continue
            }
            break
        }
        let started = ContinuousClock.now
        let result: Result<APNsResponse, APNsClientError>
        if let context = span?.context {
            result = await TraceContext.$current.withValue(context) {
                await entry.client.outcome(of: request(delivery, token: token, job: sending.job), timeout: configuration.requestTimeout)
            }
        } else {
            result = await entry.client.outcome(of: request(delivery, token: token, job: sending.job), timeout: configuration.requestTimeout)
        }
        if let failure = received(result, delivery, ticket: ticket, with: sending, elapsed: ContinuousClock.now - started, span: &span) {
            await pause(for: failure, delivery, ticket: ticket, with: sending, span: &span)
        }
    }

    /// A send's answer: counted, the hold marked sent, and what it makes of the delivery, the
    /// gate left. Returns the failure of the app's credentials or server that the answer was,
    /// if it was one: then the caller pauses the app (``pause(for:_:ticket:with:span:)``),
    /// which also leaves the gate.
    private func received(
        _ result: Result<APNsResponse, APNsClientError>, _ delivery: ClaimedDelivery, ticket: Int, with sending: Sending, elapsed: Duration,
        span: inout Span?
    ) -> AppFailure? {
        let gate = sending.entry.gate
        span?.note(result)
        sending.meter.sent(elapsed: elapsed)
        held.finished(delivery.id, ticket: ticket)
        guard case .failure = result else {
            gate.leave(accepted: true)
            answered(result, delivery, ticket: ticket, with: sending, span: &span)
            return nil
        }
        if let failure = AppFailure.of(result, app: sending.entry.app, usesAppTopic: sending.usesAppTopic) { return failure }
        answered(result, delivery, ticket: ticket, with: sending, span: &span)
        gate.leave(accepted: false)
        return nil
    }

    /// The app's credentials or server failed, not the device: the app is paused, the delivery
    /// waits for it (``paused(by:_:ticket:with:span:)``), and only then is the gate left, so
    /// that nobody waiting at it is let through with credentials just refused.
    private func pause(for failure: AppFailure, _ delivery: ClaimedDelivery, ticket: Int, with sending: Sending, span: inout Span?) async {
        let entry = sending.entry
        await pause(entry.app.id, version: entry.updatedAt, app: entry.app, failure: failure)
        paused(by: failure, delivery, ticket: ticket, with: sending, span: &span)
        entry.gate.leave(accepted: false)
    }

    /// The request a delivery sends: its job's (in its language) to its device, with its own
    /// `apns-id`.
    private func request(_ delivery: ClaimedDelivery, token: DeviceToken, job: JobCache.Content) -> APNsRequest {
        var request = job.request(variant: delivery.variant).to(token)
        request.headers.apnsID = try? APNsID(parsing: delivery.apnsID)
        return request
    }

    /// The credentials or the server failed, not the device: the app is paused now, and the
    /// delivery waits for it (unless it expires meanwhile).
    private func paused(by failure: AppFailure, _ delivery: ClaimedDelivery, ticket: Int, with sending: Sending, span: inout Span?) {
        let entry = sending.entry, job = sending.job
        let now = nowMilliseconds
        span?.set("herald.outcome", "waiting")
        span?.status = .error("the app is paused: \(failure.reason)")
        guard now < job.expiresAt else {
            let outcome = DeliveryOutcome.Result.expired(reason: "the app is paused: \(failure.reason)")
            return add(outcome, delivery, ticket, webhooks: WebhookEvents.bodies(
                for: outcome, delivery: delivery, metadata: job.metadata, webhook: entry.app.webhook, now: now), doneWebhook: entry.wantsJobDone)
        }
        giveBack((delivery.id, ticket), reason: Self.waiting(failure.reason))
    }

    /// What APNs' answer (or the client's failure) makes of a delivery: an outcome to record, or
    /// back to the queue (a retry the policy leaves to the queue).
    private func answered(
        _ result: Result<APNsResponse, APNsClientError>, _ delivery: ClaimedDelivery, ticket: Int, with sending: Sending, span: inout Span?
    ) {
        let hold = (delivery.id, ticket)
        let entry = sending.entry, job = sending.job
        let now = nowMilliseconds
        guard let outcome = configuration.retry.outcome(of: result, attempts: delivery.attempts, expiresAt: job.expiresAt, now: now) else {
            span?.set("herald.outcome", "waiting")
            return giveBack(hold)
        }
        span?.note(outcome)
        add(outcome, delivery, ticket, webhooks: WebhookEvents.bodies(
            for: outcome, delivery: delivery, metadata: job.metadata, webhook: entry.app.webhook, now: now), doneWebhook: entry.wantsJobDone)
    }

    /// An attempt's span: under the submission's span when the job has one (the attempt is
    /// then part of the submission's trace, whichever process made it), else a trace of its own.
    private func attemptSpan(_ delivery: ClaimedDelivery, job: JobCache.Content, start: UInt64) -> Span {
        var span = Span("apns.send", kind: .client, parent: job.trace)
        span.start = start
        span.set("herald.app", delivery.app)
        span.set("herald.notification.id", delivery.job)
        span.set("herald.delivery.id", Int(delivery.id))
        span.set("apns-id", delivery.apnsID)
        span.set("herald.attempt", delivery.attempts)
        span.set("herald.process", worker)
        return span
    }

    /// A waiting delivery's reason while its app is paused (`reason`).
    static func waiting(_ reason: String) -> String { "waiting: the app is paused: \(reason)" }

    /// Pauses the app (``AppDirectory/pause(_:version:app:failure:now:)``).
    private func pause(_ id: String, version: Int64, app: GatewayApp?, failure: AppFailure) async {
        await apps.pause(id, version: version, app: app, failure: failure, now: nowMilliseconds)
    }

    /// Not sent: back to the queue (if this process still holds it) at the next flush; `reason`
    /// says why it waits, when that changed.
    private func giveBack(_ hold: (Int64, Int), reason: String? = nil) {
        pending.withLock { $0.released.append(Release(id: hold.0, ticket: hold.1, reason: reason)) }
        flushWake.signal()
    }

    private func add(_ result: DeliveryOutcome.Result, _ delivery: ClaimedDelivery, _ ticket: Int, webhooks: [String] = [], doneWebhook: Bool = false) {
        let count = pending.withLock { pending in
            pending.outcomes.append((DeliveryOutcome(delivery: delivery, result: result, webhooks: webhooks, doneWebhook: doneWebhook), ticket))
            return pending.outcomes.count
        }
        if count == 1 || count >= configuration.claimBatch || isStopping { flushWake.signal() }
    }

    /// Writes outcomes every flush interval (sooner when a batch is ready); frees their room
    /// only once committed. A write that fails is tried again: nothing answered is dropped.
    private func flushLoop() async {
        while true {
            // Idle, it sleeps until an outcome comes (a second at most); busy, it writes every
            // flush interval, sooner for a full batch.
            let idle = pending.withLock { $0.outcomes.isEmpty && $0.released.isEmpty }
            await flushWake.wait(timeout: idle ? .seconds(1) : configuration.flushInterval)
            let (outcomes, released) = pending.withLock { pending in
                defer { pending = ([], []) }
                return (pending.outcomes, pending.released)
            }
            var recorded = false
            do {
                if !outcomes.isEmpty {
                    try await store.record(outcomes.map(\.0), worker: worker, now: nowMilliseconds)
                    recorded = true
                    held.remove(outcomes.map { ($0.0.delivery.id, $0.1) })
                    capacity.give(outcomes.count)
                    count(outcomes)
                }
                if !released.isEmpty {
                    // One statement per reason (nearly always one).
                    for reason in Set(released.map(\.reason)) {
                        let ids = released.filter { $0.reason == reason }.map(\.id)
                        try await store.release(worker: worker, ids: ids, reason: reason, now: nowMilliseconds)
                    }
                    held.remove(released.map { ($0.id, $0.ticket) })
                    capacity.give(released.count)
                }
            } catch {
                if !isQuiet(error) {
                    logger.warning("recording outcomes failed; trying again", metadata: ["error": "\(error)", "outcomes": "\(outcomes.count)"])
                }
                // What was not committed goes back, ahead of what came meanwhile.
                pending.withLock { pending in
                    if !recorded { pending.outcomes.insert(contentsOf: outcomes, at: 0) }
                    pending.released.insert(contentsOf: released, at: 0)
                }
                if isStopping, sending.load(ordering: .relaxed) == 0, store.health.unavailable != nil {
                    // Nothing more can be written now; the leases run out and others take over.
                    logger.warning("stopping with outcomes unrecorded: the database is unreachable", metadata: [
                        "outcomes": "\(pending.withLock { $0.outcomes.count })", "claims": "\(held.count)",
                    ])
                    return
                }
                await flushWake.wait(timeout: .milliseconds(500))
                continue
            }
            if !outcomes.isEmpty || !released.isEmpty {
                metrics.inFlight.record(configuration.maximumInFlight - capacity.available)
            }
            if isStopping, sending.load(ordering: .relaxed) == 0, pending.withLock({ $0.outcomes.isEmpty && $0.released.isEmpty }) {
                return
            }
        }
    }

    /// Counts recorded outcomes in the metrics: one increment per app, state and reason.
    private func count(_ outcomes: [(DeliveryOutcome, Int)]) {
        struct Key: Hashable {
            var app: String
            var state: String
            var reason: String?
        }
        var counts: [Key: Int] = [:]
        for (outcome, _) in outcomes {
            let app = outcome.delivery.app
            let key: Key
            switch outcome.result {
            case .accepted: key = Key(app: app, state: "accepted")
            case .rejected(_, let reason, _, _): key = Key(app: app, state: "rejected", reason: Self.metricReason(reason))
            case .retry(_, let reason): key = Key(app: app, state: "retry", reason: Self.metricReason(reason))
            case .expired(let reason): key = Key(app: app, state: "expired", reason: Self.metricReason(reason))
            }
            counts[key, default: 0] += 1
        }
        for (key, count) in counts { metrics.delivery(key.app, key.state, reason: key.reason, count: count) }
    }

    /// A reason as a metric's label: APNs' reason as it is, else its kind (`connection`,
    /// `timeout`, `paused`, `expired`, `deleted`, `other`), so that no endpoint or message makes a
    /// label value of its own.
    static func metricReason(_ reason: String?) -> String? {
        guard let reason else { return nil }
        if !reason.isEmpty, reason.utf8.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) }) { return reason }
        if reason.hasPrefix("HTTP ") { return reason }
        if reason.hasPrefix("cannot connect") { return "connection" }
        if reason.hasPrefix("no answer in time") || reason.hasPrefix("not sent in time") { return "timeout" }
        if reason.contains("paused") { return "paused" }
        if reason.hasPrefix("expired") { return "expired" }
        if reason.contains("deleted") { return "deleted" }
        return "other"
    }

    /// Prunes what is older than the retention, a pass a minute (``Retention``).
    private func retentionLoop() async {
        guard let retention = configuration.retention else { return }
        let pruning = Retention(
            store: store, retention: retention, batch: configuration.retentionBatch, metrics: metrics, logger: logger,
            now: { [configuration] in Int64((configuration.now().timeIntervalSince1970 * 1000).rounded()) })
        while !isStopping {
            await pruning.pass { self.isStopping }
            await retentionWake.wait(timeout: configuration.retentionInterval)
        }
    }

    /// The queue's depth for the metrics, once a second.
    /// The queue's depth for the gauges, every second, or less often when counting takes long:
    /// a count reads the whole queue (its index), so with millions waiting it waits twenty
    /// times as long as the count took, and counting costs the database at most a twentieth of
    /// a core per process.
    private func depthLoop() async {
        while !isStopping {
            let started = ContinuousClock.now
            if let depth = try? await store.queueDepth(now: nowMilliseconds) {
                metrics.queue(waiting: depth.waiting, due: depth.due)
            }
            await depthWake.wait(timeout: max(.seconds(1), (ContinuousClock.now - started) * 20))
        }
    }

    // MARK: Webhooks

    /// Posts due webhook events, signed, with backoff on failure: 1 s, 2 s, 4 s … up to an hour,
    /// twelve attempts in all.
    private func webhookLoop() async {
        let poster: JSONPoster
        do {
            poster = try JSONPoster(userAgent: "herald-gateway")
        } catch {
            logger.error("webhooks are off: cannot set up TLS", metadata: ["error": "\(error)"])
            return
        }
        while !isStopping {
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

    private func post(_ event: WebhookEvent, with poster: JSONPoster) async {
        let now = nowMilliseconds
        let app: GatewayApp?
        do {
            app = try await apps.definition(event.app)
        } catch {
            // The database did not answer: the event's claim runs out and it is posted later.
            return
        }
        guard let app, let webhook = app.webhook else {
            metrics.webhook(event.app, "dropped")
            logger.warning("a webhook event was dropped: its app has no webhook now", metadata: ["app": "\(event.app)", "event": "\(event.id)"])
            await finish(event, sent: false, retryAt: nil, error: "the app has no webhook now", now: now)
            return
        }
        let body = Array(event.body.utf8)
        let signature = WebhookSignature.value(body: body, secret: webhook.secret, timestamp: now / 1000)
        var failure: String?
        var answer: JSONPoster.Answer?
        let started = ContinuousClock.now
        do {
            answer = try await poster.post(webhook.url, body: body, headers: [(WebhookSignature.header, signature)], timeout: .seconds(10))
            if let status = answer?.status, !(200..<300).contains(status) { failure = "HTTP \(status)" }
        } catch {
            failure = "\(error)"
        }
        let elapsed = ContinuousClock.now - started
        let latency = elapsed.secondsText
        let attempt = WebhookAttempt(
            status: answer?.status, milliseconds: elapsed.milliseconds,
            answer: answer.map { String(decoding: $0.prefix, as: UTF8.self) })
        let done = nowMilliseconds
        guard let failure else {
            metrics.webhook(event.app, "sent")
            await finish(event, sent: true, retryAt: nil, error: nil, attempt: attempt, now: done)
            return
        }
        if event.attempts >= Self.webhookAttempts {
            metrics.webhook(event.app, "failed")
            logger.error("a webhook event was dropped after its last attempt", metadata: [
                "app": "\(event.app)", "event": "\(event.id)", "attempt": "\(event.attempts)", "error": "\(failure)", "latency": "\(latency)",
            ])
            await finish(event, sent: false, retryAt: nil, error: failure, attempt: attempt, now: done)
        } else {
            metrics.webhook(event.app, "retry")
            let delay = min(Int64(1_000) << Int64(max(event.attempts - 1, 0)), 3_600_000)
            logger.warning("a webhook attempt failed; it is posted again later", metadata: [
                "app": "\(event.app)", "event": "\(event.id)", "attempt": "\(event.attempts)", "error": "\(failure)", "latency": "\(latency)",
                "retry in": "\(Duration.milliseconds(delay).secondsText)",
            ])
            await finish(event, sent: false, retryAt: done + delay, error: failure, attempt: attempt, now: done)
        }
    }

    /// Records a webhook's result; if the database does not answer, the event's claim runs out
    /// and it is posted again (a receiver may see it twice, never not at all).
    private func finish(_ event: WebhookEvent, sent: Bool, retryAt: Int64?, error: String?, attempt: WebhookAttempt? = nil, now: Int64) async {
        do {
            try await store.finishWebhook(id: event.id, sent: sent, retryAt: retryAt, error: error, attempt: attempt, now: now)
        } catch {
            logger.debug("recording a webhook's result failed; it will be posted again", metadata: ["error": "\(error)"])
        }
    }
}
