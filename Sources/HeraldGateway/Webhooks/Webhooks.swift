import Crypto
import Foundation
import HeraldHTTPAPI
import HeraldJSON
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The signature on every webhook, for receivers to check: `Herald-Signature: t=<unix seconds>,
/// v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the app's webhook secret>` (the time inside
/// the signed text lets a receiver refuse old replays).
enum WebhookSignature {
    static let header = "Herald-Signature"

    static func value(body: [UInt8], secret: String, timestamp: Int64) -> String {
        var message = Array(String(timestamp).utf8)
        message.append(UInt8(ascii: "."))
        message += body
        let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Array(secret.utf8)))
        return "t=\(timestamp),v1=" + code.map { String(format: "%02x", $0) }.joined()
    }
}

/// The webhook events' bodies: one JSON object each, `{"id", "type", "app", "at", …}` with the
/// type's members, and the submission's `metadata` (the sender's own ids) on every event about a
/// notification or its deliveries.
enum WebhookEvents {
    /// The events a delivery's outcome raises for its app's webhook.
    static func bodies(
        for outcome: DeliveryOutcome.Result, delivery: ClaimedDelivery, metadata: String?, webhook: GatewayApp.Webhook?, now: Int64
    ) -> [String] {
        guard let webhook else { return [] }
        var events: [(GatewayApp.Webhook.Event, [(String, JSONValue)])] = []
        switch outcome {
        case .accepted(let status):
            events.append((.accepted, [("status", .number(JSONNumber(status)))]))
        case .rejected(let status, let reason, let unregisteredAt, let dead):
            let details: [(String, JSONValue)] = [
                ("status", status.map { .number(JSONNumber($0)) } ?? .null), ("reason", reason.map { .string($0) } ?? .null),
                ("unregisteredAt", APITime.json(unregisteredAt)),
            ]
            events.append((.rejected, details))
            if dead { events.append((.tokenDead, details)) }
        case .expired(let reason):
            events.append((.expired, [("reason", reason.map { .string($0) } ?? .null)]))
        case .retry:
            break
        }
        return events.filter { webhook.events.contains($0.0) }.map { event, details in
            body(event, app: delivery.app, now: now, [
                ("job", .string(delivery.job)), ("token", .string(delivery.token)), ("apnsId", .string(delivery.apnsID)),
            ] + details + [("metadata", metadataValue(metadata))])
        }
    }

    /// `job.done`: the notification's last delivery became final; its counts by state.
    static func jobDone(app: String, job: String, metadata: String?, counts: [DeliveryState: Int], now: Int64) -> String {
        var byState = JSONObject()
        for state in DeliveryState.allCases { byState.members.append(.init(key: state.rawValue, value: .number(JSONNumber(counts[state] ?? 0)))) }
        return body(.jobDone, app: app, now: now, [("job", .string(job)), ("counts", .object(byState)), ("metadata", metadataValue(metadata))])
    }

    /// `delivery.cancelled`: cancelled before it was handed to APNs.
    static func cancelled(app: String, job: String, delivery: StoredDelivery, metadata: String?, now: Int64) -> String {
        body(.cancelled, app: app, now: now, [
            ("job", .string(job)), ("token", .string(delivery.token)), ("apnsId", .string(delivery.apnsID)), ("metadata", metadataValue(metadata)),
        ])
    }

    /// `app.paused`: APNs refused the app's credentials or server; its deliveries wait.
    static func appPaused(app: String, reason: String, advice: String, now: Int64) -> String {
        body(.appPaused, app: app, now: now, [("reason", .string(reason)), ("advice", .string(advice))])
    }

    /// The metadata as stored (a JSON object's text), or `null`.
    static func metadataValue(_ text: String?) -> JSONValue {
        guard let text, let document = try? JSONDocument(parsing: Array(text.utf8)) else { return .null }
        return document.root.value
    }

    private static func body(_ event: GatewayApp.Webhook.Event, app: String, now: Int64, _ members: [(String, JSONValue)]) -> String {
        var object = JSONObject()
        object.members.append(.init(key: "id", value: .string(UUID().uuidString.lowercased())))
        object.members.append(.init(key: "type", value: .string(event.rawValue)))
        object.members.append(.init(key: "app", value: .string(app)))
        object.members.append(.init(key: "at", value: APITime.json(now)))
        for (key, value) in members { object.members.append(.init(key: key, value: value)) }
        var writer = JSONWriter(output: JSONBytes())
        writer.value(.object(object))
        return String(decoding: writer.output.bytes, as: UTF8.self)
    }
}
