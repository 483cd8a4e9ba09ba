import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HeraldTestSupport
import Testing

/// `herald serve` as a user runs it: the help, refused arguments (exit 2 with what to do), the
/// administrator key made and shown once at the first start and kept across restarts, and a
/// SIGTERM that stops it with status 0.
@Suite struct ServeCommandTests {
    static func herald(_ arguments: [String], environment: [String: String] = [:]) async throws -> HeraldProcess.Result {
        try await HeraldProcess.runInBackground(arguments, environment: environment, timeout: .seconds(60))
    }

    static func status(_ port: Int, _ path: String, key: String?) async throws -> Int {
        try await ServeProcess.call(port: port, "GET", path, key: key, timeout: 30).status
    }

    /// Starts `herald serve` and reads its banner: the port, and the administrator key if one was made.
    static func start(_ arguments: [String], environment: [String: String] = [:]) async throws -> (RunningProgram, port: Int, adminKey: String?, banner: String) {
        let started = try await ServeProcess.start(arguments, environment: environment)
        return (started.program, started.port, started.printedKey, started.banner)
    }

    @Test func helpTeachesTheDeployment() async throws {
        let help = try await Self.herald(["serve", "--help"])
        #expect(help.status == 0)
        let text = String(decoding: help.stdout, as: UTF8.self)
        for expected in [
            "--db <FILE>", "--postgres <URL>", "SKIP LOCKED", "--claim-lease", "Idempotency-Key", "/v1/openapi.json", "/readyz", "SIGTERM", "admin",
            "--tls-certificate <FILE>", "--tls-key <FILE>", "/console/", "put TLS in front",
            "--otlp-endpoint <URL>", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SERVICE_NAME", "traceparent", "herald_gateway_trace_spans_total",
        ] {
            #expect(text.contains(expected), "the help mentions \(expected)")
        }
        let top = String(decoding: try await Self.herald(["--help"]).stdout, as: UTF8.self)
        #expect(top.contains("serve"))
    }

    @Test(arguments: [
        (["serve"], "give one database"),
        (["serve", "--db", "a.db", "--postgres", "postgres://x@127.0.0.1/x"], "give one database"),
        (["serve", "--db", "a.db", "--port", "70000"], "is not a port"),
        (["serve", "--db", "a.db", "--in-flight", "0"], "--in-flight"),
        (["serve", "--db", "a.db", "--claim-lease", "10", "--request-timeout", "30"], "must be at least a second longer than --request-timeout"),
        (["serve", "--db", "a.db", "--log", "loud"], "--log"),
        (["serve", "--db", "a.db", "--tls-certificate", "server.pem"], "HTTPS takes both files"),
        (["serve", "--db", "a.db", "--tls-key", "server.key"], "HTTPS takes both files"),
        (["serve", "--db", "/tmp/herald-tls-test.db", "--port", "0", "--tls-certificate", "/proc/no-such.pem", "--tls-key", "/proc/no-such.key"],
         "cannot serve HTTPS: /proc/no-such.pem: cannot read the certificate"),
        // Numbers that parse but overflow as milliseconds.
        (["serve", "--db", "a.db", "--retry-window", "1e300"], "at most 8760"),
        (["serve", "--db", "a.db", "--request-timeout", "inf", "--claim-lease", "inf"], "0.001 to 86400"),
        (["serve", "--db", "a.db", "--admin-key-env", "HERALD_SERVE_TEST_UNSET_VARIABLE"], "unset or shorter than 16"),
        (["serve", "--db", "/proc/no-such-directory/gateway.db", "--port", "0"], "cannot start the gateway"),
        (["serve", "--postgres", "mysql://x@127.0.0.1/x", "--port", "0"], "is not a postgres://user:password@host:port/database URL"),
        (["serve", "--postgres", "postgres://x@127.0.0.1/x?sslmode=sometimes", "--port", "0"], "sslmode=sometimes is not disable, prefer or require"),
        (["serve", "--db", "a.db", "--otlp-endpoint", "127.0.0.1:4318"], "--otlp-endpoint '127.0.0.1:4318' is not an http or https URL"),
        (["serve", "--db", "a.db", "--otlp-endpoint", "grpc://collector:4317"], "is not an http or https URL"),
        // Nothing listens on port 1: refused at once, not retried forever in silence.
        (["serve", "--postgres", "postgres://x:secret@127.0.0.1:1/x", "--port", "0"], "cannot connect to postgres://x:****@127.0.0.1:1/x"),
    ])
    func badArgumentsExitTwoSayingWhatToDo(_ arguments: [String], _ message: String) async throws {
        let result = try await Self.herald(arguments, environment: ["HERALD_SERVE_TEST_UNSET_VARIABLE": "short"])
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }

    @Test func theFirstStartMakesAnAdminKeyShownOnceAndKeptAcrossRestarts() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("gateway.db")
        let (first, port, key, banner) = try await Self.start(["--db", database])
        let adminKey = try #require(key, "the first start shows the key: \(banner)")
        #expect(banner.contains("SQLite \(database)"))
        #expect(try await Self.status(port, "/v1/apps", key: adminKey) == 200)
        #expect(try await Self.status(port, "/v1/apps", key: adminKey + "x") == 401)
        #expect(try await Self.status(port, "/v1/apps", key: nil) == 401)
        #expect(try await Self.status(port, "/readyz", key: nil) == 200)
        let (status, rest) = try await first.stop()
        #expect(status == 0, "SIGTERM stops it normally: \(rest)")
        #expect(rest.contains("herald serve: stopped"))

        // The same file again: no new key is made or shown, and the first one still works.
        let (second, secondPort, secondKey, secondBanner) = try await Self.start(["--db", database])
        #expect(secondKey == nil, "the key is shown once only: \(secondBanner)")
        #expect(!secondBanner.contains(adminKey))
        #expect(try await Self.status(secondPort, "/v1/apps", key: adminKey) == 200)
        #expect(try await second.stop().status == 0)
    }

    /// With the files, the banner gives the HTTPS addresses (the console's too) and no warning.
    @Test func theBannerSaysHowTheConsoleIsReached() async throws {
        let certificates = try GatewayTLSTests.Certificates()
        let directory = try TemporaryDirectory()
        let (secure, _, _, banner) = try await Self.start([
            "--db", directory.path("tls.db"), "--tls-certificate", certificates.certificate, "--tls-key", certificates.key,
        ])
        #expect(banner.contains("console    https://127.0.0.1:") && !banner.contains("warning"), "\(banner)")
        #expect(try await secure.stop().status == 0)
    }

    /// The OpenTelemetry variables, as their specification reads them: a signal's URL as given,
    /// the base URL with `/v1/traces` and `/v1/metrics`, the option before all, `none` turning a
    /// signal off, the metrics' interval, and a protocol other than http/protobuf refused by name.
    @Test func openTelemetryFollowsItsVariables() async throws {
        let directory = try TemporaryDirectory()
        let cases: [([String], [String: String], traces: String?, metrics: String?)] = [
            ([], ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318/", "OTEL_SERVICE_NAME": "push"],
             "http://127.0.0.1:4318/v1/traces (service push)", "http://127.0.0.1:4318/v1/metrics every 60 s"),
            ([], ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:9999/custom",
                  "OTEL_METRIC_EXPORT_INTERVAL": "5000"],
             "http://127.0.0.1:9999/custom (service herald)", "http://127.0.0.1:4318/v1/metrics every 5 s"),
            (["--otlp-endpoint", "http://127.0.0.1:7777/v1/traces"], ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"],
             "http://127.0.0.1:7777/v1/traces (service herald)", "http://127.0.0.1:7777/v1/metrics every 60 s"),
            ([], ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"], nil, "http://127.0.0.1:4318/v1/metrics every 60 s"),
            ([], ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces", "OTEL_METRICS_EXPORTER": "none"],
             "http://127.0.0.1:4318/v1/traces (service herald)", nil),
        ]
        for (index, (arguments, environment, traces, metrics)) in cases.enumerated() {
            let (program, _, _, banner) = try await Self.start(["--db", directory.path("otel-\(index).db")] + arguments, environment: environment)
            if let traces {
                #expect(banner.contains("  traces     OTLP/HTTP to \(traces)\n"), "\(environment): \(banner)")
            } else {
                #expect(!banner.contains("  traces     "), "\(environment): \(banner)")
            }
            let metricsLine = banner.split(separator: "\n").first { $0.hasPrefix("  metrics ") } ?? ""
            if let metrics {
                #expect(metricsLine.hasSuffix("/metrics; OTLP/HTTP to \(metrics)"), "\(environment): \(banner)")
            } else {
                #expect(!metricsLine.contains("OTLP"), "\(environment): \(banner)")
            }
            #expect(try await program.stop().status == 0)
        }
        for (variables, message) in [
            (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"],
             "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: herald serve exports over http/protobuf only"),
            (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_METRIC_EXPORT_INTERVAL": "soon"], "OTEL_METRIC_EXPORT_INTERVAL=soon is not a number of milliseconds"),
            (["OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "collector:4318"], "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT 'collector:4318' is not an http or https URL"),
        ] {
            let refused = try await Self.herald(["serve", "--db", directory.path("refused.db"), "--port", "0"], environment: variables)
            #expect(refused.status == 2 && refused.stderr.contains(message), "\(refused.stderr)")
        }
    }

    @Test func anAdminKeyFromTheEnvironmentIsUsedAndNotPrinted() async throws {
        let directory = try TemporaryDirectory()
        let secret = "serve-test-admin-key-\(UInt32.random(in: 0...UInt32.max))"
        let (program, port, key, banner) = try await Self.start(
            ["--db", directory.path("gateway.db"), "--admin-key-env", "HERALD_SERVE_TEST_ADMIN"], environment: ["HERALD_SERVE_TEST_ADMIN": secret])
        #expect(key == nil && !banner.contains(secret), "a key given by the environment is never printed: \(banner)")
        #expect(try await Self.status(port, "/v1/apps", key: secret) == 200)
        #expect(try await program.stop().status == 0)
    }

    @Test func aPostgresPasswordIsNotPrinted() async throws {
        let postgres = try await PostgresTestDatabase()
        let (program, port, _, banner) = try await Self.start(["--postgres", postgres.url, "--admin-key-env", "HERALD_SERVE_TEST_ADMIN"],
                                                         environment: ["HERALD_SERVE_TEST_ADMIN": "serve-test-postgres-admin-key"])
        let password = try #require(URLComponents(string: postgres.url)?.password)
        #expect(banner.contains("PostgreSQL postgres://") && banner.contains(":****@"), "\(banner)")
        #expect(!banner.contains(":\(password)@"), "\(banner)")
        #expect(try await Self.status(port, "/readyz", key: nil) == 200)
        #expect(try await program.stop().status == 0)

        // A wrong password is the server's answer, said at once.
        var wrong = try #require(URLComponents(string: postgres.url))
        wrong.password = "not-the-password"
        let refused = try await Self.herald(["serve", "--postgres", wrong.string!, "--port", "0"])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("password authentication failed"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("not-the-password"))
    }
}
