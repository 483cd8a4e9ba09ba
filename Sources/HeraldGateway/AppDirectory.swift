import HeraldAsync
import HeraldClient
import HeraldJSON
import Logging
import Synchronization

/// The apps the dispatcher sends for: each app's definition, client and rate limiter, made on
/// first use and kept.
///
/// A lookup the database could not answer throws, and is not kept: only an app the database
/// says is not there is ``Lookup/deleted``.
final class AppDirectory: Sendable {
    struct Entry: Sendable {
        var app: GatewayApp
        var client: APNsClient
        var limiter: RateLimiter?
    }

    enum Lookup: Sendable {
        case found(Entry)
        /// The database has no such app (it was deleted).
        case deleted
        /// The app is there but its credentials cannot be used (why).
        case unusable(String)
    }

    private let store: any GatewayStore
    private let requestTimeout: Duration
    private let entries = Mutex<[String: Task<Lookup, any Error>]>([:])
    private let logger: Logger
    private let metrics: GatewayMetrics

    init(store: any GatewayStore, requestTimeout: Duration, logger: Logger, metrics: GatewayMetrics) {
        self.store = store
        self.requestTimeout = requestTimeout
        self.logger = logger
        self.metrics = metrics
    }

    func lookup(_ id: String) async throws -> Lookup {
        let task = entries.withLock { entries in
            if let task = entries[id] { return task }
            let task = Task { [store, requestTimeout, logger, metrics] () throws -> Lookup in
                guard let stored = try await store.app(id: id) else { return .deleted }
                do {
                    let document = try JSONDocument(parsing: Array(stored.definition.utf8))
                    let app = try GatewayApp(json: document.root)
                    var configuration = try app.clientConfiguration(requestTimeout: requestTimeout)
                    var clientLogger = logger
                    clientLogger[metadataKey: "app"] = "\(id)"
                    configuration.logger = clientLogger
                    configuration.metricsFactory = metrics.clientFactory
                    configuration.metricsPrefix = "herald_gateway_apns"
                    let client = try APNsClient(configuration: configuration)
                    return .found(Entry(app: app, client: client, limiter: app.rateLimit.map(RateLimiter.init)))
                } catch {
                    logger.error("cannot send for an app", metadata: ["app": "\(id)", "error": "\(error)"])
                    return .unusable("\(error)")
                }
            }
            entries[id] = task
            return task
        }
        do {
            let lookup = try await task.value
            if case .found = lookup { return lookup }
            // Not kept: the app may be added (again) later.
            entries.withLock { if $0[id] == task { $0[id] = nil } }
            return lookup
        } catch {
            entries.withLock { if $0[id] == task { $0[id] = nil } }
            throw error
        }
    }

    /// The app's entry if it can be sent for now, else `nil` (a webhook finds no app).
    func entry(_ id: String) async throws -> Entry? {
        if case .found(let entry) = try await lookup(id) { return entry }
        return nil
    }

    /// Forgets an app (deleted): its client is shut down.
    func forget(_ id: String) async {
        let task = entries.withLock { $0.removeValue(forKey: id) }
        if case .found(let entry)? = try? await task?.value { await entry.client.shutdown() }
    }

    func shutdown() async {
        let tasks = entries.withLock { entries in
            defer { entries.removeAll() }
            return Array(entries.values)
        }
        for task in tasks {
            if case .found(let entry)? = try? await task.value { await entry.client.shutdown() }
        }
    }
}

/// Jobs' requests (headers and payload, immutable), fetched once and kept for the newest
/// thousand jobs. A fetch the database could not answer throws and is not kept.
final class JobCache: Sendable {
    struct Content: Sendable {
        var request: APNsRequest
        var expiresAt: Int64
    }

    private let store: any GatewayStore
    private let entries = Mutex<(tasks: [String: Task<Content?, any Error>], order: [String])>(([:], []))

    init(store: any GatewayStore) { self.store = store }

    /// The job's request, or `nil` when the database has no such job (deleted with its app).
    func content(_ id: String) async throws -> Content? {
        let task = entries.withLock { entries in
            if let task = entries.tasks[id] { return task }
            let task = Task { [store] () throws -> Content? in
                guard let job = try await store.jobContent(id: id) else { return nil }
                return Content(request: APNsRequest(headers: Submission.headers(fromJSON: job.headers), body: job.payload), expiresAt: job.expiresAt)
            }
            entries.tasks[id] = task
            entries.order.append(id)
            if entries.order.count > 1_000 { entries.tasks[entries.order.removeFirst()] = nil }
            return task
        }
        do {
            return try await task.value
        } catch {
            entries.withLock { entries in
                if entries.tasks[id] == task {
                    entries.tasks[id] = nil
                    entries.order.removeAll { $0 == id }
                }
            }
            throw error
        }
    }
}
