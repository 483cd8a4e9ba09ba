import Foundation
import HeraldProtocol
import Logging

/// How a ``GatewayServer`` listens, stores, sends and retries. The defaults suit one process on
/// SQLite; for several processes, give each the same PostgreSQL ``database``.
public struct GatewayConfiguration: Sendable {
    /// Where everything is kept.
    public enum Database: Sendable, Hashable {
        /// An SQLite file (created when missing), for one gateway process.
        case sqlite(path: String)
        /// A PostgreSQL database shared by any number of gateway processes:
        /// `postgres://user:password@host:port/database` (`?sslmode=disable|prefer|require`).
        case postgres(url: String)
    }

    /// The database.
    public var database: Database
    /// The address the API binds (`127.0.0.1` by default; `0.0.0.0` for every interface).
    public var host: String = "127.0.0.1"
    /// The API port (0 picks a free one).
    public var port: Int = 8080
    /// HTTPS for the API and the console: PEM files of the certificate chain (the server's
    /// certificate first) and its unencrypted private key. Plain HTTP when `nil`; put TLS in
    /// front then, unless only this machine connects, since API keys travel in every request.
    public var tls: TLSFiles? = nil

    /// The files the API serves HTTPS with.
    public struct TLSFiles: Sendable, Hashable {
        /// A PEM file of the certificate chain, the server's certificate first.
        public var certificatePath: String
        /// A PEM file of the certificate's private key (not encrypted).
        public var keyPath: String

        /// The certificate chain's file and its key's file.
        public init(certificatePath: String, keyPath: String) {
            self.certificatePath = certificatePath
            self.keyPath = keyPath
        }
    }
    /// OpenTelemetry over OTLP/HTTP (protobuf): traces (a span per API request, under the
    /// caller's W3C `traceparent` when it sends one; one per submission's commit; one per
    /// delivery attempt in the submission's trace, whichever process sends it) and metrics (the
    /// gateway's own, as `/metrics` has them). Off when `nil`.
    public var openTelemetry: OpenTelemetry? = nil

    /// Where and how traces and metrics are exported.
    public struct OpenTelemetry: Sendable, Hashable {
        /// The collector's traces URL (`http://collector:4318/v1/traces`); none when `nil`.
        public var tracesEndpoint: String?
        /// The collector's metrics URL (`http://collector:4318/v1/metrics`); none when `nil`.
        public var metricsEndpoint: String?
        /// `service.name` on every span and metric (`OTEL_SERVICE_NAME`).
        public var serviceName: String
        /// How often the metrics are exported (`OTEL_METRIC_EXPORT_INTERVAL`).
        public var metricsInterval: Duration = .seconds(60)
        /// Spans held while the collector is slow or away; past this, new spans are dropped and
        /// counted (`herald_gateway_trace_spans_total{result="dropped"}`). Sending never waits
        /// for the collector.
        public var spanBufferLimit: Int = 8_192
        /// How often a part batch of spans is exported (a full batch of 512 goes at once).
        public var spanInterval: Duration = .seconds(1)
        /// The longest one export may take (connecting and the collector's answer).
        public var timeout: Duration = .seconds(10)

        /// Traces and metrics to a collector's base URL (`http://collector:4318`): at
        /// `/v1/traces` and `/v1/metrics`, as OTLP/HTTP has them.
        public init(collector: String, serviceName: String = "herald") {
            var base = collector
            while base.hasSuffix("/") { base.removeLast() }
            self.init(tracesEndpoint: base + "/v1/traces", metricsEndpoint: base + "/v1/metrics", serviceName: serviceName)
        }

        /// Each signal to its own URL (`nil`: not exported).
        public init(tracesEndpoint: String?, metricsEndpoint: String?, serviceName: String = "herald") {
            self.tracesEndpoint = tracesEndpoint
            self.metricsEndpoint = metricsEndpoint
            self.serviceName = serviceName
        }
    }

    /// An administrator API key to create at start-up if the database has none with this value
    /// (from `HERALD_GATEWAY_ADMIN_KEY`, say). With none given and no key in the database, one
    /// is made and shown once (``GatewayServer/generatedAdminKey``).
    public var adminKey: String? = nil
    /// How many deliveries a process holds at once (claimed and not yet recorded).
    public var maximumInFlight: Int = 2_000
    /// How many deliveries one claim takes.
    public var claimBatch: Int = 500
    /// How long a claim holds a delivery: another process takes it over after this if the one
    /// that claimed it died. Longer than the request timeout.
    public var claimLease: Duration = .seconds(60)
    /// The longest one send may take (the client's deadline, its retries included).
    public var requestTimeout: Duration = .seconds(30)
    /// How long a notification without `expiration` is retried.
    public var retryWindow: Duration = .seconds(24 * 3600)
    /// Backoff between a delivery's attempts.
    var retry = GatewayRetryPolicy()
    /// The limits Live Activities are held to (Apple's, and Herald's waits and warnings).
    var activityLimits = LiveActivityLimits()
    /// How long finished notifications (with their deliveries) and delivered webhook events
    /// are kept (a pass a minute prunes them in small batches); `nil` keeps them for ever.
    /// Devices and what still waits are never pruned.
    public var retention: Duration? = .seconds(30 * 86_400)
    /// Rows deleted per retention batch (each its own short transaction).
    public var retentionBatch: Int = 1_000
    /// How often a retention pass starts.
    var retentionInterval: Duration = Retention.interval
    /// How often an idle worker looks for due deliveries.
    public var pollInterval: Duration = .milliseconds(200)
    /// Outcomes are written at least this often (in batches).
    public var flushInterval: Duration = .milliseconds(20)
    /// The most tokens one request may list.
    public var maximumTokensPerRequest: Int = 1_000_000
    /// Whether this process sends (a process may only serve the API).
    public var runsWorkers: Bool = true
    /// How long graceful shutdown may take: sends under way end (within ``requestTimeout``) and
    /// are recorded, the rest is given back; at the end of it the server stops whatever is
    /// left (another process sends that once its lease runs out).
    public var shutdownGracePeriod: Duration = .seconds(30)
    /// The longest one database call may take (a submission gets a second more per 20,000
    /// tokens). Past it the call fails; the API answers 503 with `Retry-After`, the dispatcher
    /// tries again.
    public var databaseTimeout: Duration = .seconds(10)
    /// Makes a new administrator key at start even when the database has keys (shown once as
    /// ``GatewayServer/generatedAdminKey``): for a database whose first key was never seen.
    public var makesNewAdminKey: Bool = false
    /// This process's name in claims (default: host name, process id and a random suffix).
    public var workerName: String? = nil
    /// The logger; device tokens in its messages are shortened.
    public var logger: Logger = Logger(label: "herald.gateway")
    /// The clock (milliseconds come from it); injectable for tests.
    public var now: @Sendable () -> Date = Date.init

    /// A configuration on `database` with the defaults.
    public init(database: Database) {
        self.database = database
    }

    /// A setting that cannot work, with the setting's name and what it must be.
    public typealias Problem = ConfigurationProblem

    /// Checks every setting; ``GatewayServer/open(configuration:)`` calls it, so an embedder
    /// gets the same checks as `herald serve`.
    ///
    /// - Throws: ``Problem`` for the first setting that cannot work.
    public func validate() throws(Problem) {
        let check = ConfigurationProblem.require
        try check((0...65_535).contains(port), "port", "\(port) is not a port (0 to 65535)")
        try check(maximumInFlight >= 1, "maximumInFlight", "at least 1")
        try check(claimBatch >= 1, "claimBatch", "at least 1")
        try check(maximumTokensPerRequest >= 1, "maximumTokensPerRequest", "at least 1")
        let day = Duration.seconds(86_400)
        for (name, value) in [("requestTimeout", requestTimeout), ("claimLease", claimLease), ("databaseTimeout", databaseTimeout)] {
            try check(value >= .milliseconds(1) && value <= day, name, "from a millisecond to a day")
        }
        try check(
            claimLease >= requestTimeout + .seconds(1), "claimLease",
            "\(claimLease.secondsText) must be at least a second longer than requestTimeout (\(requestTimeout.secondsText)): a send starts only with its whole timeout left on its lease")
        try check(retryWindow > .zero && retryWindow <= .seconds(366 * 86_400), "retryWindow", "above zero, at most a year")
        try check(shutdownGracePeriod >= .zero && shutdownGracePeriod <= .seconds(3_600), "shutdownGracePeriod", "from zero to an hour")
        try check(pollInterval > .zero && flushInterval > .zero, "pollInterval", "pollInterval and flushInterval are above zero")
        if let retention { try check(retention > .zero, "retention", "above zero (nil keeps everything)") }
        try check(retentionBatch >= 1, "retentionBatch", "at least 1")
        if let openTelemetry {
            for (name, endpoint) in [("tracesEndpoint", openTelemetry.tracesEndpoint), ("metricsEndpoint", openTelemetry.metricsEndpoint)] {
                guard let endpoint else { continue }
                let url = URL(string: endpoint)
                try check(
                    ["http", "https"].contains(url?.scheme ?? "") && !(url?.host ?? "").isEmpty, "openTelemetry.\(name)",
                    "'\(endpoint)' is not an http or https URL, such as http://127.0.0.1:4318/v1/traces")
            }
            try check(!openTelemetry.serviceName.isEmpty, "openTelemetry.serviceName", "not empty")
            try check(openTelemetry.spanBufferLimit >= 1, "openTelemetry.spanBufferLimit", "at least 1")
            try check(
                openTelemetry.timeout > .zero && openTelemetry.spanInterval > .zero && openTelemetry.metricsInterval > .zero, "openTelemetry.timeout",
                "timeout, spanInterval and metricsInterval are above zero")
        }
    }
}
