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
protocol GatewayStore: DatabaseConnectivity {
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

    /// Registers tokens as active (a dead token registered again is active again); `tags`
    /// replaces, adds or removes their tags.
    func upsertDevices(app: String, tokens: [DeviceToken], tags: DeviceTags, now: Int64) async throws
    /// Devices of an app in token order after `after`, optionally only one state or tag.
    func devices(app: String, state: DeviceState?, tag: String?, after: String?, limit: Int) async throws -> [StoredDevice]
    func deleteDevice(app: String, token: DeviceToken) async throws -> Bool
    /// The active tokens of an app (with `tag`, only those tagged so): a stored audience.
    func audience(app: String, tag: String?) async throws -> [DeviceToken]

    // MARK: Notifications

    /// Stores a job and a delivery per token (tokens known dead are recorded as skipped), unless
    /// the app has a job with the same idempotency key: then that job, or a conflict when the
    /// request differs.
    func submit(_ job: NewJob) async throws -> SubmitResult
    /// A job with its deliveries counted by state.
    func job(app: String, id: String) async throws -> JobSummary?
    /// An app's jobs, newest first (by creation, then id), after the cursor `before`; only those
    /// of `status`, created from `from` until before `until` (Unix milliseconds). Without counts.
    func jobs(app: String, status: JobStatus?, from: Int64?, until: Int64?, before: JobCursor?, limit: Int) async throws -> [JobSummary]
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
    /// and `failed`).
    func finishWebhook(id: Int64, sent: Bool, retryAt: Int64?, error: String?, now: Int64) async throws

    // MARK: Retention

    /// Deletes, in one short transaction, at most `batch` rows of what is older than the
    /// retention: deliveries of jobs finished before `before` (then the jobs left without
    /// deliveries), and webhook events sent or failed before it. Devices (dead tokens included:
    /// they are the registry) and unfinished jobs are never pruned. What was deleted; `more`
    /// when another call would find more.
    func prune(before: Int64, batch: Int) async throws -> Pruned
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
    /// Whether more is left to prune.
    var more = false
}

/// Where a job stands.
enum JobStatus: String, Sendable, CaseIterable {
    /// Some deliveries wait (queued or claimed).
    case sending
    /// Every delivery is final.
    case done
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
    /// Each token with its apns-id, in order.
    var tokens: [(token: String, apnsID: String)]
    var now: Int64
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
    case queued, claimed, accepted, rejected, expired, skipped
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

    var status: JobStatus { open == 0 ? .done : .sending }
}

struct JobContent: Sendable {
    var id: String
    var app: String
    var headers: String
    var payload: [UInt8]
    var expiresAt: Int64
    var metadata: String? = nil
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
}

/// A delivery a worker holds.
struct ClaimedDelivery: Sendable, Equatable {
    var id: Int64
    var job: String
    var app: String
    var token: String
    var apnsID: String
    /// Attempts made so far, this one included.
    var attempts: Int
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

        /// Whether the delivery ends here (every result but a retry).
        var isFinal: Bool {
            if case .retry = self { return false }
            return true
        }
    }

    var delivery: ClaimedDelivery
    var result: Result
    /// Webhook events this outcome raises (JSON bodies), stored with it.
    var webhooks: [String] = []
    /// The app's webhook wants `job.done`: stored when this outcome ends the job.
    var doneWebhook: Bool = false
}

struct WebhookEvent: Sendable, Equatable {
    var id: Int64
    var app: String
    var body: String
    var attempts: Int
}
