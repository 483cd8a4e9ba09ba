import HeraldClient
import HeraldHTTPAPI
import HeraldJSON
import Hummingbird
import NIOCore

/// The web console (`/console/`, its files embedded from `Console/Web/`) and what it reads that
/// the rest of the API does not give: `/v1/stats`, this process's last hour.
extension GatewayAPI {
    /// The console's headers: a Content-Security-Policy with no inline code and nothing from
    /// elsewhere, no framing, no referrer, no sniffing.
    static let consoleHeaders: HTTPFields = [
        .contentSecurityPolicy: "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        .init("X-Content-Type-Options")!: "nosniff", .init("Referrer-Policy")!: "no-referrer", .cacheControl: "no-cache",
    ]

    static func addConsole(to router: Router<BasicRequestContext>, server: GatewayServer) {
        // `/console` and `/console/` are one route (the router ignores a trailing slash).
        for (path, asset) in ConsoleAssets.byPath {
            router.get(RouterPath(path == "/" ? "/console" : "/console" + path)) { _, _ in
                var headers = consoleHeaders
                headers[.contentType] = asset.contentType
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: asset.text)))
            }
        }
        // This process's last hour in ten-second buckets (what the console charts), counting
        // the apps the key may see; and each app's APNs connections here.
        router.get("/v1/stats") { request, _ in
            let key = try await server.authorize(request, app: nil, adminOnly: false)
            let minutes = try request.uri.queryParameters["minutes"].map { text in
                guard let value = Int(text), (1...60).contains(value) else { throw APIRefusal(status: .badRequest, message: "minutes is from 1 to 60") }
                return value
            } ?? 60
            let visible: (String) -> Bool = { app in key.apps?.contains(app) ?? true }
            let series = server.metrics.history.series(minutes: minutes, include: visible)
            var apps: [JSONValue] = []
            for stored in try await server.store.apps() where visible(stored.id) {
                let status = await server.apps.connectionStatus(stored.id)
                // connected, refusing (backing off), idle, or unused (no send from this process).
                let apns = status.map { $0.failedAttempts > 0 ? "refusing" : $0.open > 0 ? "connected" : "idle" } ?? "unused"
                apps.append([
                    "app": .string(stored.id), "state": .string(stored.pausedAt == nil ? "active" : "paused"), "apns": .string(apns),
                    "connections": status.map { .number(JSONNumber($0.open)) } ?? .null,
                    "failedAttempts": .number(JSONNumber(status?.failedAttempts ?? 0)),
                    "lastFailure": status?.lastFailure.map { .string($0.description) } ?? .null,
                    "nextAttemptIn": status?.nextAttemptIn.map { .number(JSONNumber(floatLiteral: Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18)) } ?? .null,
                ])
            }
            return Self.json([
                "worker": .string(server.workerName), "bucketSeconds": .number(JSONNumber(SendHistory.bucketSeconds)),
                "buckets": .array(series.map { bucket in
                    [
                        "at": APITime.json(bucket.start), "submitted": .number(JSONNumber(bucket.counts.submitted)),
                        "accepted": .number(JSONNumber(bucket.counts.accepted)), "rejected": .number(JSONNumber(bucket.counts.rejected)),
                        "retried": .number(JSONNumber(bucket.counts.retried)), "expired": .number(JSONNumber(bucket.counts.expired)),
                        "queueWaiting": bucket.queueWaiting.map { .number(JSONNumber($0)) } ?? .null,
                    ]
                }),
                "apps": .array(apps),
            ])
        }
    }
}
