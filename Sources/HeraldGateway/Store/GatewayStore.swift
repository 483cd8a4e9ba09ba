import Foundation
import HeraldProtocol

/// Where the gateway keeps everything: apps, API keys, devices, notifications (jobs) and their
/// deliveries, and the webhook outbox. SQLite for one process, PostgreSQL for any number on any
/// number of machines; one contract for both, held by one test suite (`GatewayStoreContractTests`).
///
/// Times are milliseconds since 1970. A submission is acknowledged only after ``submit(_:)``
/// returns, that is after its rows are committed; outcomes are recorded in batches, each in one
/// transaction with the device states and webhook events it implies. Its health (reachability,
/// failures, reconnecting) is its database's, ``DatabaseConnectivity``.
protocol GatewayStore: DatabaseConnectivity, ActivityStore {
    /// Brings the schema to this build's version (versioned migrations, each in a transaction).
    func migrate() async throws

    /// Writes one row of the health table and reads nothing: whether the database takes writes
    /// now (after a full disk).
    func probeWrite() async throws

    // MARK: Apps and keys

    /// Adds an app; `false` when one has the id.
    func insertApp(_ app: StoredApp) async throws -> Bool
    func app(id: String) async throws -> StoredApp?
    func apps() async throws -> [StoredApp]
    /// Replaces an app's definition (its devices, jobs and history stay); with `resume`, a pause
    /// ends too. The app as stored now, or `nil` when there is none.
    func updateApp(id: String, definition: String, resume: Bool, now: Int64) async throws -> StoredApp?
    /// Pauses an app's sending (its deliveries are not claimed until it resumes), with the
    /// webhook event `webhook` stored in the same transaction; `false` when it was paused
    /// already, has changed since `version` (its `updatedAt`: an answer to the old credentials
    /// says nothing of the new), or is not there.
    func pauseApp(id: String, version: Int64, reason: String, advice: String, webhook: String?, now: Int64) async throws -> Bool
    /// Ends a pause; `false` when the app was not paused (or is not there).
    func resumeApp(id: String, now: Int64) async throws -> Bool
    /// Removes an app with its devices, jobs, deliveries and webhook events: how many of each,
    /// or `nil` when there was no such app.
    func deleteApp(id: String) async throws -> AppDeletion?

    func insertKey(_ key: StoredKey) async throws
    func key(hash: String) async throws -> StoredKey?
    func keys() async throws -> [StoredKey]
    func deleteKey(id: String) async throws -> Bool

    // MARK: Devices

    /// Registers tokens as active (a dead token registered again is active again): their tags
    /// replaced, added or removed, and their user, language and zone set (the last registration
    /// wins; what it leaves out stays).
    func upsertDevices(app: String, tokens: [DeviceToken], registration: DeviceRegistration, now: Int64) async throws
    /// Devices of an app in token order after `after`, optionally only one state, tag or user.
    func devices(app: String, filter: DeviceFilter, after: String?, limit: Int) async throws -> [StoredDevice]
    func deleteDevice(app: String, token: DeviceToken) async throws -> Bool
    /// Erases a user: its devices, and every stored copy of its id and tokens (deliveries keep
    /// their outcome without the token; those still queued are cancelled; webhook events that
    /// name a token are deleted). `nil` when the app has no device of that user.
    func eraseUser(app: String, user: String, now: Int64) async throws -> UserErasure?
    /// How many of an app's active devices an audience holds (a submission's size before it is
    /// stored).
    func audienceSize(app: String, audience: JobAudience) async throws -> Int

    // MARK: Notifications

    /// Stores a job and a delivery per token (tokens known dead are recorded as skipped), unless
    /// the app has a job with the same idempotency key: then that job, or a conflict when the
    /// request differs.
    func submit(_ job: NewJob) async throws -> SubmitResult
    /// A job with its deliveries counted by state.
    func job(app: String, id: String) async throws -> JobSummary?
    /// Cancels what of a job is not yet handed to APNs (its queued deliveries; those claimed
    /// finish), with `delivery.cancelled` events when `webhook`; the job's counts after, or `nil`
    /// when there is no such job. Again on a cancelled job: nothing more to cancel.
    func cancel(app: String, job: String, webhook: (@Sendable (StoredDelivery) -> String)?, now: Int64) async throws -> JobSummary?
    /// An app's jobs, newest first (by creation, then id), after the cursor `before`; only those
    /// of `status` at `now`, created from `from` until before `until` (Unix milliseconds).
    /// Without counts.
    func jobs(app: String, status: JobStatus?, now: Int64, from: Int64?, until: Int64?, before: JobCursor?, limit: Int) async throws -> [JobSummary]
    /// A job's deliveries in id order after `after`.
    func deliveries(job: String, state: DeliveryState?, after: Int64?, limit: Int) async throws -> [StoredDelivery]
    /// The job's request (headers and payload), for sending.
    func jobContent(id: String) async throws -> JobContent?

    // MARK: Dispatch

    /// Claims up to `limit` deliveries that are due for `worker` until `leaseUntil`: queued and
    /// due, and (with `takeOver`) claimed by another worker whose lease ran out. Rows other
    /// workers hold are skipped; a worker never takes over its own claims (it holds them, or
    /// gives them back).
    func claim(worker: String, limit: Int, now: Int64, leaseUntil: Int64, takeOver: Bool) async throws -> [ClaimedDelivery]
    /// Records outcomes of deliveries `worker` holds (in one transaction): final states, new due
    /// times for retries, dead devices, webhook events. Rows no longer held by `worker` (its
    /// lease ran out and another took them) are left alone.
    func record(_ outcomes: [DeliveryOutcome], worker: String, now: Int64) async throws
    /// Extends to `until` the lease on the deliveries `ids` that `worker` still holds (a live
    /// process keeps what it holds, however long the sends wait for the app's rate, even when
    /// the lease ran out while the database was unreachable, unless another worker took them
    /// over meanwhile); returns the ids extended. Those missing are no longer this worker's.
    func extendLeases(worker: String, ids: [Int64], until: Int64, now: Int64) async throws -> Set<Int64>
    /// Which of `ids` are still in the database (the others were deleted with their app).
    func existingDeliveries(ids: [Int64]) async throws -> Set<Int64>
    /// Gives back deliveries `worker` holds and did not send (graceful shutdown, a paused app),
    /// due at `now`; `reason`, when given, says why they wait.
    func release(worker: String, ids: [Int64], reason: String?, now: Int64) async throws
    /// How many deliveries wait (queued or claimed), and how many of them are due.
    func queueDepth(now: Int64) async throws -> (waiting: Int, due: Int)

    // MARK: Webhooks

    /// Claims webhook events that are due, as ``claim(worker:limit:now:leaseUntil:)`` does.
    func claimWebhooks(worker: String, limit: Int, now: Int64, leaseUntil: Int64) async throws -> [WebhookEvent]
    /// Marks a webhook event sent, or due again at `retryAt`, or failed for good (`retryAt` nil
    /// and `failed`), with what the attempt got.
    func finishWebhook(id: Int64, sent: Bool, retryAt: Int64?, error: String?, attempt: WebhookAttempt?, now: Int64) async throws
    /// An app's webhook events, newest first (ids below `before`).
    func webhookEvents(app: String, before: Int64?, limit: Int) async throws -> [StoredWebhookEvent]

    // MARK: Retention

    /// Deletes, in one short transaction, at most `batch` rows of what is older than the
    /// retention: deliveries of jobs finished before `before` (then the jobs left without
    /// deliveries), and webhook events sent or failed before it. Devices (dead tokens included:
    /// they are the registry) and unfinished jobs are never pruned. What was deleted; `more`
    /// when another call would find more.
    func prune(before: Int64, batch: Int) async throws -> Pruned
}

/// What a registration says of its devices besides their tokens.
struct DeviceRegistration: Sendable, Equatable {
    var tags = DeviceTags(replace: nil)
    /// The sender's own id for the person the devices belong to.
    var user: String?
    /// The device's preferred language (BCP 47).
    var language: String?
    /// The device's time zone (an IANA name).
    var timeZone: String?
}

extension GatewayStore {
    /// Registers tokens with `tags` (nothing else said of them).
    func upsertDevices(app: String, tokens: [DeviceToken], tags: DeviceTags, now: Int64) async throws {
        try await upsertDevices(app: app, tokens: tokens, registration: DeviceRegistration(tags: tags), now: now)
    }
}

/// What ``GatewayStore/eraseUser(app:user:now:)`` removed or emptied.
struct UserErasure: Sendable, Equatable {
    var devices: Int
    /// Deliveries whose token was erased (their outcome is kept).
    var deliveries: Int
    /// Queued deliveries to its tokens, cancelled.
    var cancelled: Int
    var webhookEvents: Int
    /// Its push-to-start tokens, deleted; its Live Activities, which no longer name it.
    var startTokens = 0
    var activities = 0
}

/// Who a job goes to.
enum JobAudience: Sendable {
    /// These tokens, each with its apns-id, in order.
    case tokens([(token: String, apnsID: String)])
    /// Every active device of the app.
    case all
    /// The active devices with this tag.
    case tag(String)
    /// The active devices of these users.
    case users([String])
}

/// A job's content in one of the languages it was given in.
struct JobVariant: Sendable, Equatable {
    /// 1, 2, …: 0 is the job's own payload.
    var index: Int
    var language: String
    var payload: [UInt8]
}

/// What ``GatewayStore/deleteApp(id:)`` removed.
struct AppDeletion: Sendable, Equatable {
    var devices: Int
    var notifications: Int
    var deliveries: Int
    var webhookEvents: Int
}

/// What one ``GatewayStore/prune(before:batch:)`` deleted.
struct Pruned: Sendable, Equatable {
    var jobs = 0
    var deliveries = 0
    var webhookEvents = 0
    /// Live Activities ended or expired before the cutoff, with nothing left to send.
    var activities = 0
    /// Whether more is left to prune.
    var more = false
}

/// Where a job stands.
enum JobStatus: String, Sendable, CaseIterable {
    /// Not due yet: nothing of it was claimed, and its first deliveries are due later.
    case scheduled
    /// Some deliveries wait (queued or claimed).
    case sending
    /// Every delivery is final.
    case done
    /// Cancelled: what was not handed to APNs was not sent.
    case cancelled
}

/// Where a page of jobs ends: the last job's creation time and id.
struct JobCursor: Sendable, Equatable {
    var createdAt: Int64
    var id: String

    /// `createdAt.id`, as the API gives it.
    var token: String { "\(createdAt).\(id)" }

    init(createdAt: Int64, id: String) {
        self.createdAt = createdAt
        self.id = id
    }

    init?(token: String) {
        // By bytes: a "." followed by a combining mark is one Character, still the separator.
        let bytes = Array(token.utf8)
        guard let dot = bytes.firstIndex(of: UInt8(ascii: ".")), let time = Int64(String(decoding: bytes[..<dot], as: UTF8.self)) else { return nil }
        createdAt = time
        id = String(decoding: bytes[(dot + 1)...], as: UTF8.self)
        guard !id.isEmpty else { return nil }
    }
}

/// An app as stored: its settings (with credentials) as JSON, and whether it is paused.
struct StoredApp: Sendable, Equatable {
    var id: String
    var definition: String
    var createdAt: Int64
    /// When the definition last changed (creation, a PATCH).
    var updatedAt: Int64
    /// Since when its sending is paused, and why (`nil`: it sends).
    var pausedAt: Int64? = nil
    var pausedReason: String? = nil
    /// What to do about it.
    var pausedAdvice: String? = nil
}

/// An API key as stored: never the key, only its SHA-256.
struct StoredKey: Sendable, Equatable {
    var id: String
    var hash: String
    var name: String
    /// `nil`: every app, and the administration routes.
    var apps: [String]?
    var createdAt: Int64
}

/// How a registration changes devices' tags: `replace` sets them (a new device gets these),
/// else they stay; then `add` and `remove` edit them.
struct DeviceTags: Sendable, Equatable, ExpressibleByArrayLiteral {
    var replace: [String]?
    var add: [String] = []
    var remove: [String] = []

    init(replace: [String]? = nil, add: [String] = [], remove: [String] = []) {
        self.replace = replace
        self.add = add
        self.remove = remove
    }

    /// Tags that replace the devices' own.
    init(arrayLiteral tags: String...) { replace = tags }
}

enum DeviceState: String, Sendable, CaseIterable {
    case active, dead
}

struct StoredDevice: Sendable, Equatable {
    var token: String
    var state: DeviceState
    var tags: [String]
    /// Why it is dead (`Unregistered`, `BadDeviceToken`).
    var reason: String?
    /// When APNs last knew it valid (a 410's timestamp) or it was found bad.
    var deadAt: Int64?
    var updatedAt: Int64
    var user: String? = nil
    var language: String? = nil
    var timeZone: String? = nil
}

/// A submission, ready to store.
struct NewJob: Sendable {
    var id: String
    var app: String
    var idempotencyKey: String?
    /// A digest of the request, to tell a retried submission from a different one with the same key.
    var requestHash: String
    var headers: String
    var payload: [UInt8]
    /// When retrying stops (the notification's expiration, or the retry window).
    var expiresAt: Int64
    /// Who it goes to.
    var audience: JobAudience
    var now: Int64
    /// The payload in other languages; which a device gets is `variant(language)`.
    var variants: [JobVariant] = []
    /// The variant for a device language (0: the job's own payload).
    var variant: @Sendable (String) -> Int = { _ in 0 }
    /// When a device of a zone is due (`nil`: a device without one); without a schedule,
    /// `now` for every device.
    var dueAt: @Sendable (String?) -> Int64
    /// Whether `dueAt` depends on the zone (a local-time schedule).
    var isLocalSchedule = false
    /// The local time asked for, as given (`2026-12-01T09:00`).
    var localTime: String? = nil
    /// What the audience was, to show (`all`, a tag, how many users; never their ids).
    var audienceDescription: String? = nil
    /// The submission's span (a W3C `traceparent`): its deliveries' attempts are spans under it.
    var traceParent: String? = nil
    /// The sender's own JSON object, given back with the job, its deliveries and its webhooks.
    var metadata: String? = nil
    /// The app's webhook wants `job.done`: stored with the job's last outcome.
    var doneWebhook: Bool = false
}

enum SubmitResult: Sendable {
    case created(JobSummary)
    /// The same request was submitted before with this idempotency key.
    case existing(JobSummary)
    /// The idempotency key was used for a different request.
    case conflict(jobID: String)
}

enum DeliveryState: String, Sendable, CaseIterable {
    case queued, claimed, accepted, rejected, expired, skipped, cancelled

    /// Whether a delivery in this state may still be sent (it holds its job open).
    var isOpen: Bool { self == .queued || self == .claimed }

    /// The column of `jobs` that counts a job's deliveries in this state (schema 9); `nil` for
    /// `queued`, which is the job's open deliveries less its claimed ones.
    var countColumn: String? { self == .queued ? nil : "n_" + rawValue }

    /// The states with a column of their own in `jobs`.
    static let counted = allCases.filter { $0.countColumn != nil }
    static let countedColumns = counted.compactMap(\.countColumn)
}

struct JobSummary: Sendable, Equatable {
    var id: String
    var app: String
    var headers: String
    var expiresAt: Int64
    var tokenCount: Int
    var createdAt: Int64
    /// Deliveries by state (empty in a listing).
    var counts: [DeliveryState: Int]
    /// Deliveries not final yet.
    var open: Int = 0
    /// When the last delivery became final.
    var finishedAt: Int64? = nil
    var metadata: String? = nil
    /// When its deliveries are first due (a schedule), and the local time asked for.
    var sendAt: Int64? = nil
    var localTime: String? = nil
    /// When its first delivery was claimed.
    var startedAt: Int64? = nil
    var cancelledAt: Int64? = nil
    /// Who it went to (`all`, `tag:beta`, `users:3`), and how many users had no active device.
    var audience: String? = nil
    var usersWithoutDevices: Int = 0

    /// Where it stands at `now`.
    func status(at now: Int64) -> JobStatus {
        if cancelledAt != nil { return .cancelled }
        if open == 0 { return .done }
        if startedAt == nil, let sendAt, sendAt > now { return .scheduled }
        return .sending
    }
}

struct JobContent: Sendable {
    var id: String
    var app: String
    var headers: String
    var payload: [UInt8]
    var expiresAt: Int64
    var metadata: String? = nil
    /// The payload in other languages, by variant (1, 2, …).
    var variants: [Int: [UInt8]] = [:]
    /// The submission's span (a W3C `traceparent`), when traces were exported.
    var traceParent: String? = nil
}

struct StoredDelivery: Sendable, Equatable {
    var id: Int64
    var token: String
    var apnsID: String
    var state: DeliveryState
    var attempts: Int
    var status: Int?
    var reason: String?
    var unregisteredAt: Int64?
    var updatedAt: Int64
    /// When a queued delivery is due (a claimed one keeps the time it was due; its lease is
    /// the row's `lease_until`).
    var dueAt: Int64? = nil
    /// Which of the job's payloads it gets (0: the job's own; else a language's).
    var variant: Int = 0
    /// Why its last attempt did not end it (APNs' reason, or the connection's failure), if it
    /// was tried before.
    var lastReason: String? = nil
}

/// A delivery a worker holds. A class: it goes from the claim to its send, its answer and its
/// outcome, and a copy of its five strings at each step cost more than a reference.
final class ClaimedDelivery: Sendable, Equatable {
    let id: Int64
    let job: String
    let app: String
    let token: String
    let apnsID: String
    /// Attempts made so far, this one included.
    let attempts: Int
    /// Which of the job's payloads it gets (0: the job's own; else a language's).
    let variant: Int
    /// Why its last attempt did not end it (APNs' reason, or the connection's failure), if it
    /// was tried before.
    let lastReason: String?

    init(id: Int64, job: String, app: String, token: String, apnsID: String, attempts: Int, variant: Int = 0, lastReason: String? = nil) {
        self.id = id
        self.job = job
        self.app = app
        self.token = token
        self.apnsID = apnsID
        self.attempts = attempts
        self.variant = variant
        self.lastReason = lastReason
    }

    static func == (lhs: ClaimedDelivery, rhs: ClaimedDelivery) -> Bool {
        (lhs.id, lhs.job, lhs.app, lhs.token, lhs.apnsID, lhs.attempts) == (rhs.id, rhs.job, rhs.app, rhs.token, rhs.apnsID, rhs.attempts)
            && lhs.variant == rhs.variant && lhs.lastReason == rhs.lastReason
    }
}

/// What became of one delivery.
struct DeliveryOutcome: Sendable {
    enum Result: Sendable {
        case accepted(status: Int)
        /// Final: APNs refused it. `deadToken` marks the device dead.
        case rejected(status: Int?, reason: String?, unregisteredAt: Int64?, deadToken: Bool)
        /// Not delivered yet: due again at `retryAt`.
        case retry(at: Int64, reason: String?)
        /// No more tries: the notification expired.
        case expired(reason: String?)
    }

    var delivery: ClaimedDelivery
    var result: Result
    /// Webhook events this outcome raises (JSON bodies), stored with it.
    var webhooks: [String] = []
    /// The app's webhook wants `job.done`: stored when this outcome ends the job.
    var doneWebhook: Bool = false
}

/// What one webhook post got: the receiver's status (`nil`: no answer), how long it took, and
/// the answer's first bytes as text.
struct WebhookAttempt: Sendable, Equatable {
    var status: Int?
    var milliseconds: Int64
    var answer: String?
}

/// A webhook event as the console lists it.
struct StoredWebhookEvent: Sendable, Equatable {
    var id: Int64
    var body: String
    var state: String
    var attempts: Int
    var lastError: String?
    var lastAttempt: WebhookAttempt?
    var createdAt: Int64
    var sentAt: Int64?
    var dueAt: Int64
}

struct WebhookEvent: Sendable, Equatable {
    var id: Int64
    var app: String
    var body: String
    var attempts: Int
}

/// The apns-id of a delivery stored without one (an audience expanded in the database): the
/// job's id (a random UUID) with its last 48 bits replaced by the delivery's row id. Unique (the
/// row id is), the same in every process and on every retry, and a canonical lowercase UUID.
enum DeliveryIdentity {
    static func apnsID(stored: String?, job: String, delivery: Int64) -> String {
        if let stored, !stored.isEmpty { return stored }
        let node = String(UInt64(bitPattern: delivery) & 0xFFFF_FFFF_FFFF, radix: 16)
        return String(job.prefix(24)) + String(repeating: "0", count: max(0, 12 - node.count)) + node
    }
}

/// Which devices a listing gives: each condition given must hold.
struct DeviceFilter: Sendable, Equatable {
    var state: DeviceState?
    var tag: String?
    var user: String?
    /// Tokens that start with these (lower-case) hex digits.
    var prefix: String?
    /// Devices that died at or after this time (Unix milliseconds).
    var deadSince: Int64?
}

extension GatewayStore {
    /// Devices by token (after `after`) in a state, with a tag, of a user.
    func devices(app: String, state: DeviceState?, tag: String?, user: String?, after: String?, limit: Int) async throws -> [StoredDevice] {
        try await devices(app: app, filter: DeviceFilter(state: state, tag: tag, user: user), after: after, limit: limit)
    }
}

extension GatewayStore {
    /// ``finishWebhook(id:sent:retryAt:error:attempt:now:)`` with no attempt recorded.
    func finishWebhook(id: Int64, sent: Bool, retryAt: Int64?, error: String?, now: Int64) async throws {
        try await finishWebhook(id: id, sent: sent, retryAt: retryAt, error: error, attempt: nil, now: now)
    }
}
