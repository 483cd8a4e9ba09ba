import Foundation
import HeraldHTTPAPI
import HeraldJSON
import HeraldLint
import HeraldLocalization
import HeraldProtocol
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// Why a gateway could not start: its port, or its database, in a sentence.
public struct GatewayStartError: Error, CustomStringConvertible {
    /// What went wrong, naming the address or the database.
    public var message: String
    /// The message.
    public var description: String { message }
}

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
    let metrics: GatewayMetrics
    /// Spans for the API's requests, commits and delivery attempts, with ``GatewayConfiguration/traces``.
    let tracer: GatewayTracer?
    /// The metrics sent to an OTLP collector, with ``GatewayConfiguration/OpenTelemetry/metricsEndpoint``.
    let metricsExporter: MetricsExporter?
    /// This process's name in claims.
    public let workerName: String
    /// The store and the apps' clients, once the database is open.
    private let core = Mutex<(store: GuardedStore, apps: AppDirectory)?>(nil)
    private let running = Mutex<(api: APIServer?, dispatcher: Dispatcher?, task: Task<Void, Never>?)>((nil, nil, nil))
    private let exporting = Mutex<[Task<Void, Never>]>([])
    private let accepting = Atomic<Bool>(false)
    private let keyCache = Mutex<[String: (key: StoredKey, until: ContinuousClock.Instant)]>([:])
    private let adminKey = Mutex<String?>(nil)

    /// The administrator key made at this start (shown once): the database had none, or
    /// ``GatewayConfiguration/makesNewAdminKey`` asked for one.
    public var generatedAdminKey: String? { adminKey.withLock { $0 } }

    private init(configuration: GatewayConfiguration, workerName: String) throws {
        var configuration = configuration
        let metrics = GatewayMetrics(now: { [now = configuration.now] in Int64((now().timeIntervalSince1970 * 1000).rounded()) })
        if let settings = configuration.openTelemetry, let endpoint = settings.tracesEndpoint {
            // Log lines written inside a span carry its trace and span ids.
            configuration.logger = GatewayTracer.tracing(configuration.logger)
            tracer = GatewayTracer(
                exporter: try TraceExporter(settings: settings, endpoint: endpoint, worker: workerName, metrics: metrics, logger: configuration.logger))
        } else {
            tracer = nil
        }
        if let settings = configuration.openTelemetry, let endpoint = settings.metricsEndpoint {
            metricsExporter = try MetricsExporter(settings: settings, endpoint: endpoint, worker: workerName, metrics: metrics, logger: configuration.logger)
        } else {
            metricsExporter = nil
        }
        self.configuration = configuration
        self.workerName = workerName
        self.metrics = metrics
    }

    /// The store (set by ``open(configuration:)`` before any route reaches it).
    var store: GuardedStore { core.withLock { $0!.store } }
    var apps: AppDirectory { core.withLock { $0!.apps } }
    var isOpen: Bool { core.withLock { $0 != nil } }

    /// Checks the configuration, binds the API port, opens the database (creating and migrating
    /// it), and makes sure an administrator key exists, in that order: a port in use or a
    /// database that cannot be used fails before anything is created. Until ``start()``, the
    /// API answers 503. Call ``start()`` to take requests and send.
    ///
    /// - Throws: ``GatewayConfiguration/Problem`` for a configuration that cannot work;
    ///   ``GatewayStartError`` naming the port or the database otherwise.
    public static func open(configuration: GatewayConfiguration) async throws -> GatewayServer {
        try configuration.validate()
        var random = SystemRandomNumberGenerator()
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        let name = configuration.workerName ?? "\(host)-\(ProcessInfo.processInfo.processIdentifier)-\(String(random.next() % 0xFFFF, radix: 16))"
        let server: GatewayServer
        do {
            server = try GatewayServer(configuration: configuration, workerName: name)
        } catch {
            throw GatewayStartError(message: "cannot export to OpenTelemetry: \(error)")
        }
        var tls: APITLS?
        if let files = configuration.tls {
            do {
                tls = try APITLS(certificateFile: files.certificatePath, keyFile: files.keyPath)
            } catch {
                throw GatewayStartError(message: "cannot serve HTTPS: \(error)")
            }
        }
        let api: APIServer
        do {
            api = try await GatewayAPI(server: server).start(host: configuration.host, port: configuration.port, tls: tls, logger: server.configuration.logger)
        } catch {
            throw GatewayStartError(message: "cannot listen on \(configuration.host):\(configuration.port): \(Self.describeBindError(error))")
        }
        server.running.withLock { $0.api = api }
        var opened: GuardedStore?
        do {
            let base: any GatewayStore
            switch configuration.database {
            case .sqlite(let path): base = try await SQLiteGatewayDatabase.open(path: path, logger: server.configuration.logger)
            case .postgres(let url): base = try await PostgresGatewayDatabase.open(url: url, logger: server.configuration.logger, lease: configuration.claimLease)
            }
            let store = GuardedStore(base, timeout: configuration.databaseTimeout, metrics: server.metrics, logger: server.configuration.logger)
            opened = store
            let apps = AppDirectory(store: store, requestTimeout: configuration.requestTimeout, logger: server.configuration.logger, metrics: server.metrics)
            server.core.withLock { $0 = (store, apps) }
            try await server.ensureAdminKey(store)
        } catch {
            await api.stop()
            await opened?.close()
            if error is GatewayStartError { throw error }
            throw GatewayStartError(message: "cannot use the database: \(opened?.describe(error) ?? "\(error)")")
        }
        return server
    }

    /// The configured key if the database lacks it; a new one when the database has no key at
    /// all, or when a new one was asked for (a database whose first key was never seen).
    private func ensureAdminKey(_ store: GuardedStore) async throws {
        let now = nowMilliseconds
        if let adminKey = configuration.adminKey {
            if try await store.key(hash: APIKeys.hash(adminKey)) == nil {
                try await store.insertKey(APIKeys.stored(secret: adminKey, name: "admin", apps: nil, now: now))
            }
        }
        var needsKey = configuration.makesNewAdminKey
        if !needsKey, configuration.adminKey == nil { needsKey = try await store.keys().isEmpty }
        if needsKey {
            let (secret, stored) = APIKeys.make(name: "admin", apps: nil, now: now)
            try await store.insertKey(stored)
            adminKey.withLock { $0 = secret }
            if configuration.makesNewAdminKey {
                configuration.logger.notice("a new administrator key was made", metadata: ["key": "\(stored.id)"])
            }
        }
    }

    /// "Address already in use", not NIO's description of the system call: why `error` (from
    /// binding a port) happened, in words.
    public static func describeBindError(_ error: any Error) -> String {
        let text = "\(error)"
        if text.contains("Address already in use") || text.contains("errno: 98") { return "the port is in use (another process listens on it)" }
        if text.contains("Permission denied") || text.contains("errno: 13") { return "permission denied (ports below 1024 need privileges)" }
        if text.contains("Cannot assign requested address") || text.contains("errno: 99") { return "no interface has this address" }
        return text
    }

    /// Takes requests and starts sending.
    public func start() async throws {
        guard isOpen else { throw GatewayStartError(message: "the gateway is not open: call GatewayServer.open(configuration:)") }
        var dispatcher: Dispatcher?
        var task: Task<Void, Never>?
        if configuration.runsWorkers {
            let made = Dispatcher(store: store, configuration: configuration, worker: workerName, apps: apps, metrics: metrics, tracer: tracer)
            dispatcher = made
            task = Task { await made.run() }
        }
        running.withLock { state in
            state.dispatcher = dispatcher
            state.task = task
        }
        if let exporter = tracer?.exporter {
            exporting.withLock { $0.append(Task { await exporter.run() }) }
        }
        if let metricsExporter {
            exporting.withLock { $0.append(Task { await metricsExporter.run() }) }
        }
        accepting.store(true, ordering: .relaxed)
    }

    /// Graceful, and bounded by ``GatewayConfiguration/shutdownGracePeriod``: stops taking
    /// requests and claiming at once, gives back what has not started sending, lets the sends
    /// under way end (each within the request timeout) and records them, gives back what is
    /// left so another process can send it at once, and closes the database. Nothing holds it
    /// past the grace period: a database that does not answer leaves the rest to the leases.
    public func stop() async {
        accepting.store(false, ordering: .relaxed)
        let (api, dispatcher, task) = running.withLock { state in
            defer { state = (nil, nil, nil) }
            return state
        }
        let deadline = ContinuousClock.now + configuration.shutdownGracePeriod
        dispatcher?.stop()
        _ = try? await withDeadline(.seconds(5), "stopping the API") { await api?.stop() }
        if let task {
            let left = deadline - ContinuousClock.now
            let finished = (try? await withDeadline(max(left, .milliseconds(1)), "the dispatcher's shutdown") { await task.value }) != nil
            if !finished {
                configuration.logger.warning(
                    "the grace period ended with work unfinished; what this process still holds is sent by another once its lease runs out",
                    metadata: ["grace": "\(configuration.shutdownGracePeriod.secondsText)"])
                task.cancel()
            }
        }
        // The last spans and metrics, for two seconds at most: a collector that is away costs
        // no more.
        let exports = exporting.withLock { tasks in
            defer { tasks = [] }
            return tasks
        }
        if !exports.isEmpty {
            tracer?.exporter.stop()
            metricsExporter?.stop()
            let finished: Void? = try? await withDeadline(.seconds(2), "exporting the last spans and metrics") {
                for export in exports { await export.value }
            }
            if finished == nil { exports.forEach { $0.cancel() } }
        }
        guard isOpen else { return }
        let apps = self.apps
        _ = try? await withDeadline(.seconds(5), "closing the APNs connections") { await apps.shutdown() }
        await store.close()
    }

    /// Starts, waits for graceful shutdown (SIGINT/SIGTERM under a `ServiceGroup`), and stops.
    public func run() async throws {
        try await start()
        try? await gracefulShutdown()
        await stop()
    }

    /// The API port (after ``open(configuration:)``).
    public var port: Int? { running.withLock { $0.api?.port } }

    /// The API's address (`https://host:port/` with ``GatewayConfiguration/tls``), once bound.
    public var address: String? {
        port.map { "\(configuration.tls == nil ? "http" : "https")://\(Self.urlHost(configuration.host)):\($0)/" }
    }

    /// `host` as a URL writes it (an IPv6 address in brackets).
    static func urlHost(_ host: String) -> String { host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host }

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

    /// An app was changed, resumed or deleted through this process's API: its next delivery
    /// reads it again (other processes see it within ``AppDirectory/refreshInterval``), and what
    /// waited is claimed at once.
    func appChanged(_ id: String, resumed: Bool) {
        apps.forget(id)
        if resumed {
            metrics.appPaused(id, false)
            configuration.logger.notice("an app's sending resumes", metadata: ["app": "\(id)"])
        }
        running.withLock { $0.dispatcher }?.nudge()
    }

    /// A Live Activity has something to send: this process's sender looks now.
    func activityChanged() {
        running.withLock { $0.dispatcher }?.activities.nudge()
    }

    /// The route's app, after checking the caller may act on it.
    func app(_ request: Request, _ context: BasicRequestContext) async throws -> GatewayApp {
        let id = try context.parameters.require("app")
        try await authorize(request, app: id)
        guard let stored = try await store.app(id: id), let app = GatewayAPI.definition(stored) else {
            throw HTTPError(.notFound, message: "no app \(id)")
        }
        return app
    }

    /// What ``submit(_:app:idempotencyKey:)`` would answer about `body`, without storing it:
    /// `accepted`, the would-be `status`, the message and findings, the audience's size, and
    /// each variant rendered as a device shows it (``NotificationPreview``). Any JSON object is a
    /// draft it answers about (200); a body that is not one is answered 400.
    func check(_ body: [UInt8], app: GatewayApp) async throws -> Response {
        let submission: Submission
        do throws(Submission.Refusal) {
            submission = try Submission(body: body, app: app, maximumTokens: configuration.maximumTokensPerRequest, now: nowMilliseconds)
        } catch {
            // A draft that is not a JSON object at all is the request's error; anything POST
            // would refuse (a missing field, a lint error, a past expiration) is the answer.
            guard let draft = try? JSONDocument(parsing: body), draft.root.kind == .object else {
                return GatewayAPI.error(.badRequest, error.message, pointer: error.pointer)
            }
            var object: JSONObject = [
                "accepted": false, "status": .number(JSONNumber(error.status)), "message": .string(error.message),
                "pointer": error.pointer.map { .string($0) } ?? .null,
            ]
            let details = error.details
            if !details.contains(where: { $0.0 == "findings" }) { object.members.append(.init(key: "findings", value: [])) }
            for (key, value) in details { object.members.append(.init(key: key, value: value)) }
            object.members.append(.init(key: "previews", value: []))
            return GatewayAPI.json(.object(object))
        }
        var recipients: Int
        switch submission.recipients {
        case .tokens(let list): recipients = list.count
        case .audience(nil): recipients = try await store.audienceSize(app: app.id, audience: .all)
        case .audience(let tag?): recipients = try await store.audienceSize(app: app.id, audience: .tag(tag))
        case .users(let users): recipients = try await store.audienceSize(app: app.id, audience: .users(users))
        }
        let findings = submission.findings.map { GatewayAPI.findingValue($0) }
            + submission.localizedFindings.map { GatewayAPI.findingValue($0.0, under: $0.1, replacing: "/aps/alert") }
        var previews: [JSONValue] = [NotificationPreview.value(submission.payload, headers: submission.headers, language: nil)]
        previews += submission.variants.map { NotificationPreview.value($0.payload, headers: submission.headers, language: $0.language) }
        var object: JSONObject = ["accepted": true, "status": 202, "message": .string("would be accepted")]
        if recipients == 0, case .audience = submission.recipients {
            object = [
                "accepted": false, "status": 422,
                "message": .string("the audience has no active device: register tokens with POST /v1/apps/\(app.id)/devices"), "pointer": "/audience",
            ]
        }
        object.members.append(.init(key: "recipients", value: .number(JSONNumber(recipients))))
        object.members.append(.init(key: "findings", value: .array(findings)))
        object.members.append(.init(key: "previews", value: .array(previews)))
        return GatewayAPI.json(.object(object))
    }

    /// Checks, stores and acknowledges one submission.
    func submit(_ body: [UInt8], app: GatewayApp, idempotencyKey: String?) async throws -> Response {
        let submission: Submission
        do throws(Submission.Refusal) {
            submission = try Submission(body: body, app: app, maximumTokens: configuration.maximumTokensPerRequest, now: nowMilliseconds)
        } catch {
            metrics.submission(app.id, "refused")
            return GatewayAPI.error(HTTPResponse.Status(code: error.status), error.message, pointer: error.pointer, extra: error.details)
        }
        let now = nowMilliseconds
        let audience: JobAudience
        var description: String?
        switch submission.recipients {
        case .tokens(let list): audience = .tokens(list.map { ($0.hex, APNsID.fastRandom().uuidString) })
        case .audience(nil): audience = .all; description = "all"
        case .audience(let tag?): audience = .tag(tag); description = "tag:\(tag)"
        case .users(let users): audience = .users(users); description = "users:\(users.count)"
        }
        // An audience is counted first: an empty one is a mistake to say at once (users without
        // devices are counted in the job instead), and the count sizes the database's deadline.
        let size = try await store.audienceSize(app: app.id, audience: audience)
        if size == 0, case .audience = submission.recipients {
            metrics.submission(app.id, "refused")
            return GatewayAPI.error(.unprocessableContent, "the audience has no active device: register tokens with POST /v1/apps/\(app.id)/devices", pointer: "/audience")
        }
        let languages = submission.variants.map(\.language)
        let schedule = submission.schedule, fallbackZone = app.timeZone
        var job = NewJob(
            id: UUID().uuidString.lowercased(), app: app.id, idempotencyKey: idempotencyKey, requestHash: submission.requestHash,
            headers: submission.headersJSON, payload: submission.payload,
            expiresAt: submission.retryDeadline(now: now, window: configuration.retryWindow),
            audience: audience, now: now, dueAt: { schedule.dueAt(zone: $0, fallback: fallbackZone, now: now) }, metadata: submission.metadata,
            doneWebhook: app.webhook?.events.contains(.jobDone) ?? false)
        job.variants = submission.variants.enumerated().map { JobVariant(index: $0.offset + 1, language: $0.element.language, payload: $0.element.payload) }
        // The variant iOS would choose for a device's language among those given.
        job.variant = { language in
            LanguageMatcher.bestMatch(for: language, in: languages).flatMap { languages.firstIndex(of: $0) }.map { $0 + 1 } ?? 0
        }
        if case .local(let time) = schedule {
            job.isLocalSchedule = true
            job.localTime = time.description
        }
        job.audienceDescription = description
        // The commit's span: the job keeps its context, and each delivery attempt, in whichever
        // process, is a span under it (one job, one trace).
        var commit = tracer.map { _ in Span("notification.commit", kind: .internal, parent: TraceContext.current) }
        job.traceParent = commit?.context.traceparent
        let stored: SubmitResult
        do {
            stored = try await store.submit(job, recipients: size)
        } catch {
            if var failed = commit {
                failed.status = .error(store.describe(error))
                tracer?.finish(failed)
            }
            throw error
        }
        if commit != nil {
            commit?.set("herald.app", app.id)
            switch stored {
            case .created(let summary), .existing(let summary):
                commit?.set("herald.notification.id", summary.id)
                commit?.set("herald.deliveries", summary.tokenCount)
                commit?.set("herald.result", { if case .created = stored { "created" } else { "replayed" } }())
            case .conflict:
                commit?.set("herald.result", "conflict")
            }
            if let commit { tracer?.finish(commit) }
        }
        switch stored {
        case .created(let summary):
            metrics.submission(app.id, "accepted")
            metrics.submittedTokens(app.id, summary.tokenCount)
            running.withLock { $0.dispatcher }?.nudge()
            return GatewayAPI.json(
                Self.acknowledgement(summary, findings: submission.findings, localized: submission.localizedFindings, now: now), status: .accepted,
                headers: [.location: "/v1/apps/\(app.id)/notifications/\(summary.id)"])
        case .existing(let summary):
            metrics.submission(app.id, "replayed")
            return GatewayAPI.json(
                Self.acknowledgement(summary, findings: submission.findings, localized: submission.localizedFindings, now: now), status: .ok,
                headers: [.init("Idempotent-Replayed")!: "true"])
        case .conflict(let id):
            metrics.submission(app.id, "conflict")
            return GatewayAPI.error(.conflict, "Idempotency-Key was used for another request (notification \(id)); use a new key for a new request")
        }
    }

    static func acknowledgement(
        _ summary: JobSummary, findings: [HeraldLint.LintDiagnostic], localized: [(HeraldLint.LintDiagnostic, String)] = [], now: Int64
    ) -> JSONValue {
        var value = GatewayAPI.jobValue(summary, now: now)
        if case .object(var object) = value {
            // What the linter found that does not refuse it (the device may still ignore it);
            // a variant's alert findings point into `localized`.
            let all = findings.map { GatewayAPI.findingValue($0) }
                + localized.map { GatewayAPI.findingValue($0.0, under: $0.1, replacing: "/aps/alert") }
            object.members.append(.init(key: "findings", value: .array(all)))
            value = .object(object)
        }
        return value
    }
}
