import ArgumentParser
import Foundation
import HeraldGateway
import Logging
import ServiceLifecycle

/// `herald serve`: the push gateway.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run a push gateway: a REST API that queues notifications durably and sends them to APNs.",
        discussion: """
            Your backend hands notifications to the gateway instead of calling APNs from its request \
            handlers: POST /v1/apps/<app>/notifications with the payload and the device tokens (or a \
            stored audience) is acknowledged once stored; workers send at APNs' pace through \
            Herald's client, retry what may be retried until the notification expires, mark tokens \
            APNs calls dead (later submissions skip them), and keep every token's outcome \
            (GET /v1/apps/<app>/notifications/<id>/deliveries). A payload with lint errors (what \
            APNs rejects, and what the device would ignore, as herald send refuses them) is refused \
            at the door with 422 and the findings; an expiration already past too.

            One machine: SQLite.
              herald serve --db gateway.db
            Several processes or machines: one PostgreSQL database for all of them. Workers claim \
            deliveries with SELECT ... FOR UPDATE SKIP LOCKED, under leases a live process keeps \
            extending; a process sends a delivery only while its lease outlasts the send, so a \
            takeover never overlaps a live sender; a process cut off mid-transaction loses its \
            session (and its locks) within seconds, and its claims are taken over once their \
            lease runs out.
              herald serve --postgres postgres://herald:secret@db.internal:5432/herald

            Nothing accepted is lost. Duplicates: a process that dies mid-send (SIGKILL, a crash, \
            power) has its claims taken over once their lease runs out, and those it had sent are \
            sent again, with the same apns-id so a receiver can tell: at most --in-flight of them \
            per death. The same holds for outcomes waiting to be recorded when the database stays \
            unreachable for longer than --claim-lease. Nothing else sends twice.

            The database away, or its disk full: API calls answer 503 with Retry-After (nothing \
            half done), /readyz answers 503 within two seconds, no new deliveries are sent, what \
            was sent is recorded once it is back; the log says so once when it starts and once \
            when it ends. APNs away: one connection attempt at a time, backing off to 30 seconds; \
            deliveries wait and go out when it answers again. APNs refusing the app itself (a \
            wrong key, a certificate for another environment, a topic the key may not use, an \
            untrusted endpoint): the app is paused, its deliveries wait, the log and an \
            app.paused webhook say what to fix; fixing it with PATCH resumes it.

            The port is bound and the database checked before anything is created. At first start \
            an administrator API key is made and printed once (or set one with --admin-key-env \
            VAR; --new-admin-key makes another if the first was lost). With it, register an app:
              curl -H "Authorization: Bearer $KEY" -d @app.json \\
                  http://127.0.0.1:8080/v1/apps
            where app.json is {"bundleId": "com.example.app", "environment": "production", \
            "token": {"key": "<the .p8 file's text>", "keyId": "ABC123DEFG", "teamId": \
            "DEF123GHIJ"}} (or "certificate": {"p12": "<base64>", "password": "..."}). Optional: \
            "server": {"host", "port", "caCertificate": "<the CA's PEM text>", "plaintext": \
            true} sends to a herald mock instead of Apple; "rateLimit" is sends per second per \
            process; "concurrency" requests in flight per process; "webhook": {"url", "secret", \
            "events"} posts outcomes, signed with an HMAC in Herald-Signature. Then send:
              curl -H "Authorization: Bearer $KEY" -H "Idempotency-Key: order-1234" \\
                  -d '{"payload":{"aps":{"alert":"Hello"}},"tokens":["740f4707..."]}' \\
                  http://127.0.0.1:8080/v1/apps/com.example.app/notifications
            An Idempotency-Key makes a retried submission answer the first one, for as long as \
            the notification is kept (--retain-days). Devices: POST .../devices {"tokens": [...], \
            "user": "u-1", "language": "fr-CA", "timeZone": "Europe/Paris", "tags": [...]} (tags \
            replaced; "addTags" and "removeTags" edit them); DELETE .../users/<user> erases a \
            user. A submission may go to {"audience": {"users": [...]}}, carry "localized" \
            alerts (each device gets its language's), wait for "sendAt" (an RFC 3339 time, or \
            {"localTime": "2026-12-01T09:00"} in each device's zone), and be cancelled with \
            POST .../notifications/<id>/cancel.

            Change an app in place (devices and history stay), as in a key rotation:
              curl -X PATCH -H "Authorization: Bearer $KEY" -d @rotate.json \\
                  http://127.0.0.1:8080/v1/apps/com.example.app
            where rotate.json is {"token": {"key": "<the new .p8's text>", "keyId": \
            "NEWKEY1234"}}: a JSON merge patch, checked as at registration; sends under way finish \
            with the old key, the next use the new. POST .../resume resumes a paused app whose fix \
            was elsewhere. DELETE /v1/apps/<app> answers at once with what it removed.

            The console: open the printed address ending in /console/ in a browser and sign in \
            with an API key (a scoped key sees only its apps): apps and their credentials, a \
            composer that lints as you type, jobs with their progress and deliveries, devices, \
            keys and health. API keys travel in every request: serve HTTPS with \
            --tls-certificate FILE --tls-key FILE, or put TLS in front (a load balancer, a \
            reverse proxy) whenever the gateway listens on anything but 127.0.0.1; the console \
            warns in a banner when it is reached over plain HTTP from elsewhere.

            Operations: GET /healthz and /readyz for probes, /metrics for Prometheus (queue depth, \
            send rate, outcomes by reason, retries, latency, paused apps), /v1/openapi.json for \
            the API; an access line per request (never a key); times are RFC 3339 in UTC. \
            OpenTelemetry: --otlp-endpoint http://collector:4318 (or OTEL_EXPORTER_OTLP_ENDPOINT; \
            OTEL_SERVICE_NAME names the service) exports traces and metrics over OTLP/HTTP. A span \
            per API request (under the caller's W3C traceparent header, so the trace starts in \
            your backend), one per submission's commit, and one per delivery attempt with its \
            apns-id, status, reason, attempt and process, in the submission's trace whichever \
            process sends it; log lines inside a span carry trace_id and span_id. The metrics of \
            /metrics every OTEL_METRIC_EXPORT_INTERVAL milliseconds (a minute). A collector that \
            is slow or away never slows sending: spans past a bounded buffer are dropped and \
            counted (herald_gateway_trace_spans_total). \
            SIGTERM or SIGINT stops gracefully, within --grace seconds: the API and the claims stop \
            at once, what has not started sending is given back (another process may send it at \
            once), sends under way end and are recorded; whatever is left at the end of the grace \
            period is left to the leases.

            Exit status: 0 stopped normally, 2 bad arguments, a port in use or a database that \
            cannot be used.
            """
    )

    @Option(help: ArgumentHelp("The SQLite file to keep everything in (created if missing); for one gateway process.", valueName: "FILE"))
    var db: String?

    @Option(help: ArgumentHelp("A PostgreSQL URL (postgres://user:password@host:port/database[?sslmode=disable|require]) shared by every gateway process.", valueName: "URL"))
    var postgres: String?

    @Option(help: ArgumentHelp("The address to bind (0.0.0.0 for every interface).", valueName: "HOST"))
    var host: String = "127.0.0.1"

    @Option(help: ArgumentHelp("The API port (0 picks one).", valueName: "PORT"))
    var port: Int = 8080

    @Option(name: .customLong("tls-certificate"), help: ArgumentHelp("Serve the API and the console over HTTPS (HTTP/1.1 and HTTP/2): a PEM file of the certificate chain, the server's first.", valueName: "FILE"))
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The PEM file of --tls-certificate's private key (not encrypted).", valueName: "FILE"))
    var tlsKey: String?

    @Option(name: .customLong("admin-key-env"), help: ArgumentHelp("An environment variable holding the administrator's API key (made and printed at first start otherwise).", valueName: "VAR"))
    var adminKeyVariable: String?

    @Option(name: .customLong("in-flight"), help: ArgumentHelp("Deliveries this process holds at once.", valueName: "N"))
    var inFlight: Int = 2_000

    @Option(name: .customLong("claim-lease"), help: ArgumentHelp("Seconds a claim holds a delivery before another process may take it over.", valueName: "SECONDS"))
    var claimLease: Double = 60

    @Option(name: .customLong("request-timeout"), help: ArgumentHelp("Seconds one send may take, retries within it included.", valueName: "SECONDS"))
    var requestTimeout: Double = 30

    @Option(name: .customLong("retry-window"), help: ArgumentHelp("Hours a notification without an expiration is retried.", valueName: "HOURS"))
    var retryWindow: Double = 24

    @Option(help: ArgumentHelp("Seconds SIGTERM may take to stop: sends under way end and are recorded, the rest given back.", valueName: "SECONDS"))
    var grace: Double = 30

    @Option(name: .customLong("retain-days"), help: ArgumentHelp("Days finished notifications (with their outcomes) and delivered webhook events are kept; 0 keeps them for ever. Devices are always kept.", valueName: "DAYS"))
    var retainDays: Double = 30

    @Option(name: .customLong("otlp-endpoint"), help: ArgumentHelp("Export traces and metrics to this OpenTelemetry collector over OTLP/HTTP (protobuf): its base URL, such as http://127.0.0.1:4318 (to /v1/traces and /v1/metrics). Default: the OTEL_EXPORTER_OTLP_… variables; OTEL_SERVICE_NAME names the service (herald).", valueName: "URL"))
    var otlpEndpoint: String?

    @Flag(name: .customLong("api-only"), help: "Serve the API without sending (other processes send).")
    var apiOnly = false

    @Flag(name: .customLong("new-admin-key"), help: "Make a new administrator key and print it once (when the first was lost); other keys stay.")
    var newAdminKey = false

    @Option(help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error.", valueName: "LEVEL"))
    var log: String = "info"

    func validate() throws {
        guard (db == nil) != (postgres == nil) else {
            throw ValidationError("give one database: --db FILE (SQLite, one process) or --postgres URL (any number of processes)")
        }
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError("HTTPS takes both files: --tls-certificate FILE (the PEM certificate chain) and --tls-key FILE (its PEM private key)")
        }
        guard (0...65_535).contains(port) else { throw ValidationError("--port \(port) is not a port (0 to 65535)") }
        guard inFlight >= 1 else { throw ValidationError("--in-flight is at least 1") }
        guard (0.001...86_400).contains(requestTimeout), (0.001...86_400).contains(claimLease) else {
            throw ValidationError("--request-timeout and --claim-lease are seconds from 0.001 to 86400 (a day)")
        }
        guard claimLease >= requestTimeout + 1 else {
            throw ValidationError("--claim-lease (\(claimLease) s) must be at least a second longer than --request-timeout (\(requestTimeout) s): a send starts only with its whole timeout left on its lease")
        }
        guard (0...3_600).contains(grace) else { throw ValidationError("--grace is seconds from 0 to 3600") }
        guard retryWindow > 0, retryWindow <= 8_760 else { throw ValidationError("--retry-window is a number of hours above 0, at most 8760 (a year)") }
        guard Logger.Level(rawValue: log) != nil else { throw ValidationError("--log is trace, debug, info, notice, warning or error") }
        guard retainDays >= 0, retainDays <= 36_500 else { throw ValidationError("--retain-days is a number of days from 0 (keep for ever) to 36500") }
    }

    func run() async throws {
        var configuration = GatewayConfiguration(database: db.map { .sqlite(path: $0) } ?? .postgres(url: postgres!))
        configuration.host = host
        configuration.port = port
        if let tlsCertificate, let tlsKey { configuration.tls = .init(certificatePath: tlsCertificate, keyPath: tlsKey) }
        configuration.maximumInFlight = inFlight
        configuration.claimBatch = min(500, inFlight)
        configuration.claimLease = .milliseconds(Int64(claimLease * 1000))
        configuration.requestTimeout = .milliseconds(Int64(requestTimeout * 1000))
        configuration.retryWindow = .milliseconds(Int64(retryWindow * 3_600_000))
        configuration.runsWorkers = !apiOnly
        configuration.shutdownGracePeriod = .milliseconds(Int64(grace * 1000))
        configuration.makesNewAdminKey = newAdminKey
        configuration.retention = retainDays == 0 ? nil : .milliseconds(Int64(retainDays * 86_400_000))
        var logger = Logger(label: "herald.gateway")
        logger.logLevel = Logger.Level(rawValue: log) ?? .info
        configuration.logger = logger
        configuration.openTelemetry = try Self.openTelemetry(option: otlpEndpoint, environment: ProcessInfo.processInfo.environment)
        if let adminKeyVariable {
            guard let key = ProcessInfo.processInfo.environment[adminKeyVariable], key.utf8.count >= 16 else {
                throw UsageError(message: "--admin-key-env \(adminKeyVariable): the variable is unset or shorter than 16 characters")
            }
            configuration.adminKey = key
        }
        let server: GatewayServer
        do {
            server = try await GatewayServer.open(configuration: configuration)
            try await server.start()
        } catch let problem as GatewayConfiguration.Problem {
            throw UsageError(message: "\(problem)")
        } catch {
            throw UsageError(message: "cannot start the gateway: \(error)\(Self.hint(for: error, port: port))")
        }
        let database = db.map { "SQLite \($0)" } ?? "PostgreSQL \(Self.redacted(postgres!))"
        let address = server.address ?? "http://\(host):\(port)/"
        var lines = [
            "herald serve: the gateway's API on \(address) (\(database); worker \(server.workerName)\(apiOnly ? ", API only" : ""))",
            "  console    \(address)console/",
            "  OpenAPI    \(address)v1/openapi.json",
            "  metrics    \(address)metrics",
        ]
        if let settings = configuration.openTelemetry {
            if let traces = settings.tracesEndpoint { lines.append("  traces     OTLP/HTTP to \(traces) (service \(settings.serviceName))") }
            if let metrics = settings.metricsEndpoint, let at = lines.firstIndex(where: { $0.hasPrefix("  metrics ") }) {
                let interval = settings.metricsInterval.components
                let seconds = Double(interval.seconds) + Double(interval.attoseconds) / 1e18
                lines[at] += "; OTLP/HTTP to \(metrics) every \(String(format: "%g", seconds)) s"
            }
        }
        if tlsCertificate == nil && !Self.isLoopback(host) {
            lines.append("  warning    plain HTTP on \(host): API keys cross the network readable; give --tls-certificate and --tls-key, or put TLS in front")
        }
        if let key = server.generatedAdminKey {
            lines.append("  admin key  \(key)")
            lines.append("             (shown once: keep it; make scoped keys with POST /v1/keys; lost: --new-admin-key)")
        }
        // The server is started: the group only waits for the signal and stops it.
        try await serve([StopOnShutdown(server: server)], banner: lines.joined(separator: "\n") + "\n", logger: logger)
        print("herald serve: stopped")
    }

    /// Where traces and metrics go: `--otlp-endpoint` (a collector's base URL, or its traces
    /// URL), else the OpenTelemetry variables (a signal's URL as given, or the base URL with
    /// `/v1/traces` and `/v1/metrics`); a signal whose `OTEL_…_EXPORTER` is `none` is not sent.
    /// `nil` when nothing is set.
    static func openTelemetry(option: String?, environment: [String: String]) throws -> GatewayConfiguration.OpenTelemetry? {
        func given(_ name: String) -> String? { environment[name].flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 } }
        for signal in ["TRACES_", "METRICS_", ""] {
            if let protocolName = given("OTEL_EXPORTER_OTLP_\(signal)PROTOCOL"), protocolName != "http/protobuf" {
                throw UsageError(message: "OTEL_EXPORTER_OTLP_\(signal)PROTOCOL=\(protocolName): herald serve exports over http/protobuf only (an OpenTelemetry collector takes it on port 4318)")
            }
        }
        func endpoint(_ signal: String) throws -> String? {
            let path = "/v1/\(signal.lowercased())"
            let (url, source): (String, String)
            if let option {
                var base = option
                while base.hasSuffix("/") { base.removeLast() }
                if base.hasSuffix("/v1/traces") { base.removeLast("/v1/traces".count) }
                (url, source) = (base + path, "--otlp-endpoint '\(option)'")
            } else if given("OTEL_\(signal)_EXPORTER") == "none" {
                return nil
            } else if let full = given("OTEL_EXPORTER_OTLP_\(signal)_ENDPOINT") {
                (url, source) = (full, "OTEL_EXPORTER_OTLP_\(signal)_ENDPOINT '\(full)'")
            } else if let base = given("OTEL_EXPORTER_OTLP_ENDPOINT") {
                var trimmed = base
                while trimmed.hasSuffix("/") { trimmed.removeLast() }
                (url, source) = (trimmed + path, "OTEL_EXPORTER_OTLP_ENDPOINT '\(base)'")
            } else {
                return nil
            }
            guard let parsed = URLComponents(string: url), ["http", "https"].contains(parsed.scheme ?? ""), !(parsed.host ?? "").isEmpty else {
                throw UsageError(message: "\(source) is not an http or https URL (an OpenTelemetry collector's OTLP/HTTP address, such as http://127.0.0.1:4318)")
            }
            return url
        }
        let traces = try endpoint("TRACES"), metrics = try endpoint("METRICS")
        guard traces != nil || metrics != nil else { return nil }
        var settings = GatewayConfiguration.OpenTelemetry(tracesEndpoint: traces, metricsEndpoint: metrics, serviceName: given("OTEL_SERVICE_NAME") ?? "herald")
        if let text = given("OTEL_METRIC_EXPORT_INTERVAL") {
            guard let milliseconds = Int64(text), milliseconds >= 1 else {
                throw UsageError(message: "OTEL_METRIC_EXPORT_INTERVAL=\(text) is not a number of milliseconds (60000 is a minute)")
            }
            settings.metricsInterval = .milliseconds(milliseconds)
        }
        return settings
    }

    /// What to do about a port in use, naming the flag of the command that was run.
    static func hint(for error: Any, port: Int, flag: String = "--port") -> String {
        "\(error)".contains("port is in use") ? " (\(flag) \(port); \(flag) 0 picks a free one)" : ""
    }

    /// Whether only this machine can reach `host`.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "****"
        return components.string ?? url
    }
}

/// Waits for graceful shutdown, then stops the (already started) gateway.
struct StopOnShutdown: Service {
    let server: GatewayServer

    func run() async throws {
        try? await gracefulShutdown()
        await server.stop()
    }
}
