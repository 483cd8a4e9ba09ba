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

    // MARK: Apps and keys

    /// Adds an app; `false` when one has the id.
    func insertApp(_ app: StoredApp) async throws -> Bool
    func app(id: String) async throws -> StoredApp?
    func apps() async throws -> [StoredApp]
    /// Removes an app with its devices, jobs, deliveries and webhook events.
    func deleteApp(id: String) async throws -> Bool

    func insertKey(_ key: StoredKey) async throws
    func key(hash: String) async throws -> StoredKey?
    func keys() async throws -> [StoredKey]
    func deleteKey(id: String) async throws -> Bool

    // MARK: Devices

    /// Registers tokens as active (a dead token registered again is active again), with tags.
    func upsertDevices(app: String, tokens: [DeviceToken], tags: [String], now: Int64) async throws
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
    /// Gives back deliveries `worker` holds and did not send (graceful shutdown).
    func release(worker: String, ids: [Int64], now: Int64) async throws
    /// How many deliveries wait (queued or claimed), and how many of them are due.
    func queueDepth(now: Int64) async throws -> (waiting: Int, due: Int)

    // MARK: Webhooks

    /// Claims webhook events that are due, as ``claim(worker:limit:now:leaseUntil:)`` does.
    func claimWebhooks(worker: String, limit: Int, now: Int64, leaseUntil: Int64) async throws -> [WebhookEvent]
    /// Marks a webhook event sent, or due again at `retryAt`, or failed for good (`retryAt` nil
    /// and `failed`).
    func finishWebhook(id: Int64, sent: Bool, retryAt: Int64?, error: String?, now: Int64) async throws
}

/// An app as stored: its settings (with credentials) as JSON.
struct StoredApp: Sendable, Equatable {
    var id: String
    var definition: String
    var createdAt: Int64
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
    var counts: [DeliveryState: Int]
}

struct JobContent: Sendable {
    var id: String
    var app: String
    var headers: String
    var payload: [UInt8]
    var expiresAt: Int64
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
    }

    var delivery: ClaimedDelivery
    var result: Result
    /// Webhook events this outcome raises (JSON bodies), stored with it.
    var webhooks: [String] = []
}

struct WebhookEvent: Sendable, Equatable {
    var id: Int64
    var app: String
    var body: String
    var attempts: Int
}
