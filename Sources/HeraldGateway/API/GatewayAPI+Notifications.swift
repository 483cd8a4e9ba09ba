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
        // Newest first, in pages that stay whole while submissions arrive: `next` is the
        // cursor after the last job of the page.
        router.get("/v1/apps/{app}/notifications") { request, context in
            let app = try await server.app(request, context)
            let query = request.uri.queryParameters
            let status = try query["status"].map { text -> JobStatus in
                guard let status = JobStatus(rawValue: String(text)) else {
                    throw APIRefusal(status: .badRequest, message: "status is one of \(JobStatus.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return status
            }
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
            let jobs = try await server.store.jobs(app: app.id, status: status, from: try time("from"), until: try time("until"), before: before, limit: limit)
            return Self.json([
                "notifications": .array(jobs.map { Self.jobValue($0) }),
                "next": jobs.count == limit ? jobs.last.map { .string(JobCursor(createdAt: $0.createdAt, id: $0.id).token) } ?? .null : .null,
            ])
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
            guard let job = try await server.store.job(app: app.id, id: id) else { return Self.error(.notFound, "no notification \(id) for \(app.id)") }
            let query = request.uri.queryParameters
            let state = try query["state"].map { text -> DeliveryState in
                guard let state = DeliveryState(rawValue: String(text)) else {
                    throw APIRefusal(status: .badRequest, message: "state is one of \(DeliveryState.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return state
            }
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

    /// A job: its status, counts by state (when looked up alone), what waits, its headers as
    /// submitted (numbers as numbers), its times and metadata.
    static func jobValue(_ job: JobSummary) -> JSONValue {
        var object: JSONObject = [
            "id": .string(job.id), "app": .string(job.app), "status": .string(job.status.rawValue), "tokens": .number(JSONNumber(job.tokenCount)),
            "pending": .number(JSONNumber(job.open)),
        ]
        if !job.counts.isEmpty {
            var counts = JSONObject()
            for state in DeliveryState.allCases { counts.members.append(.init(key: state.rawValue, value: .number(JSONNumber(job.counts[state] ?? 0)))) }
            object.members.append(.init(key: "counts", value: .object(counts)))
        }
        object.members.append(.init(key: "headers", value: headersValue(Submission.headers(fromJSON: job.headers))))
        object.members.append(.init(key: "createdAt", value: APITime.json(job.createdAt)))
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
            "unregisteredAt": APITime.json(delivery.unregisteredAt), "updatedAt": APITime.json(delivery.updatedAt),
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
