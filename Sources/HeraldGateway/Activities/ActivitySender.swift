import Foundation
import HeraldAsync
import HeraldClient
import HeraldJSON
import HeraldProtocol
import Logging
import Synchronization

/// A process's sender of Live Activity pushes: claims activities with something due (a lease on
/// the row, so one process at a time works an activity, and its pushes go one after another),
/// sends the start to the push-to-start tokens, the newest update or end to the update token or
/// the channel, and records what happened on the row.
///
/// The rules senders get wrong, kept here:
/// - updates and ends go to the activity's update token (or channel), never to a start token;
/// - `timestamp` is set when a push is sent, never earlier than the last one sent;
/// - an activity has one send in flight at a time, and only its newest content is sent: an older
///   one not yet accepted when a newer arrives is dropped and counted as superseded, so no older
///   content reaches the device after a newer one;
/// - a push whose update token was replaced while it was in flight, and that failed, goes to
///   the new token.
final class ActivitySender: Sendable {
    let store: GuardedStore
    let configuration: GatewayConfiguration
    let worker: String
    let apps: AppDirectory
    let metrics: GatewayMetrics
    private let wake = Signal()
    private let stopping = Atomic<Bool>(false)
    private var logger: Logger { configuration.logger }
    private var limits: LiveActivityLimits { configuration.activityLimits }

    /// Spans for the pushes, when traces are exported.
    private let tracer: GatewayTracer?

    init(store: GuardedStore, configuration: GatewayConfiguration, worker: String, apps: AppDirectory, metrics: GatewayMetrics, tracer: GatewayTracer? = nil) {
        self.tracer = tracer
        self.store = store
        self.configuration = configuration
        self.worker = worker
        self.apps = apps
        self.metrics = metrics
    }

    private func pause(_ id: String, _ version: Int64, _ app: GatewayApp?, _ failure: AppFailure) async {
        await apps.pause(id, version: version, app: app, failure: failure, now: now)
    }

    private var now: Int64 { Int64((configuration.now().timeIntervalSince1970 * 1000).rounded()) }

    /// Something became due (a start, an update, a token): look now rather than at the next poll.
    func nudge() { wake.signal() }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        wake.signal()
    }

    /// Claims and works activities until ``stop()``; what is claimed when it stops is finished
    /// (each send ends within the request timeout).
    func run() async {
        var lastExpiry = ContinuousClock.now - limits.expiryInterval
        while !stopping.load(ordering: .relaxed) {
            if ContinuousClock.now - lastExpiry >= limits.expiryInterval {
                lastExpiry = .now
                do {
                    let expired = try await store.expireActivities(startedBefore: now - limits.active.milliseconds, now: now)
                    if expired > 0 { logger.info("Live Activities past the system's limit of \(limits.active) marked expired", metadata: ["count": "\(expired)"]) }
                } catch {
                    if !(error is StoreUnavailable) { logger.warning("expiring Live Activities failed", metadata: ["error": "\(error)"]) }
                }
            }
            let claimed: [StoredActivity]
            do {
                let now = self.now
                claimed = try await store.claimActivities(worker: worker, limit: 32, now: now, leaseUntil: now + configuration.claimLease.milliseconds)
            } catch {
                if !(error is StoreUnavailable) { logger.warning("claiming Live Activities failed; trying again", metadata: ["error": "\(error)"]) }
                await wake.wait(timeout: .seconds(1))
                continue
            }
            if claimed.isEmpty {
                await wake.wait(timeout: configuration.pollInterval)
                continue
            }
            await withDiscardingTaskGroup { group in
                for activity in claimed { group.addTask { await self.work(activity) } }
            }
        }
    }

    // MARK: One activity

    private func work(_ activity: StoredActivity) async {
        let lookup: AppDirectory.Lookup
        do {
            lookup = try await apps.lookup(activity.app)
        } catch {
            return await release(activity, dueIn: .seconds(1))
        }
        let entry: AppDirectory.Entry
        switch lookup {
        case .found(let found): entry = found
        case .deleted: return
        case .unusable(let app, let why, let version):
            await pause(activity.app, version, app, AppFailure(
                reason: "the app's credentials cannot be used: \(why)", advice: "PATCH /v1/apps/\(activity.app) with credentials that load"))
            return await release(activity, dueIn: .seconds(1))
        }
        if entry.pausedReason != nil { return await release(activity, dueIn: .seconds(1)) }
        if let start = activity.startPending, activity.state.isOpen {
            await sendStart(start, of: activity, entry: entry)
        } else if let content = activity.pending {
            await sendUpdate(content, of: activity, entry: entry)
        } else if !activity.state.isOpen, let channel = activity.channelID, !activity.channelDeleted {
            await deleteChannel(channel, of: activity, entry: entry)
        } else {
            await release(activity, dueIn: nil)
        }
    }

    /// Gives the claim back, due again after `delay` (or when its own work says).
    private func release(_ activity: StoredActivity, dueIn delay: Duration?) async {
        let now = self.now
        let limits = self.limits
        await change(activity) { row in
            row.dueAt = delay.map { now + $0.milliseconds } ?? row.nextDue(now: now, limits: limits)
        }
    }

    /// Edits the row if this process still holds it (the claim is fenced by its lease), and
    /// ends the claim; what `edit` returns, or `nil` when the claim was lost.
    @discardableResult
    private func change<T: Sendable>(_ activity: StoredActivity, _ edit: @escaping @Sendable (inout StoredActivity) -> T) async -> T? {
        let worker = self.worker
        for attempt in 0..<20 {
            do {
                let held = try await store.changeActivity(app: activity.app, id: activity.id) { row -> T? in
                    guard row.claimedBy == worker, row.leaseUntil == activity.leaseUntil else { return nil }
                    let result = edit(&row)
                    row.claimedBy = nil
                    row.leaseUntil = nil
                    row.recount()
                    return result
                }
                guard let held, let result = held else {
                    logger.warning("a Live Activity's claim was lost before its outcome was recorded", metadata: ["activity": "\(activity.id)"])
                    return nil
                }
                return result
            } catch {
                if !(error is StoreUnavailable) { logger.warning("recording a Live Activity's send failed; trying again", metadata: ["error": "\(error)"]) }
                try? await Task.sleep(for: .milliseconds(min(100 << attempt, 2_000)))
            }
        }
        return nil
    }

    /// Creates the activity's channel (when it wants one), then sends the start to every
    /// push-to-start token it has not reached.
    /// A span for one Live Activity push: a trace of its own (the requests that changed the
    /// activity are spans of their callers' traces), named as a notification's attempt.
    private func span(_ activity: StoredActivity, event: String, apnsID: String?) -> Span? {
        guard tracer != nil else { return nil }
        var span = Span("apns.send", kind: .client, parent: nil)
        span.set("herald.app", activity.app)
        span.set("herald.activity.id", activity.id)
        span.set("herald.event", event)
        if let apnsID { span.set("apns-id", apnsID) }
        span.set("herald.attempt", activity.attempts + 1)
        span.set("herald.process", worker)
        return span
    }

    private func sendStart(_ start: ActivityStart, of activity: StoredActivity, entry: AppDirectory.Entry) async {
        let app = entry.app
        var address = ActivityPayload.Address.updateToken
        var createdChannel: String?
        if activity.wantsChannel {
            if let channel = activity.channelID {
                address = .channel(channel)
            } else {
                do {
                    let channel = try await entry.client.createChannel(bundleID: app.bundleID)
                    createdChannel = channel
                    address = .channel(channel)
                } catch {
                    metrics.activitySend(activity.app, "start", "retry")
                    let now = self.now
                    let delay = configuration.retry.delay(afterAttempt: activity.attempts + 1) { Int64.random(in: $0) }
                    await change(activity) { row in
                        row.attempts += 1
                        row.lastReason = "creating its broadcast channel failed: \(error.message)"
                        row.dueAt = now + delay
                    }
                    return
                }
            }
        }
        let timestamp = max(now / 1_000, activity.lastTimestamp ?? 0)
        let body = ActivityPayload.bytes(start.content, activity: activity, timestamp: timestamp, address: address)
        let topic = app.topic(for: .liveactivity)
        let metrics = self.metrics
        let results = await withTaskGroup(of: (String, Result<APNsResponse, APNsClientError>?).self) { group in
            for hex in start.tokens {
                group.addTask {
                    guard let token = try? DeviceToken(hex: hex) else { return (hex, nil) }
                    var headers = APNsRequestHeaders(target: .device(token), pushType: .liveactivity, priority: .immediate, topic: topic)
                    headers.apnsID = try? APNsID(parsing: start.apnsID)
                    let started = ContinuousClock.now
                    var span = self.span(activity, event: "start", apnsID: start.apnsID)
                    let result = await TraceContext.$current.withValue(span?.context) {
                        await entry.client.outcome(of: APNsRequest(headers: headers, body: body), timeout: self.configuration.requestTimeout)
                    }
                    metrics.sent(activity.app, elapsed: ContinuousClock.now - started)
                    span?.note(result)
                    if let span { self.tracer?.finish(span) }
                    return (hex, result)
                }
            }
            var all: [(String, Result<APNsResponse, APNsClientError>?)] = []
            for await result in group { all.append(result) }
            return all
        }
        var remaining: [String] = []
        var accepted = 0
        var failed: [String] = []
        var dead: [String] = []
        var appFailure: AppFailure?
        let now = self.now
        for (hex, result) in results {
            guard let result else {
                failed.append("\(hex.prefix(8))…: not a token")
                continue
            }
            if let failure = AppFailure.of(result, app: app, usesAppTopic: true) {
                appFailure = failure
                remaining.append(hex)
                continue
            }
            switch configuration.retry.outcome(of: result, attempts: activity.attempts + 1, expiresAt: activity.createdAt + limits.active.milliseconds, now: now) {
            case .accepted?: accepted += 1
            case .retry?, nil: remaining.append(hex)
            case .rejected(_, let reason, _, let deadToken)?:
                failed.append("\(hex.prefix(8))…: \(reason ?? "rejected")")
                if deadToken { dead.append(hex) }
            case .expired(let reason)?: failed.append("\(hex.prefix(8))…: \(reason ?? "expired")")
            }
        }
        if accepted > 0 { metrics.activitySend(activity.app, "start", "accepted") }
        if !failed.isEmpty { metrics.activitySend(activity.app, "start", "rejected") }
        if !remaining.isEmpty { metrics.activitySend(activity.app, "start", "retry") }
        for hex in dead { try? await store.deleteStartToken(app: activity.app, token: hex) }
        if let appFailure { await pause(app.id, entry.updatedAt, app, appFailure) }
        let limits = self.limits
        let delay = configuration.retry.delay(afterAttempt: activity.attempts + 1) { Int64.random(in: $0) }
        let (made, acceptedCount, refusals, left, pausedBy) = (createdChannel, accepted, failed, remaining, appFailure)
        await change(activity) { row in
            let (createdChannel, accepted, failed, remaining, appFailure) = (made, acceptedCount, refusals, left, pausedBy)
            if let createdChannel { row.channelID = createdChannel }
            if accepted > 0 {
                row.startedAt = row.startedAt ?? now
                if row.state == .starting { row.state = .active }
                row.lastTimestamp = max(row.lastTimestamp ?? 0, timestamp)
                row.lastContent = start.content.contentState?.compactText
                row.lastSentAt = now
                row.lastStatus = 200
            }
            if !failed.isEmpty {
                row.lastReason = "the start was refused for " + failed.joined(separator: "; ")
            }
            if remaining.isEmpty {
                row.startPending = nil
                row.attempts = 0
                row.dueAt = row.nextDue(now: now, limits: limits)
            } else {
                row.startPending?.tokens = remaining
                row.attempts += 1
                row.dueAt = appFailure != nil ? now + 1_000 : now + delay
            }
        }
    }

    /// Sends the newest update or end to the activity's update token, or to its channel.
    private func sendUpdate(_ content: ActivityContent, of activity: StoredActivity, entry: AppDirectory.Entry) async {
        let now = self.now
        let limits = self.limits
        let seq = activity.pendingSeq
        let event = content.event.rawValue
        guard activity.canSendUpdates else {
            // Still no update token: wait (the report sets it due), or drop after the wait.
            let deadline = (activity.pendingSince ?? now) + limits.tokenWait.milliseconds
            if now >= deadline { metrics.activitySend(activity.app, event, "dropped") }
            await change(activity) { row in
                if now >= deadline, row.pendingSeq == seq, !row.canSendUpdates {
                    row.pending = nil
                    row.failures += 1
                    row.lastReason = "no update token was reported within \(limits.tokenWait): the \(event) was dropped (the app reports its activity's token to POST /v1/apps/\(row.app)/activities/\(row.id)/tokens)"
                }
                row.dueAt = row.nextDue(now: now, limits: limits)
            }
            return
        }
        let app = entry.app
        let timestamp = max(now / 1_000, activity.lastTimestamp ?? 0)
        let body = ActivityPayload.bytes(content, activity: activity, timestamp: timestamp)
        let priority: PushPriority = content.priority == 10 ? .immediate : .conservePower
        let usedToken = activity.updateToken
        var headers: APNsRequestHeaders
        if let channel = activity.channelID {
            headers = APNsRequestHeaders(target: .broadcast(bundleID: app.bundleID), pushType: .liveactivity, priority: priority, channelID: channel)
        } else {
            guard let hex = usedToken, let token = try? DeviceToken(hex: hex) else { return await release(activity, dueIn: nil) }
            headers = APNsRequestHeaders(target: .device(token), pushType: .liveactivity, priority: priority, topic: app.topic(for: .liveactivity))
            headers.apnsID = activity.pendingAPNsID.flatMap { try? APNsID(parsing: $0) }
        }
        let started = ContinuousClock.now
        var span = self.span(activity, event: event, apnsID: activity.channelID == nil ? activity.pendingAPNsID : nil)
        if let channel = activity.channelID { span?.set("apns.channel-id", channel) }
        let result = await TraceContext.$current.withValue(span?.context) {
            await entry.client.outcome(of: APNsRequest(headers: headers, body: body), timeout: configuration.requestTimeout)
        }
        metrics.sent(activity.app, elapsed: ContinuousClock.now - started)
        span?.note(result)
        if let span { tracer?.finish(span) }
        let after = self.now
        if let failure = AppFailure.of(result, app: app, usesAppTopic: true) {
            await pause(app.id, entry.updatedAt, app, failure)
            return await release(activity, dueIn: .seconds(1))
        }
        let outcome = configuration.retry.outcome(of: result, attempts: activity.attempts + 1, expiresAt: activity.createdAt + limits.active.milliseconds, now: after)
        let contentText = content.contentState?.compactText
        let highPriority = content.priority == 10
        var metricResult = "retry"
        switch outcome {
        case .accepted?: metricResult = "accepted"
        case .rejected?, .expired?: metricResult = "rejected"
        case .retry?, nil: metricResult = "retry"
        }
        metrics.activitySend(activity.app, event, metricResult)
        if case .accepted? = outcome, highPriority { metrics.activityPriority10(activity.app) }
        let channelOpen = activity.channelID != nil
        let recorded = await change(activity) { row -> Bool in
            let supersededBefore = row.superseded
            let newer = row.pendingSeq != seq
            switch outcome {
            case .accepted?:
                row.sentSeq = max(row.sentSeq, seq)
                row.sends += 1
                row.lastContent = contentText ?? row.lastContent
                row.lastTimestamp = max(row.lastTimestamp ?? 0, timestamp)
                row.lastSentAt = after
                row.lastStatus = 200
                row.lastReason = nil
                if highPriority {
                    let hour = after / 3_600_000 * 3_600_000
                    row.priority10Count = row.priority10Hour == hour ? row.priority10Count + 1 : 1
                    row.priority10Hour = hour
                }
                if !newer {
                    row.pending = nil
                    row.pendingAPNsID = nil
                }
                row.attempts = 0
            case .retry?, nil:
                if newer {
                    row.attempts = 0
                } else {
                    row.attempts += 1
                    if case .retry(let at, let reason)? = outcome {
                        row.lastReason = "\(event) will be tried again: \(reason ?? "no answer")"
                        row.dueAt = at
                    }
                }
            case .rejected(let status, let reason, _, let deadToken)?:
                if !channelOpen, row.updateToken != usedToken, !newer {
                    // The token was replaced while this was in flight: it goes to the new one.
                    break
                }
                row.lastStatus = status
                row.lastReason = "the \(event) was refused: \(reason ?? "rejected")"
                if deadToken, row.updateToken == usedToken { row.updateToken = nil }
                if !newer {
                    row.failures += 1
                    row.pending = nil
                }
                row.attempts = 0
            case .expired(let reason)?:
                row.lastReason = "the \(event) expired: \(reason ?? "past its time")"
                if !newer {
                    row.failures += 1
                    row.pending = nil
                }
            }
            if case .retry? = outcome, !newer {
                // Due at the retry's time, set above.
            } else {
                row.dueAt = row.nextDue(now: after, limits: limits)
            }
            row.recount()
            return row.superseded > supersededBefore
        }
        if recorded == true { metrics.activitySend(activity.app, event, "superseded") }
        if recorded != nil { nudge() }
    }

    /// Deletes the channel of an activity that ended or expired.
    private func deleteChannel(_ channel: String, of activity: StoredActivity, entry: AppDirectory.Entry) async {
        var reason: String?
        do {
            try await entry.client.deleteChannel(channel, bundleID: entry.app.bundleID)
        } catch {
            // Gone already is what was wanted.
            if error.reason?.rawValue != "ChannelNotRegistered" && error.status != 404 { reason = error.message }
        }
        let now = self.now
        let delay = configuration.retry.delay(afterAttempt: activity.attempts + 1) { Int64.random(in: $0) }
        let failure = reason
        await change(activity) { row in
            if let reason = failure {
                row.attempts += 1
                row.lastReason = "deleting its channel failed: \(reason)"
                row.dueAt = row.attempts < 10 ? now + delay : nil
            } else {
                row.channelDeleted = true
                row.attempts = 0
                row.dueAt = nil
            }
        }
    }
}

extension StoredActivity {
    /// When this activity next has something to do, from what its row holds now.
    func nextDue(now: Int64, limits: LiveActivityLimits) -> Int64? {
        if startPending != nil, state.isOpen { return now }
        if pending != nil {
            return canSendUpdates ? now : (pendingSince ?? now) + limits.tokenWait.milliseconds
        }
        if !state.isOpen, channelID != nil, !channelDeleted { return now }
        return nil
    }
}
