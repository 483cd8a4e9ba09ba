import Foundation
import HeraldDevice
import HeraldJSON
import HeraldProtocol
import HeraldHTTPAPI
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The mock's HTTP API (Hummingbird), on its own port: recorded requests, devices, faults,
/// channels, the live event stream (Server-Sent Events), an OpenAPI document and Prometheus
/// metrics. Every route is listed in ``InspectionAPI/openAPIDocument``.
struct InspectionAPI {
    let server: MockAPNsServer

    /// Serves the API on `host:port`; returns once bound. Stopping it ends the open event
    /// streams first (the mock finishes them), then the listener and idle connections.
    func start(host: String, port: Int, logger: Logger) async throws -> APIServer {
        try await APIServer.start(makeRouter(logger: logger), host: host, port: port, serverName: "herald-mock", logger: logger)
    }

    // MARK: Routes

    func makeRouter(logger: Logger = Logger(label: "herald.mock.api")) -> Router<BasicRequestContext> {
        let router = Router()
        let server = self.server
        let core = server.core
        router.add(middleware: ErrorShapeMiddleware(logger: logger, methods: Self.documentedRoutes.methods(forPath:)))

        // The inbox: its page, style and script as files of their own (Inbox/, embedded), so
        // the page runs with no inline code under a strict Content-Security-Policy.
        for (path, asset) in InboxAssets.byPath {
            router.get(RouterPath(path)) { _, _ in
                Response(
                    status: .ok,
                    headers: [
                        .contentType: asset.contentType, .cacheControl: "no-cache",
                        .contentSecurityPolicy: "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
                    ],
                    body: .init(byteBuffer: ByteBuffer(string: asset.text)))
            }
        }
        router.get("/api/v1/status") { _, _ in
            Self.json(Self.status(server))
        }
        router.get("/api/v1/notifications") { request, _ in
            let parameters = request.uri.queryParameters
            let query = try Self.query { parameters[Substring($0)].map(String.init) }
            // Filters, search and paging run in the store (in SQL with a database).
            let page = try await core.recordStore.page(query)
            let renderer = core.renderer(for: parameters["lang"].map(String.init))
            return Self.page(page, renderer: renderer)
        }
        router.get("/api/v1/notifications/{id}") { request, context in
            let record = try await Self.record(core, context)
            return Self.json(Self.value(of: record, renderer: core.renderer(for: request.uri.queryParameters["lang"].map(String.init))))
        }
        router.post("/api/v1/notifications/{id}/resend") { _, context in
            let record = try await Self.record(core, context)
            do {
                let resent = try await server.resend(record)
                return Self.json(Self.value(of: resent, renderer: core.renderer), status: .created)
            } catch let error as MockResendError {
                throw Self.badRequest(error.message)
            }
        }
        router.post("/api/v1/notifications/{id}/release") { request, context in
            var request = request
            let record = try await Self.record(core, context)
            let object = try await Self.body(&request, allowEmpty: true)
            let token = try object["token"]?.stringValue.map(Self.parseToken)
            guard server.releaser != nil else {
                return Self.error(.conflict, "releasing is off: start herald mock with --release-to sandbox|production|HOST:PORT and the target's credentials")
            }
            do {
                return Self.json(try await server.release(record, to: token).jsonValue)
            } catch let error as MockResendError {
                throw Self.badRequest(error.message)
            }
        }
        router.delete("/api/v1/notifications") { _, _ in
            try await server.clearNotifications()
            return Response(status: .noContent)
        }
        router.get("/api/v1/devices") { request, _ in
            let parameters = request.uri.queryParameters
            let limit = try Self.query { parameters[Substring($0)].map(String.init) }.limit
            let language = parameters["lang"].map(String.init)
            // The devices heard from most recently first.
            var devices = server.devices.sorted { ($0.lastSeen ?? .distantPast) > ($1.lastSeen ?? .distantPast) }
            let total = devices.count
            devices = Array(devices.prefix(limit))
            if let language, !language.isEmpty {
                var rebuilt: [MockDevice] = []
                for device in devices {
                    rebuilt.append(try await DeviceReplay.rebuild(device, from: core.recordStore, renderer: core.renderer(for: language)))
                }
                devices = rebuilt
            }
            return Self.json(["total": .number(JSONNumber(total)), "devices": .array(devices.map(\.jsonValue))])
        }
        router.get("/api/v1/devices/{token}") { request, context in
            let token = try Self.token(context)
            guard var device = server.device(token) else { return Self.error(.notFound, "no simulated device has token \(token.hex)") }
            if let language = request.uri.queryParameters["lang"].map(String.init), !language.isEmpty {
                device = try await DeviceReplay.rebuild(device, from: core.recordStore, renderer: core.renderer(for: language))
            }
            return Self.json(device.jsonValue)
        }
        // A device's Live Activities: an update token's, or those a push-to-start token started.
        router.get("/api/v1/devices/{token}/activities") { _, context in
            let token = try Self.token(context)
            guard let activities = core.activities(of: token, at: core.configuration.now()) else {
                return Self.error(.notFound, "no simulated device has token \(token.hex)")
            }
            return Self.json(["activities": .array(activities)])
        }
        router.post("/api/v1/devices") { request, _ in
            var request = request
            let object = try await Self.body(&request)
            guard let hex = object["token"]?.stringValue else { throw Self.badRequest("the body needs \"token\": the device token in hex") }
            let token = try Self.parseToken(hex)
            let environment = try object["environment"]?.stringValue.map { (name: String) throws -> APNsEnvironment in
                guard let value = APNsEnvironment(rawValue: name) else { throw Self.badRequest("environment is sandbox or production, not \(name)") }
                return value
            }
            let device = server.registerDevice(token, topic: object["topic"]?.stringValue, environment: environment)
            return Self.json(device.jsonValue, status: .created)
        }
        router.post("/api/v1/devices/{token}/unregister") { request, context in
            var request = request
            let token = try Self.token(context)
            let object = try await Self.body(&request, allowEmpty: true)
            var date = Date()
            if let timestamp = object["timestamp"] {
                // Unix milliseconds up to the year 9999: APNs answers 410 with this as a whole number.
                guard let millis = timestamp.numberValue.flatMap({ Double($0.text) }), (0...253_402_300_799_999).contains(millis) else {
                    return Self.error(.badRequest, "timestamp is Unix milliseconds, from 0 to 253402300799999 (the year 9999)")
                }
                date = Date(timeIntervalSince1970: millis / 1000)
            }
            server.unregister(token, at: date)
            return Self.json(server.device(token)?.jsonValue ?? .null)
        }
        router.post("/api/v1/devices/{token}/register") { _, context in
            let token = try Self.token(context)
            guard server.device(token) != nil else { return Self.error(.notFound, "no simulated device has token \(token.hex)") }
            server.reactivate(token)
            return Self.json(server.device(token)?.jsonValue ?? .null)
        }
        router.delete("/api/v1/devices/{token}") { _, context in
            let token = try Self.token(context)
            return server.removeDevice(token) ? Response(status: .noContent) : Self.error(.notFound, "no simulated device has token \(token.hex)")
        }
        router.get("/api/v1/faults") { _, _ in
            Self.json(["faults": .array(server.faults.map { Self.fault(id: $0.id, rule: $0.rule) })])
        }
        router.post("/api/v1/faults") { request, _ in
            var request = request
            let object = try await Self.body(&request)
            guard let text = object["rule"]?.stringValue else { throw Self.badRequest("the body needs \"rule\", such as \"status=503/ServiceUnavailable,every=10\"") }
            let rule: FaultRule
            do throws(FaultRuleError) { rule = try FaultRule(parsing: text) } catch { throw Self.badRequest(error.description) }
            let id = server.addFault(rule)
            return Self.json(Self.fault(id: id, rule: rule), status: .created)
        }
        router.delete("/api/v1/faults/{id}") { _, context in
            guard let id = context.parameters.get("id", as: Int.self), server.removeFault(id: id) else {
                return Self.error(.notFound, "no fault rule has that id")
            }
            return Response(status: .noContent)
        }
        router.delete("/api/v1/faults") { _, _ in
            server.removeAllFaults()
            return Response(status: .noContent)
        }
        router.get("/api/v1/connections") { request, _ in
            let parameters = request.uri.queryParameters
            let limit = try Self.query { parameters[Substring($0)].map(String.init) }.limit
            let connection = try parameters["connection"].map { text -> Int in
                guard let value = Int(text), value > 0 else { throw Self.badRequest("connection is a connection number (1 or more)") }
                return value
            }
            let kind = try parameters["kind"].map { text -> ConnectionEvent.Kind in
                guard let kind = ConnectionEvent.Kind(rawValue: String(text)) else {
                    throw Self.badRequest("kind is one of \(ConnectionEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return kind
            }
            let events = core.connectionLog.events(limit: limit, connection: connection, kind: kind)
            return Self.json(["events": .array(events.map(\.jsonValue))])
        }
        router.get("/api/v1/channels") { _, _ in
            Self.json(["channels": .array(server.channels.map { $0.jsonValue(subscribers: core.channels.subscribers(of: $0.id).count) })])
        }
        router.post("/api/v1/channels/{id}/subscribers") { request, context in
            var request = request
            let id = context.parameters.get("id") ?? ""
            guard core.channels.channel(id: id) != nil else { return Self.error(.notFound, "no channel \(id)") }
            let object = try await Self.body(&request)
            guard let hex = object["token"]?.stringValue else { throw Self.badRequest("the body needs \"token\"") }
            server.subscribe(try Self.parseToken(hex), toChannel: id)
            return Response(status: .noContent)
        }
        router.post("/api/v1/reset") { _, _ in
            try await server.reset()
            return Response(status: .noContent)
        }
        router.get("/api/v1/events") { _, _ in
            let stream = server.events()
            let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]
            return Response(status: .ok, headers: headers, body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: ": herald mock events\n\n"))
                for await event in stream {
                    switch event {
                    case .received(let record):
                        try await writer.write(Self.serverSentEvent("notification", id: record.id, record.jsonValue))
                    case .cleared:
                        try await writer.write(Self.serverSentEvent("cleared", [:]))
                    case .connection(let event):
                        try await writer.write(Self.serverSentEvent("connection", event.jsonValue))
                    }
                }
                try await writer.finish(nil)
            })
        }
        router.get("/api/v1/openapi.json") { _, _ in
            Self.json(Self.openAPIDocument)
        }
        router.get("/metrics") { _, _ in
            let text = core.metrics.exposition(devices: core.devices.count, records: try await core.recordStore.count())
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"], body: .init(byteBuffer: ByteBuffer(bytes: text)))
        }
        return router
    }

    // MARK: Helpers

    /// One Server-Sent Event: its name, its id if any, and `data` as one line of JSON.
    static func serverSentEvent(_ name: String, id: Int? = nil, _ data: JSONValue) -> ByteBuffer {
        var out = JSONWriter(output: JSONBytes())
        out.value(data)
        var buffer = ByteBuffer(string: "event: \(name)\n" + (id.map { "id: \($0)\n" } ?? "") + "data: ")
        buffer.writeBytes(out.output.bytes)
        buffer.writeString("\n\n")
        return buffer
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        .json(value, status: status)
    }

    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        APIError.response(status, message)
    }

    static func badRequest(_ message: String) -> HTTPError {
        HTTPError(.badRequest, message: message)
    }

    /// The most a page of records writes, in bytes (8 MiB): records are added newest first
    /// until the next would pass it (the first always goes in), and the page then says
    /// `"truncated": true` and the `next` id to pass as `before`. A record is bounded too (a
    /// body of at most 64 KB, its first 100 findings, rendered text capped by the formatter),
    /// so a page is at most this plus one record, whatever the payloads were.
    static let maximumPageBytes = 8 << 20

    /// `{"total", "count", "truncated", "next", "notifications"}`, bounded by
    /// ``maximumPageBytes``.
    static func page(_ page: RecordPage, renderer: NotificationRenderer) -> Response {
        var items: [[UInt8]] = []
        var size = 0
        for record in page.records {
            var writer = JSONWriter(output: JSONBytes())
            writer.value(value(of: record, renderer: renderer))
            let bytes = writer.output.bytes
            guard items.isEmpty || size + bytes.count + 1 <= maximumPageBytes else { break }
            size += bytes.count + 1
            items.append(bytes)
        }
        let truncated = items.count < page.records.count
        var head = JSONWriter(output: JSONBytes())
        head.beginObject()
        head.key("total")
        head.integer(Int64(page.total))
        head.key("count")
        head.integer(Int64(items.count))
        head.key("truncated")
        head.bool(truncated)
        head.key("next")
        if truncated { head.integer(page.records[items.count - 1].id) } else { head.null() }
        head.key("notifications")
        var output = head.output.bytes
        output.reserveCapacity(output.count + size + 3)
        output.append(UInt8(ascii: "["))
        for (index, item) in items.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: item)
        }
        output.append(contentsOf: Array("]}".utf8))
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: output)))
    }

    /// A record's JSON, rendered by `renderer` (the mock's own, or another language's).
    static func value(of record: NotificationRecord, renderer: NotificationRenderer) -> JSONValue {
        var record = record
        record.renderer = renderer
        return record.jsonValue
    }

    /// The record named by the route's `{id}` (an apns-id or a record id), or 404.
    static func record(_ core: MockCore, _ context: BasicRequestContext) async throws -> NotificationRecord {
        let id = context.parameters.get("id") ?? ""
        guard let record = try await core.recordStore.find(id: id) else {
            throw HTTPError(.notFound, message: "no recorded request has apns-id or id \(id)")
        }
        return record
    }

    static func parseToken(_ hex: String) throws -> DeviceToken {
        do { return try DeviceToken(hex: hex) } catch { throw badRequest("device token: \(error)") }
    }

    static func token(_ context: BasicRequestContext) throws -> DeviceToken {
        try parseToken(context.parameters.get("token") ?? "")
    }

    static func body(_ request: inout Request, allowEmpty: Bool = false) async throws -> JSONObject {
        let buffer = try await request.collectBody(upTo: 1 << 20)
        if buffer.readableBytes == 0 && allowEmpty { return JSONObject() }
        let bytes = Array(buffer.readableBytesView)
        let document: JSONDocument
        do { document = try JSONDocument(parsing: bytes) } catch { throw badRequest("the body is not JSON: \(error)") }
        guard let object = document.root.value.objectValue else { throw badRequest("the body must be a JSON object") }
        return object
    }

    static func query(_ parameter: (String) -> String?) throws -> NotificationQuery {
        var query = NotificationQuery()
        func int(_ name: String) throws -> Int? {
            guard let text = parameter(name) else { return nil }
            guard let value = Int(text), value >= 0 else { throw badRequest("\(name) must be a whole number, not \(text)") }
            return value
        }
        if let limit = try int("limit") { query.limit = limit }
        query.before = try int("before")
        query.status = try int("status")
        query.token = parameter("token")
        query.topic = parameter("topic")
        query.reason = parameter("reason")
        query.pushType = parameter("pushType")
        query.kind = parameter("kind")
        query.channelID = parameter("channelId")
        query.search = parameter("q")
        if let accepted = parameter("accepted") {
            guard let value = Bool(accepted) else { throw badRequest("accepted must be true or false") }
            query.accepted = value
        }
        return query
    }

    static func fault(id: Int, rule: FaultRule) -> JSONValue {
        ["id": .number(JSONNumber(id)), "rule": .string(rule.description)]
    }

    static func status(_ server: MockAPNsServer) -> JSONValue {
        let configuration = server.configuration
        let transport: String = switch configuration.transport {
        case .plaintext: "plaintext"
        case .generatedTLS: "tls (generated CA)"
        case .tls: "tls"
        }
        let authentication: String = if case .certificate = configuration.authentication { "certificate" } else { "token" }
        let hints = server.pasteHints
        return [
            "version": .string(HeraldVersion.description),
            "paste": [
                "herald": .string(hints.herald), "trustFile": hints.trustFile.map { .string($0) } ?? .null,
                "keyFiles": .object(JSONObject(members: hints.keyFiles.sorted { $0.key < $1.key }.map { .init(key: $0.key, value: .string($0.value)) })),
            ],
            "providerURL": .string(server.providerURL), "port": .number(JSONNumber(server.port)),
            "channelPort": server.channelPort.map { .number(JSONNumber($0)) } ?? .null,
            "environment": .string(configuration.environment.rawValue), "transport": .string(transport),
            "authentication": .string(authentication),
            "keys": .array(configuration.keys.map { ["keyId": .string($0.keyID.rawValue), "teamId": .string($0.teamID.rawValue)] }),
            "verifiesSignatures": .bool(!configuration.keys.isEmpty), "strict": .bool(configuration.strict),
            "storeCapacity": .number(JSONNumber(configuration.storeCapacity)),
            "deviceHistories": .number(JSONNumber(configuration.deviceHistories)),
            "database": configuration.databasePath.map { .string($0) } ?? .null,
            "languages": .array(server.languages.map { .string($0) }),
            "language": .string(server.core.renderer.localizer.language),
            "release": server.releaser.map { .string($0.target.name) } ?? .null,
        ]
    }
}
