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
    func start(host: String, port: Int, tls: APITLS?, logger: Logger) async throws -> APIServer {
        try await APIServer.start(makeRouter(), host: host, port: port, serverName: "herald-gateway", tls: tls, logger: logger)
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
        // The request's span first: the access log's line is written inside it.
        if let tracer = server.tracer {
            router.add(middleware: TraceRequests(tracer: tracer) { Self.documentedRoutes.template(forPath: $0) })
        }
        router.add(middleware: AccessLog(logger: server.configuration.logger, metrics: server.metrics))
        router.add(middleware: ErrorShapeMiddleware(logger: server.configuration.logger, methods: Self.methods(forPath:)) { error in
            (error as? StoreUnavailable).map(Self.unavailable)
        })
        router.add(middleware: OpenGate(server: server))

        router.get("/healthz") { _, _ in Self.json(["status": "ok", "version": .string(HeraldVersion.description)]) }
        // Ready: taking requests, and the database answers (within two seconds; at once while
        // it is known to be down).
        router.get("/readyz") { _, _ in
            guard server.isAccepting else { return Self.error(.serviceUnavailable, "not taking requests (starting or stopping)") }
            if let down = server.store.health.unavailable ?? server.store.health.full { return Self.unavailable(down) }
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

        Self.addApps(to: router, server: server)
        Self.addKeys(to: router, server: server)
        Self.addDevices(to: router, server: server)
        Self.addNotifications(to: router, server: server)
        Self.addActivities(to: router, server: server)
        Self.addWebhooks(to: router, server: server)
        Self.addConsole(to: router, server: server)
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

    /// A query parameter that names one of `Choice`'s cases, if given; 400 saying the cases
    /// otherwise.
    static func choice<Choice: RawRepresentable & CaseIterable>(_ text: Substring?, named name: String) throws -> Choice? where Choice.RawValue == String {
        guard let text else { return nil }
        guard let value = Choice(rawValue: String(text)) else {
            throw APIRefusal(status: .badRequest, message: "\(name) is one of \(Choice.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }

    static func limit(_ text: Substring?, default fallback: Int = 1_000) throws -> Int {
        guard let text else { return fallback }
        guard let value = Int(text), (1...10_000).contains(value) else { throw APIRefusal(status: .badRequest, message: "limit is from 1 to 10000") }
        return value
    }

    /// `value` as compact JSON bytes.
    static func bytes(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter(output: JSONBytes())
        writer.value(value)
        return writer.output.bytes
    }

    static func refuseUnknown(_ object: JSONDocument.Node, allowed: [String]) throws {
        try APIRefusal.refuseUnknown(object, allowed: allowed)
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
        StoredKey(id: keyID(secret: secret), hash: hash(secret), name: name, apps: apps, createdAt: now)
    }

    /// The id a key is known by (`key_` and the start of its SHA-256): what logs name.
    static func keyID(secret: String) -> String { "key_" + String(hash(secret).prefix(12)) }

    static func hash(_ secret: String) -> String {
        SHA256.hash(data: Array(secret.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
