import HeraldHTTPAPI
import HeraldJSON
import Hummingbird

/// An app's webhook events and what their last attempt got: what the console's webhook page
/// lists, so a failing receiver shows without reading logs.
extension GatewayAPI {
    static func addWebhooks(to router: Router<BasicRequestContext>, server: GatewayServer) {
        router.get("/v1/apps/{app}/webhooks") { request, context in
            let app = try await server.app(request, context)
            let query = request.uri.queryParameters
            let before = try query["before"].map { text -> Int64 in
                guard let value = Int64(text), value > 0 else { throw APIRefusal(status: .badRequest, message: "before is an event id (a whole number from 1)") }
                return value
            }
            let limit = try Self.limit(query["limit"], default: 50)
            let events = try await server.store.webhookEvents(app: app.id, before: before, limit: limit)
            return Self.json([
                "url": app.webhook.map { .string($0.url) } ?? .null,
                "events": .array(events.map(Self.webhookEventValue)),
                "next": events.count == limit ? events.last.map { .number(JSONNumber($0.id)) } ?? .null : .null,
            ])
        }
    }

    static func webhookEventValue(_ event: StoredWebhookEvent) -> JSONValue {
        let type = (try? JSONDocument(parsing: Array(event.body.utf8)))?.root["type"]?.stringValue
        return [
            "id": .number(JSONNumber(event.id)), "type": type.map { .string($0) } ?? .null, "state": .string(event.state),
            "attempts": .number(JSONNumber(event.attempts)), "lastError": event.lastError.map { .string($0) } ?? .null,
            "lastStatus": event.lastAttempt?.status.map { .number(JSONNumber($0)) } ?? .null,
            "lastLatencyMs": event.lastAttempt.map { .number(JSONNumber($0.milliseconds)) } ?? .null,
            "lastAnswer": event.lastAttempt?.answer.map { .string($0) } ?? .null,
            "createdAt": APITime.json(event.createdAt), "sentAt": APITime.json(event.sentAt),
            "dueAt": event.state == "queued" || event.state == "claimed" ? APITime.json(event.dueAt) : .null,
        ]
    }
}
