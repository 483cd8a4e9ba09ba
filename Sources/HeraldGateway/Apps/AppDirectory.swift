import HeraldAsync
import HeraldClient
import HeraldJSON
import Logging
import Synchronization

/// The apps the dispatcher sends for: each app's definition, client, rate limiter and pause,
/// made on first use and kept while the app's row is unchanged.
///
/// An app changes in place (`PATCH`): a lookup at most ``refreshInterval`` after the change, in
/// any process, sees the new `updated_at` and makes a new client; the old one is retired (it
/// takes no new requests, finishes those in flight with the credentials they started with, and
/// shuts down in the background, awaited by ``shutdown()``). A pause is read with the row too.
///
/// A lookup the database could not answer throws, and is not kept: only an app the database
/// says is not there is ``Lookup/deleted``.
final class AppDirectory: Sendable {
    struct Entry: Sendable {
        var app: GatewayApp
        var client: APNsClient
        var limiter: RateLimiter?
        /// The row's version this entry was made from.
        var updatedAt: Int64
        /// Whether its deliveries may go to the client now (paused, proven).
        var gate: AppGate

        /// Why the app is paused, when it is.
        var pausedReason: String? { gate.pausedReason }

        /// Whether the app's webhook wants `job.done`.
        var wantsJobDone: Bool { app.webhook?.events.contains(.jobDone) ?? false }
    }

    enum Lookup: Sendable {
        case found(Entry)
        /// The database has no such app (it was deleted).
        case deleted
        /// The app is there but cannot be sent for (why): its definition no longer reads, or
        /// its credentials cannot be loaded; the row's version.
        case unusable(GatewayApp?, String, version: Int64)
    }

    /// How long a kept entry is used before the app's row is read again (a change made by
    /// another process is seen within this).
    static let refreshInterval: Duration = .seconds(2)

    private struct Cached {
        var task: Task<Lookup, any Error>
        var checkedAt: ContinuousClock.Instant
    }

    private let store: any GatewayStore
    private let requestTimeout: Duration
    private let entries = Mutex<[String: Cached]>([:])
    /// Clients replaced or forgotten, shutting down (each ends once its requests have).
    private let retiring = Mutex<[Int: Task<Void, Never>]>([:])
    private let retiringCount = Atomic<Int>(0)
    private let logger: Logger
    private let metrics: GatewayMetrics

    init(store: any GatewayStore, requestTimeout: Duration, logger: Logger, metrics: GatewayMetrics) {
        self.store = store
        self.requestTimeout = requestTimeout
        self.logger = logger
        self.metrics = metrics
    }

    func lookup(_ id: String) async throws -> Lookup {
        let now = ContinuousClock.now
        let (task, check) = entries.withLock { entries -> (Task<Lookup, any Error>, Task<Lookup, any Error>?) in
            if let cached = entries[id] {
                guard now - cached.checkedAt >= Self.refreshInterval else { return (cached.task, nil) }
                // Due for a look at the row: the kept entry goes on serving meanwhile.
                entries[id]?.checkedAt = now
                return (cached.task, cached.task)
            }
            let task = makeEntry(id, replacing: nil)
            entries[id] = Cached(task: task, checkedAt: now)
            return (task, nil)
        }
        if let check { try await refresh(id, current: check) }
        let current = entries.withLock { $0[id]?.task } ?? task
        do {
            let lookup = try await current.value
            if case .found = lookup { return lookup }
            // Not kept: the app may be added (again) or fixed later.
            entries.withLock { if $0[id]?.task == current { $0[id] = nil } }
            return lookup
        } catch {
            entries.withLock { if $0[id]?.task == current { $0[id] = nil } }
            throw error
        }
    }

    /// Reads the app's row; a new version (or a pause begun or ended) replaces the entry.
    private func refresh(_ id: String, current: Task<Lookup, any Error>) async throws {
        guard case .found(let entry)? = try? await current.value else { return }
        guard let stored = try await store.app(id: id) else {
            entries.withLock { if $0[id]?.task == current { $0[id] = nil } }
            retire(entry.client)
            return
        }
        if stored.updatedAt != entry.updatedAt {
            entries.withLock { entries in
                guard entries[id]?.task == current else { return }
                entries[id] = Cached(task: makeEntry(id, replacing: entry.client, stored: stored), checkedAt: .now)
            }
        } else if stored.pausedReason != entry.pausedReason {
            entry.gate.setPaused(stored.pausedReason)
        }
    }

    /// The task making an entry from the app's row (`stored`, or read now); `replacing`, a
    /// client to retire once the new entry is made.
    private func makeEntry(_ id: String, replacing old: APNsClient?, stored given: StoredApp? = nil) -> Task<Lookup, any Error> {
        Task { [store, requestTimeout, logger, metrics] () throws -> Lookup in
            defer { if let old { self.retire(old) } }
            let read: StoredApp?
            if let given { read = given } else { read = try await store.app(id: id) }
            guard let stored = read else { return .deleted }
            let app: GatewayApp
            do {
                let document = try JSONDocument(parsing: Array(stored.definition.utf8))
                app = try GatewayApp(json: document.root)
            } catch {
                return .unusable(nil, "the stored definition does not read: \(error)", version: stored.updatedAt)
            }
            do {
                var configuration = try app.clientConfiguration(requestTimeout: requestTimeout)
                var clientLogger = logger
                clientLogger[metadataKey: "app"] = "\(id)"
                configuration.logger = clientLogger
                configuration.metricsFactory = metrics.clientFactory(app: id)
                configuration.metricsPrefix = "herald_gateway_apns"
                let client = try APNsClient(configuration: configuration)
                return .found(Entry(
                    app: app, client: client, limiter: app.rateLimit.map(RateLimiter.init), updatedAt: stored.updatedAt,
                    gate: AppGate(probes: configuration.maximumConnections, paused: stored.pausedReason)))
            } catch {
                return .unusable(app, "\(error)", version: stored.updatedAt)
            }
        }
    }

    /// Marks the kept entry of the app's `version` paused (`reason`) or not (`nil`): what this
    /// process learnt before the next refresh. An entry of another version is left alone.
    func setPaused(_ id: String, version: Int64, reason: String?) async {
        guard let task = entries.withLock({ $0[id]?.task }) else { return }
        if case .found(let entry)? = try? await task.value, entry.updatedAt == version { entry.gate.setPaused(reason) }
    }

    /// The app's entry if it can be sent for now, else `nil` (a webhook finds no app).
    func entry(_ id: String) async throws -> Entry? {
        if case .found(let entry) = try await lookup(id) { return entry }
        return nil
    }

    /// The app's definition, whether or not it can be sent for (webhooks of an app whose
    /// credentials fail still go out); `nil` when there is no such app.
    func definition(_ id: String) async throws -> GatewayApp? {
        switch try await lookup(id) {
        case .found(let entry): return entry.app
        case .unusable(let app, _, _): return app
        case .deleted: return nil
        }
    }

    /// How this process's APNs connections for `id` stand now: `nil` when it has not sent for
    /// the app yet (no client made), or the app cannot be sent for.
    func connectionStatus(_ id: String) async -> APNsClient.ConnectionStatus? {
        guard let cached = entries.withLock({ $0[id] }), case .found(let entry)? = try? await cached.task.value else { return nil }
        return entry.client.connectionStatus
    }

    /// Forgets an app (changed or deleted here): the next lookup reads its row. Its client
    /// finishes what it has in flight and shuts down in the background.
    func forget(_ id: String) {
        guard let cached = entries.withLock({ $0.removeValue(forKey: id) }) else { return }
        retire { if case .found(let entry)? = try? await cached.task.value { return entry.client } else { return nil } }
    }

    /// Shuts `client` down in the background (its requests in flight end first).
    private func retire(_ client: APNsClient) {
        retire { client }
    }

    /// Shuts down, in the background, the client `client` gives (if any); the task is kept
    /// until it ends, for ``shutdown()`` to await.
    private func retire(_ client: @escaping @Sendable () async -> APNsClient?) {
        let key = retiringCount.add(1, ordering: .relaxed).newValue
        retiring.withLock { tasks in
            // Made under the lock: its own removal waits until it is in the table.
            tasks[key] = Task {
                await client()?.shutdown()
                _ = self.retiring.withLock { $0.removeValue(forKey: key) }
            }
        }
    }

    /// Pauses the app (once, whichever process sees it first): its deliveries and activities
    /// are claimed no more until a PATCH of its credentials or `POST …/resume`. Says so once,
    /// with the fix, and raises `app.paused`.
    func pause(_ id: String, version: Int64, app: GatewayApp?, failure: AppFailure, now: Int64) async {
        await setPaused(id, version: version, reason: failure.reason)
        let webhook = app?.webhook.flatMap { $0.events.contains(.appPaused) ? WebhookEvents.appPaused(app: id, reason: failure.reason, advice: failure.advice, now: now) : nil }
        do {
            if try await store.pauseApp(id: id, version: version, reason: failure.reason, advice: failure.advice, webhook: webhook, now: now) {
                metrics.appPaused(id, true)
                logger.error("an app's sending is paused: its deliveries wait (within their expiration) until it is fixed", metadata: [
                    "app": "\(id)", "reason": "\(failure.reason)", "fix": "\(failure.advice)",
                ])
            }
        } catch {
            if !(error is StoreUnavailable || error is CancellationError) {
                logger.warning("pausing an app failed", metadata: ["app": "\(id)", "error": "\(error)"])
            }
        }
    }

    func shutdown() async {
        let tasks = entries.withLock { entries in
            defer { entries.removeAll() }
            return entries.values.map(\.task)
        }
        for task in tasks {
            if case .found(let entry)? = try? await task.value { await entry.client.shutdown() }
        }
        for task in retiring.withLock({ Array($0.values) }) { await task.value }
    }
}
