import Foundation
import HeraldJSON
import HeraldLint
import HeraldProtocol
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// A push gateway: a REST API that takes notifications for many devices, queues them durably,
/// sends them through HeraldClient at APNs' pace, retries what can be retried, marks dead tokens,
/// and keeps every token's outcome. `herald serve` runs it; it is a swift-service-lifecycle
/// `Service` too.
///
/// A submission is acknowledged only once committed; a delivery's outcome is recorded only once
/// APNs answered; a process that dies while holding deliveries loses nothing (its claims run out
/// and another process sends them again, with the same `apns-id`).
public final class GatewayServer: Service, Sendable {
    /// The configuration.
    public let configuration: GatewayConfiguration
    let store: any GatewayStore
    let metrics = GatewayMetrics()
    let apps: AppDirectory
    /// This process's name in claims.
    public let workerName: String
    private let running = Mutex<(api: GatewayAPI.Handle?, dispatcher: Dispatcher?, task: Task<Void, Never>?)>((nil, nil, nil))
    private let accepting = Atomic<Bool>(false)
    private let keyCache = Mutex<[String: (key: StoredKey, until: ContinuousClock.Instant)]>([:])
    /// The administrator key made at first start, when none was configured (shown once).
    public let generatedAdminKey: String?

    private init(configuration: GatewayConfiguration, store: any GatewayStore, workerName: String, generatedAdminKey: String?) {
        self.configuration = configuration
        self.store = store
        self.workerName = workerName
        self.generatedAdminKey = generatedAdminKey
        apps = AppDirectory(store: store, requestTimeout: configuration.requestTimeout, logger: configuration.logger)
    }

    /// Opens the database (creating and migrating it), and makes sure an administrator key exists.
    /// Call ``start()`` to listen and send.
    public static func open(configuration: GatewayConfiguration) async throws -> GatewayServer {
        let store: any GatewayStore
        switch configuration.database {
        case .sqlite(let path): store = try await SQLiteGatewayStore.open(path: path, logger: configuration.logger)
        case .postgres(let url): store = try await PostgresGatewayStore.open(url: url, logger: configuration.logger)
        }
        let now = Int64((configuration.now().timeIntervalSince1970 * 1000).rounded())
        var generated: String?
        do {
            if let adminKey = configuration.adminKey {
                if try await store.key(hash: APIKeys.hash(adminKey)) == nil {
                    try await store.insertKey(APIKeys.stored(secret: adminKey, name: "admin", apps: nil, now: now))
                }
            } else if try await store.keys().isEmpty {
                let (secret, stored) = APIKeys.make(name: "admin", apps: nil, now: now)
                try await store.insertKey(stored)
                generated = secret
            }
        } catch {
            await store.close()
            throw error
        }
        var random = SystemRandomNumberGenerator()
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        let name = configuration.workerName ?? "\(host)-\(ProcessInfo.processInfo.processIdentifier)-\(String(random.next() % 0xFFFF, radix: 16))"
        return GatewayServer(configuration: configuration, store: store, workerName: name, generatedAdminKey: generated)
    }

    /// Listens on the API port and starts sending.
    public func start() async throws {
        let api = try await GatewayAPI(server: self).start(host: configuration.host, port: configuration.port, logger: configuration.logger)
        var dispatcher: Dispatcher?
        var task: Task<Void, Never>?
        if configuration.runsWorkers {
            let made = Dispatcher(store: store, configuration: configuration, worker: workerName, apps: apps, metrics: metrics)
            dispatcher = made
            task = Task { await made.run() }
        }
        running.withLock { $0 = (api, dispatcher, task) }
        accepting.store(true, ordering: .relaxed)
    }

    /// Graceful: stops taking requests, lets the sends in flight finish and records them, gives
    /// back what was claimed and not sent, and closes the database.
    public func stop() async {
        accepting.store(false, ordering: .relaxed)
        let (api, dispatcher, task) = running.withLock { state in
            defer { state = (nil, nil, nil) }
            return state
        }
        await api?.stop()
        dispatcher?.stop()
        if let task {
            // Sends end within the request timeout; the grace period bounds the wait.
            let finished = await withTaskGroup(of: Bool.self) { group in
                group.addTask { await task.value; return true }
                group.addTask { try? await Task.sleep(for: self.configuration.shutdownGracePeriod); return false }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            if !finished {
                // The clients fail what is still in flight as shut down: given back to the queue.
                await apps.shutdown()
                await task.value
            }
        }
        await apps.shutdown()
        await store.close()
    }

    /// Starts, waits for graceful shutdown (SIGINT/SIGTERM under a `ServiceGroup`), and stops.
    public func run() async throws {
        try await start()
        try? await gracefulShutdown()
        await stop()
    }

    /// The API port (after ``start()``).
    public var port: Int? { running.withLock { $0.api?.port } }

    var isAccepting: Bool { accepting.load(ordering: .relaxed) }

    var nowMilliseconds: Int64 { Int64((configuration.now().timeIntervalSince1970 * 1000).rounded()) }

    // MARK: For the API

    /// The caller's key, if it may act on `app` (`nil`: administration, unless `adminOnly` is off).
    @discardableResult
    func authorize(_ request: Request, app: String?, adminOnly: Bool = true) async throws -> StoredKey {
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") else {
            throw HTTPError(.unauthorized, headers: [.wwwAuthenticate: "Bearer"], message: "send an API key: Authorization: Bearer <key>")
        }
        let secret = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        let hash = APIKeys.hash(secret)
        let now = ContinuousClock.now
        var key = keyCache.withLock { cache in cache[hash].flatMap { $0.until > now ? $0.key : nil } }
        if key == nil {
            key = try await store.key(hash: hash)
            if let key { keyCache.withLock { $0[hash] = (key, now + .seconds(10)) } }
        }
        guard let key else { throw HTTPError(.unauthorized, headers: [.wwwAuthenticate: "Bearer"], message: "unknown API key") }
        if let app {
            guard key.apps?.contains(app) ?? true else { throw HTTPError(.forbidden, message: "this key is not for app \(app)") }
        } else if adminOnly, key.apps != nil {
            throw HTTPError(.forbidden, message: "only an administrator's key may do this")
        }
        return key
    }

    /// Keys are cached ten seconds; a deleted key is forgotten here at once.
    func forgetKeys() { keyCache.withLock { $0.removeAll() } }

    /// The route's app, after checking the caller may act on it.
    func app(_ request: Request, _ context: BasicRequestContext) async throws -> GatewayApp {
        let id = try context.parameters.require("app")
        try await authorize(request, app: id)
        guard let stored = try await store.app(id: id), let document = try? JSONDocument(parsing: Array(stored.definition.utf8)),
              let app = try? GatewayApp(json: document.root) else {
            throw HTTPError(.notFound, message: "no app \(id)")
        }
        return app
    }

    /// Checks, stores and acknowledges one submission.
    func submit(_ body: [UInt8], app: GatewayApp, idempotencyKey: String?) async throws -> Response {
        let submission: Submission
        do throws(Submission.Refusal) {
            submission = try Submission(body: body, app: app, maximumTokens: configuration.maximumTokensPerRequest)
        } catch {
            metrics.submission("refused")
            var extra: [(String, JSONValue)] = []
            if let reason = error.reason { extra.append(("reason", .string(reason.rawValue))) }
            if !error.findings.isEmpty { extra.append(("findings", .array(error.findings.map(GatewayAPI.findingValue)))) }
            return GatewayAPI.error(HTTPResponse.Status(code: error.status), error.message, pointer: error.pointer, extra: extra)
        }
        let tokens: [DeviceToken]
        switch submission.recipients {
        case .tokens(let list): tokens = list
        case .audience(let tag):
            tokens = try await store.audience(app: app.id, tag: tag)
            guard !tokens.isEmpty else {
                metrics.submission("refused")
                return GatewayAPI.error(.unprocessableContent, "the audience has no active device: register tokens with POST /v1/apps/\(app.id)/devices", pointer: "/audience")
            }
        }
        let now = nowMilliseconds
        let job = NewJob(
            id: UUID().uuidString.lowercased(), app: app.id, idempotencyKey: idempotencyKey, requestHash: submission.requestHash,
            headers: submission.headersJSON, payload: submission.payload,
            expiresAt: submission.retryDeadline(now: now, window: configuration.retryWindow),
            tokens: tokens.map { ($0.hex, APNsID.fastRandom().uuidString) }, now: now)
        switch try await store.submit(job) {
        case .created(let summary):
            metrics.submission("accepted")
            metrics.submittedTokens.increment(by: Int64(tokens.count))
            running.withLock { $0.dispatcher }?.nudge()
            return GatewayAPI.json(Self.acknowledgement(summary, findings: submission.findings), status: .accepted, headers: [.location: "/v1/apps/\(app.id)/notifications/\(summary.id)"])
        case .existing(let summary):
            metrics.submission("replayed")
            return GatewayAPI.json(Self.acknowledgement(summary, findings: submission.findings), status: .ok, headers: [.init("Idempotent-Replayed")!: "true"])
        case .conflict(let id):
            metrics.submission("conflict")
            return GatewayAPI.error(.conflict, "Idempotency-Key was used for another request (notification \(id)); use a new key for a new request")
        }
    }

    static func acknowledgement(_ summary: JobSummary, findings: [HeraldLint.LintDiagnostic]) -> JSONValue {
        var value = GatewayAPI.jobValue(summary)
        if case .object(var object) = value {
            // What the linter found that APNs does not reject (the device may still ignore it).
            object.members.append(.init(key: "findings", value: .array(findings.map(GatewayAPI.findingValue))))
            value = .object(object)
        }
        return value
    }
}
