import HeraldHTTPAPI
import HeraldJSON
import HeraldLint
import HeraldProtocol
import Hummingbird
import NIOCore

/// Notifications: submit, list, look one up with its deliveries.
extension GatewayAPI {
    static func addNotifications(to router: Router<BasicRequestContext>, server: GatewayServer) {
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
        // A dry run: what POST would answer about this body (refused, and why, or accepted
        // with its findings), the audience's size, and each variant as a device shows it.
        // Nothing is stored or sent.
        router.post("/v1/apps/{app}/notifications/check") { request, context in
            var request = request
            let app = try await server.app(request, context)
            let limit = Self.maximumBodyBytes(tokens: server.configuration.maximumTokensPerRequest)
            let body: ByteBuffer
            do {
                body = try await request.collectBody(upTo: limit)
            } catch is NIOTooManyBytesError {
                throw HTTPError(.contentTooLarge, message: "the body is over \(limit) bytes")
            }
            return try await server.check(Array(body.readableBytesView), app: app)
        }
        // Newest first, in pages that stay whole while submissions arrive: `next` is the
        // cursor after the last job of the page.
        router.get("/v1/apps/{app}/notifications") { request, context in
            let app = try await server.app(request, context)
            let query = request.uri.queryParameters
            let status: JobStatus? = try Self.choice(query["status"], named: "status")
            func time(_ name: String) throws -> Int64? {
                try query[Substring(name)].map { text in
                    guard let milliseconds = APITime.parse(String(text)) else {
                        throw APIRefusal(status: .badRequest, message: "\(name) is an RFC 3339 time, such as 2026-11-27T09:00:00Z")
                    }
                    return milliseconds
                }
            }
            let before = try query["before"].map { text in
                guard let cursor = JobCursor(token: String(text)) else { throw APIRefusal(status: .badRequest, message: "before is the \"next\" of an earlier page") }
                return cursor
            }
            let limit = try Self.limit(query["limit"], default: 100)
            let now = server.nowMilliseconds
            let jobs = try await server.store.jobs(
                app: app.id, status: status, now: now, from: try time("from"), until: try time("until"), before: before, limit: limit)
            return Self.json([
                "notifications": .array(jobs.map { Self.jobValue($0, now: now) }),
                "next": jobs.count == limit ? jobs.last.map { .string(JobCursor(createdAt: $0.createdAt, id: $0.id).token) } ?? .null : .null,
            ])
        }
        router.get("/v1/apps/{app}/notifications/{id}") { request, context in
            let app = try await server.app(request, context)
            let id = try context.parameters.require("id")
            guard let job = try await server.store.job(app: app.id, id: id) else { return Self.error(.notFound, "no notification \(id) for \(app.id)") }
            return Self.json(Self.jobValue(job, now: server.nowMilliseconds))
        }
        // Cancel: what is not yet handed to APNs is not sent; what is in flight finishes. Again
        // on a cancelled notification: the same answer.
        @Sendable func cancel(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
            let app = try await server.app(request, context)
            let id = try context.parameters.require("id")
            let now = server.nowMilliseconds
            var webhook: (@Sendable (StoredDelivery) -> String)?
            if app.webhook?.events.contains(.cancelled) == true {
                let metadata = try await server.store.jobContent(id: id)?.metadata
                webhook = { [app] delivery in WebhookEvents.cancelled(app: app.id, job: id, delivery: delivery, metadata: metadata, now: now) }
            }
            guard let job = try await server.store.cancel(app: app.id, job: id, webhook: webhook, now: now) else {
                return Self.error(.notFound, "no notification \(id) for \(app.id)")
            }
            var value = Self.jobValue(job, now: now).objectValue ?? JSONObject()
            let sent = [DeliveryState.accepted, .rejected, .expired].reduce(0) { $0 + (job.counts[$1] ?? 0) }
            value.members.append(.init(key: "cancel", value: [
                "cancelled": .number(JSONNumber(job.counts[.cancelled] ?? 0)), "sent": .number(JSONNumber(sent)),
                "finishing": .number(JSONNumber((job.counts[.claimed] ?? 0) + (job.counts[.queued] ?? 0))),
                "skipped": .number(JSONNumber(job.counts[.skipped] ?? 0)), "total": .number(JSONNumber(job.tokenCount)),
            ]))
            return Self.json(.object(value))
        }
        router.post("/v1/apps/{app}/notifications/{id}/cancel", use: cancel)
        router.delete("/v1/apps/{app}/notifications/{id}", use: cancel)
        router.get("/v1/apps/{app}/notifications/{id}/deliveries") { request, context in
            let app = try await server.app(request, context)
            let id = try context.parameters.require("id")
            guard let job = try await server.store.job(app: app.id, id: id) else { return Self.error(.notFound, "no notification \(id) for \(app.id)") }
            let query = request.uri.queryParameters
            let state: DeliveryState? = try Self.choice(query["state"], named: "state")
            let after = try query["after"].map { text -> Int64 in
                guard let value = Int64(text), value >= 0 else { throw APIRefusal(status: .badRequest, message: "after is a delivery id (a whole number from 0)") }
                return value
            }
            let limit = try Self.limit(query["limit"])
            let deliveries = try await server.store.deliveries(job: id, state: state, after: after, limit: limit)
            return Self.json([
                "metadata": WebhookEvents.metadataValue(job.metadata),
                "deliveries": .array(deliveries.map(Self.deliveryValue)),
                "next": deliveries.count == limit ? deliveries.last.map { .number(JSONNumber($0.id)) } ?? .null : .null,
            ])
        }
    }

    // MARK: Shapes

    /// A job: its status at `now`, counts by state (when looked up alone), what waits, its
    /// headers as submitted (numbers as numbers), its audience and schedule, times and metadata.
    static func jobValue(_ job: JobSummary, now: Int64) -> JSONValue {
        var object: JSONObject = [
            "id": .string(job.id), "app": .string(job.app), "status": .string(job.status(at: now).rawValue), "tokens": .number(JSONNumber(job.tokenCount)),
            "pending": .number(JSONNumber(job.open)),
        ]
        if !job.counts.isEmpty {
            var counts = JSONObject()
            for state in DeliveryState.allCases { counts.members.append(.init(key: state.rawValue, value: .number(JSONNumber(job.counts[state] ?? 0)))) }
            object.members.append(.init(key: "counts", value: .object(counts)))
        }
        object.members.append(.init(key: "headers", value: headersValue(Submission.headers(fromJSON: job.headers))))
        object.members.append(.init(key: "audience", value: job.audience.map { .string($0) } ?? "tokens"))
        object.members.append(.init(key: "usersWithoutDevices", value: .number(JSONNumber(job.usersWithoutDevices))))
        object.members.append(.init(key: "createdAt", value: APITime.json(job.createdAt)))
        object.members.append(.init(key: "sendAt", value: APITime.json(job.sendAt)))
        object.members.append(.init(key: "localTime", value: job.localTime.map { .string($0) } ?? .null))
        object.members.append(.init(key: "startedAt", value: APITime.json(job.startedAt)))
        // A schedule that waited (every gateway down when it was due) says how late it began.
        var late: JSONValue = .null
        if let started = job.startedAt, let sendAt = job.sendAt, started - sendAt >= 1_000 { late = .number(JSONNumber(floatLiteral: Double(started - sendAt) / 1_000)) }
        object.members.append(.init(key: "lateBy", value: late))
        object.members.append(.init(key: "cancelledAt", value: APITime.json(job.cancelledAt)))
        object.members.append(.init(key: "finishedAt", value: APITime.json(job.finishedAt)))
        object.members.append(.init(key: "retryUntil", value: APITime.json(job.expiresAt)))
        object.members.append(.init(key: "metadata", value: WebhookEvents.metadataValue(job.metadata)))
        return .object(object)
    }

    /// The headers as a submission gives them: `priority` and `expiration` numbers.
    static func headersValue(_ headers: APNsRequestHeaders) -> JSONValue {
        var object = JSONObject()
        func add(_ key: String, _ value: JSONValue?) { if let value { object.members.append(.init(key: key, value: value)) } }
        add("pushType", headers.pushType.map { .string($0.rawValue) })
        add("priority", headers.priority.flatMap { Int($0.headerValue) }.map { .number(JSONNumber($0)) })
        add("topic", headers.topic.map { .string($0) })
        add("collapseId", headers.collapseID.map { .string($0.value) })
        add("expiration", headers.expiration.flatMap { Int64($0.headerValue) }.map { .number(JSONNumber($0)) })
        return .object(object)
    }

    static func deliveryValue(_ delivery: StoredDelivery) -> JSONValue {
        [
            "id": .number(JSONNumber(delivery.id)), "token": .string(delivery.token), "apnsId": .string(delivery.apnsID),
            "state": .string(delivery.state.rawValue), "attempts": .number(JSONNumber(delivery.attempts)),
            "status": delivery.status.map { .number(JSONNumber($0)) } ?? .null, "reason": delivery.reason.map { .string($0) } ?? .null,
            // Apple's meaning of the reason, when it is one of Apple's.
            "meaning": delivery.reason.flatMap { APNsReason(rawValue: $0).info?.meaning }.map { .string($0) } ?? .null,
            "unregisteredAt": APITime.json(delivery.unregisteredAt), "updatedAt": APITime.json(delivery.updatedAt),
            // When a queued one is due (a schedule in its zone).
            "dueAt": delivery.state == .queued ? APITime.json(delivery.dueAt) : .null,
        ]
    }

    /// A finding; its pointer into the request (`/payload/aps/badge`), or, under `prefix` with
    /// `replacing` taken off the front, into a variant (`/localized/fr/body`).
    static func findingValue(_ diagnostic: LintDiagnostic, under prefix: String = "/payload", replacing: String = "") -> JSONValue {
        [
            "rule": .string(diagnostic.rule.rawValue), "severity": .string(diagnostic.severity.rawValue), "message": .string(diagnostic.message),
            "pointer": diagnostic.pointer.map { .string(prefix + $0.description.dropFirst(replacing.count)) } ?? .null,
            "line": diagnostic.location.map { .number(JSONNumber($0.line)) } ?? .null,
            "column": diagnostic.location.map { .number(JSONNumber($0.column)) } ?? .null,
        ]
    }
}
