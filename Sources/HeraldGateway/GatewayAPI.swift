import Crypto
import Foundation
import HeraldJSON
import HeraldLint
import HeraldProtocol
import HeraldHTTPAPI
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// The gateway's REST API (Hummingbird 2): apps, API keys, devices, notifications and their
/// per-token outcomes, health, metrics and an OpenAPI document (``openAPIDocument``, served at
/// `/v1/openapi.json`). Callers authenticate with `Authorization: Bearer <API key>`; a key is
/// for every app (an administrator's) or for the apps it names.
struct GatewayAPI {
    let server: GatewayServer

    /// Serves the API on `host:port`; returns once bound.
    func start(host: String, port: Int, logger: Logger) async throws -> APIServer {
        try await APIServer.start(makeRouter(), host: host, port: port, serverName: "herald-gateway", logger: logger)
    }

    /// The largest request body read: `tokens` tokens (80 bytes each leaves room for quotes,
    /// commas and indentation) and a megabyte for the payload and the other fields. A larger
    /// body is answered 413 as it arrives, before it is held.
    static func maximumBodyBytes(tokens: Int) -> Int {
        tokens.multipliedReportingOverflow(by: 80).overflow ? Int.max / 2 : min(Int.max / 2, tokens * 80 + (1 << 20))
    }

    // MARK: Routes

    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        let server = self.server
        router.add(middleware: ErrorShapeMiddleware(logger: server.configuration.logger, methods: Self.methods(forPath:)) { error in
            (error as? StoreUnavailable).map(Self.unavailable)
        })
        router.add(middleware: OpenGate(server: server))

        router.get("/healthz") { _, _ in Self.json(["status": "ok", "version": .string(HeraldVersion.description)]) }
        // Ready: taking requests, and the database answers (within two seconds; at once while
        // it is known to be down).
        router.get("/readyz") { _, _ in
            guard server.isAccepting else { return Self.error(.serviceUnavailable, "not taking requests (starting or stopping)") }
            if let down = server.store.health.unavailable { return Self.unavailable(down) }
            do {
                try await server.store.ping()
                return Self.json(["status": "ready"])
            } catch let down as StoreUnavailable {
                return Self.unavailable(down)
            } catch {
                return Self.error(.serviceUnavailable, "the database does not answer: \(server.store.describe(error))", headers: [.retryAfter: "5"])
            }
        }
        router.get("/metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"], body: .init(byteBuffer: ByteBuffer(bytes: server.metrics.exposition())))
        }
        router.get("/v1/openapi.json") { _, _ in Self.json(Self.openAPIDocument) }

        // Apps
        router.post("/v1/apps") { request, _ in
            var request = request
            try await server.authorize(request, app: nil)
            let document = try await Self.document(&request)
            let app: GatewayApp
            do throws(GatewayApp.Problem) {
                app = try GatewayApp(json: document.root)
            } catch {
                return Self.error(.badRequest, error.message, pointer: error.pointer)
            }
            // Well-formed, but do the credentials work? (A key that is not a key, a wrong password.)
            do throws(GatewayApp.Problem) {
                _ = try app.clientConfiguration(requestTimeout: server.configuration.requestTimeout)
            } catch {
                return Self.error(.unprocessableContent, error.message, pointer: error.pointer)
            }
            guard try await server.store.insertApp(StoredApp(id: app.id, definition: app.storedJSON, createdAt: server.nowMilliseconds)) else {
                return Self.error(.conflict, "an app with id \(app.id) exists; delete it first, or give another \"id\"")
            }
            return Self.json(app.publicValue, status: .created)
        }
        router.get("/v1/apps") { request, _ in
            let key = try await server.authorize(request, app: nil, adminOnly: false)
            let apps = try await server.store.apps().filter { key.apps?.contains($0.id) ?? true }
            return Self.json(["apps": .array(apps.compactMap { Self.publicApp($0) })])
        }
        router.get("/v1/apps/{app}") { request, context in
            let id = try context.parameters.require("app")
            try await server.authorize(request, app: id)
            guard let stored = try await server.store.app(id: id), let value = Self.publicApp(stored) else { return Self.error(.notFound, "no app \(id)") }
            return Self.json(value)
        }
        router.delete("/v1/apps/{app}") { request, context in
            let id = try context.parameters.require("app")
            try await server.authorize(request, app: nil)
            guard try await server.store.deleteApp(id: id) else { return Self.error(.notFound, "no app \(id)") }
            await server.apps.forget(id)
            return Response(status: .noContent)
        }

        // Keys
        router.post("/v1/keys") { request, _ in
            var request = request
            try await server.authorize(request, app: nil)
            let document = try await Self.document(&request)
            guard let name = document.root["name"]?.stringValue, !name.isEmpty else {
                return Self.error(.badRequest, "required: a name for the key", pointer: "/name")
            }
            var apps: [String]?
            if let list = document.root["apps"] {
                guard list.kind == .array, list.count > 0 else {
                    return Self.error(.badRequest, "an array of app ids (omit it for an administrator's key)", pointer: "/apps")
                }
                apps = list.elements.compactMap(\.stringValue).filter(GatewayApp.isValidID)
                guard apps?.count == list.count else { return Self.error(.badRequest, "app ids are strings of letters, digits, '.', '-', '_'", pointer: "/apps") }
            }
            let (secret, stored) = APIKeys.make(name: name, apps: apps, now: server.nowMilliseconds)
            try await server.store.insertKey(stored)
            return Self.json(Self.keyValue(stored, secret: secret), status: .created)
        }
        router.get("/v1/keys") { request, _ in
            try await server.authorize(request, app: nil)
            return Self.json(["keys": .array(try await server.store.keys().map { Self.keyValue($0, secret: nil) })])
        }
        router.delete("/v1/keys/{id}") { request, context in
            try await server.authorize(request, app: nil)
            let id = try context.parameters.require("id")
            // Revoking the last administrator's key would lock everyone out of administration.
            let keys = try await server.store.keys()
            if let key = keys.first(where: { $0.id == id }), key.apps == nil, keys.filter({ $0.apps == nil }).count == 1 {
                return Self.error(.conflict, "\(id) is the last administrator's key: make another with POST /v1/keys first")
            }
            guard try await server.store.deleteKey(id: id) else { return Self.error(.notFound, "no key \(id)") }
            server.forgetKeys()
            return Response(status: .noContent)
        }

        // Devices
        router.post("/v1/apps/{app}/devices") { request, context in
            var request = request
            let app = try await server.app(request, context)
            let document = try await Self.document(&request)
            guard let list = document.root["tokens"], list.kind == .array, list.count > 0 else {
                return Self.error(.badRequest, "required: \"tokens\", an array of hex device tokens", pointer: "/tokens")
            }
            var tokens: [DeviceToken] = []
            for (index, element) in list.elements.enumerated() {
                guard let hex = element.stringValue, let token = try? DeviceToken(hex: hex) else {
                    return Self.error(.badRequest, "not a device token: hex, 32 to 100 bytes", pointer: "/tokens/\(index)")
                }
                tokens.append(token)
            }
            var tags: [String] = []
            if let list = document.root["tags"] {
                tags = list.elements.compactMap(\.stringValue)
                guard list.kind == .array, tags.count == list.count, tags.allSatisfy({ !$0.isEmpty && !$0.contains(",") }) else {
                    return Self.error(.badRequest, "an array of tags (no commas)", pointer: "/tags")
                }
            }
            try await server.store.upsertDevices(app: app.id, tokens: tokens, tags: tags, now: server.nowMilliseconds)
            return Self.json(["registered": .number(JSONNumber(tokens.count))])
        }
        router.get("/v1/apps/{app}/devices") { request, context in
            let app = try await server.app(request, context)
            let query = request.uri.queryParameters
            let state = try query["state"].map { text -> DeviceState in
                guard let state = DeviceState(rawValue: String(text)) else { throw HTTPError(.badRequest, message: "state is active or dead") }
                return state
            }
            let limit = try Self.limit(query["limit"])
            let devices = try await server.store.devices(
                app: app.id, state: state, tag: query["tag"].map(String.init), after: query["after"].map(String.init), limit: limit)
            return Self.json([
                "devices": .array(devices.map { device in
                    [
                        "token": .string(device.token), "state": .string(device.state.rawValue), "tags": .array(device.tags.map { .string($0) }),
                        "reason": device.reason.map { .string($0) } ?? .null, "deadAt": device.deadAt.map { .number(JSONNumber($0)) } ?? .null,
                        "updatedAt": .number(JSONNumber(device.updatedAt)),
                    ]
                }),
                "next": devices.count == limit ? devices.last.map { .string($0.token) } ?? .null : .null,
            ])
        }
        router.delete("/v1/apps/{app}/devices/{token}") { request, context in
            let app = try await server.app(request, context)
            guard let token = try? DeviceToken(hex: try context.parameters.require("token")) else {
                return Self.error(.badRequest, "not a device token")
            }
            return try await server.store.deleteDevice(app: app.id, token: token) ? Response(status: .noContent) : Self.error(.notFound, "no such device")
        }

        // Notifications
        router.post("/v1/apps/{app}/notifications") { request, context in
            var request = request
            let app = try await server.app(request, context)
            let key = request.headers[.init("Idempotency-Key")!]
            if let key, key.isEmpty || key.utf8.count > 255 {
                return Self.error(.badRequest, "Idempotency-Key is 1 to 255 characters")
            }
            let tokens = server.configuration.maximumTokensPerRequest
            let limit = Self.maximumBodyBytes(tokens: tokens)
            let body: ByteBuffer
            do {
                body = try await request.collectBody(upTo: limit)
            } catch is NIOTooManyBytesError {
                throw HTTPError(.contentTooLarge, message: "the body is over \(limit) bytes, the most a request of \(tokens) tokens (this gateway's maximum per request) can need: send the tokens in several requests")
            }
            return try await server.submit(Array(body.readableBytesView), app: app, idempotencyKey: key)
        }
        router.get("/v1/apps/{app}/notifications/{id}") { request, context in
            let app = try await server.app(request, context)
            let id = try context.parameters.require("id")
            guard let job = try await server.store.job(app: app.id, id: id) else { return Self.error(.notFound, "no notification \(id) for \(app.id)") }
            return Self.json(Self.jobValue(job))
        }
        router.get("/v1/apps/{app}/notifications/{id}/deliveries") { request, context in
            let app = try await server.app(request, context)
            let id = try context.parameters.require("id")
            guard try await server.store.job(app: app.id, id: id) != nil else { return Self.error(.notFound, "no notification \(id) for \(app.id)") }
            let query = request.uri.queryParameters
            let state = try query["state"].map { text -> DeliveryState in
                guard let state = DeliveryState(rawValue: String(text)) else {
                    throw HTTPError(.badRequest, message: "state is one of \(DeliveryState.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return state
            }
            let after = try query["after"].map { text -> Int64 in
                guard let value = Int64(text), value >= 0 else { throw HTTPError(.badRequest, message: "after is a delivery id (a whole number from 0)") }
                return value
            }
            let limit = try Self.limit(query["limit"])
            let deliveries = try await server.store.deliveries(job: id, state: state, after: after, limit: limit)
            return Self.json([
                "deliveries": .array(deliveries.map(Self.deliveryValue)),
                "next": deliveries.count == limit ? deliveries.last.map { .number(JSONNumber($0.id)) } ?? .null : .null,
            ])
        }
        return router
    }

    // MARK: Shapes

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        .json(value, status: status, headers: headers)
    }

    static func error(
        _ status: HTTPResponse.Status, _ message: String, pointer: String? = nil, extra: [(String, JSONValue)] = [], headers: HTTPFields = [:]
    ) -> Response {
        APIError.response(status, message, pointer: pointer, extra: extra, headers: headers)
    }

    /// 503 with `Retry-After`: the database is unreachable now; the request changed nothing.
    static func unavailable(_ down: StoreUnavailable) -> Response {
        error(.serviceUnavailable, "\(down); nothing was changed, try again", extra: [("database", .string(down.kind.rawValue))], headers: [.retryAfter: "5"])
    }

    static func document(_ request: inout Request) async throws -> JSONDocument {
        let body = try await request.collectBody(upTo: 1 << 20)
        do {
            return try JSONDocument(parsing: Array(body.readableBytesView))
        } catch {
            throw HTTPError(.badRequest, message: "the body is not JSON: \(error.message) at line \(error.location.line), column \(error.location.column)")
        }
    }

    static func limit(_ text: Substring?) throws -> Int {
        guard let text else { return 1_000 }
        guard let value = Int(text), (1...10_000).contains(value) else { throw HTTPError(.badRequest, message: "limit is from 1 to 10000") }
        return value
    }

    static func publicApp(_ stored: StoredApp) -> JSONValue? {
        guard let document = try? JSONDocument(parsing: Array(stored.definition.utf8)), let app = try? GatewayApp(json: document.root) else { return nil }
        return app.publicValue
    }

    static func keyValue(_ key: StoredKey, secret: String?) -> JSONValue {
        var object: JSONObject = [
            "id": .string(key.id), "name": .string(key.name), "apps": key.apps.map { .array($0.map { .string($0) }) } ?? "*",
            "createdAt": .number(JSONNumber(key.createdAt)),
        ]
        if let secret { object.members.insert(.init(key: "key", value: .string(secret)), at: 1) }
        return .object(object)
    }

    static func jobValue(_ job: JobSummary) -> JSONValue {
        var counts = JSONObject()
        for state in DeliveryState.allCases { counts.members.append(.init(key: state.rawValue, value: .number(JSONNumber(job.counts[state] ?? 0)))) }
        let waiting = (job.counts[.queued] ?? 0) + (job.counts[.claimed] ?? 0)
        let headers = (try? JSONDocument(parsing: Array(job.headers.utf8)))?.root.value ?? [:]
        return [
            "id": .string(job.id), "app": .string(job.app), "status": .string(waiting == 0 ? "done" : "sending"),
            "tokens": .number(JSONNumber(job.tokenCount)), "counts": .object(counts), "headers": headers,
            "createdAt": .number(JSONNumber(job.createdAt)), "retryUntil": .number(JSONNumber(job.expiresAt)),
        ]
    }

    static func deliveryValue(_ delivery: StoredDelivery) -> JSONValue {
        [
            "id": .number(JSONNumber(delivery.id)), "token": .string(delivery.token), "apnsId": .string(delivery.apnsID),
            "state": .string(delivery.state.rawValue), "attempts": .number(JSONNumber(delivery.attempts)),
            "status": delivery.status.map { .number(JSONNumber($0)) } ?? .null, "reason": delivery.reason.map { .string($0) } ?? .null,
            "unregisteredAt": delivery.unregisteredAt.map { .number(JSONNumber($0)) } ?? .null,
            "updatedAt": .number(JSONNumber(delivery.updatedAt)),
        ]
    }

    static func findingValue(_ diagnostic: LintDiagnostic) -> JSONValue {
        [
            "rule": .string(diagnostic.rule.rawValue), "severity": .string(diagnostic.severity.rawValue), "message": .string(diagnostic.message),
            "pointer": diagnostic.pointer.map { .string("/payload" + $0.description) } ?? .null,
            "line": diagnostic.location.map { .number(JSONNumber($0.line)) } ?? .null,
            "column": diagnostic.location.map { .number(JSONNumber($0.column)) } ?? .null,
        ]
    }
}

/// Until the database is open (the port is bound first), every route but `/healthz` answers 503.
struct OpenGate: RouterMiddleware {
    typealias Context = BasicRequestContext
    let server: GatewayServer

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard server.isOpen || request.uri.path == "/healthz" else {
            return GatewayAPI.error(.serviceUnavailable, "the gateway is starting", headers: [.retryAfter: "1"])
        }
        return try await next(request, context)
    }
}

/// API keys: `hgk_` and 32 random bytes in base64url, kept only as their SHA-256.
enum APIKeys {
    static func make(name: String, apps: [String]?, now: Int64) -> (secret: String, stored: StoredKey) {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let secret = "hgk_" + Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return (secret, stored(secret: secret, name: name, apps: apps, now: now))
    }

    static func stored(secret: String, name: String, apps: [String]?, now: Int64) -> StoredKey {
        StoredKey(id: "key_" + String(hash(secret).prefix(12)), hash: hash(secret), name: name, apps: apps, createdAt: now)
    }

    static func hash(_ secret: String) -> String {
        SHA256.hash(data: Array(secret.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
