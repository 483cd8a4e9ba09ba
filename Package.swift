// swift-tools-version: 6.2
//
// Herald: a Swift toolkit for Apple Push Notifications.
//
// Layers (each imports only the layers below it; ARCHITECTURE.md maps them):
//
//   herald (CLI)
//   HeraldGateway                   (Hummingbird, SQLite, PostgreSQL; sends through HeraldClient)
//   HeraldMock                      (SwiftNIO, TLS, Hummingbird, SQLite; HTTP/2 through HeraldHTTP2; releases through HeraldClient)
//   HeraldClient                    (SwiftNIO, TLS; HTTP/2 through HeraldHTTP2)
//   HeraldHTTP2, HeraldAsync,       (internal: HTTP/2 sessions, client and server; waiting primitives;
//   HeraldSQL                        SQL values, rows and migrations both stores share)
//   HeraldAuth                      (swift-crypto, swift-certificates, swift-nio-ssl)
//   HeraldDevice                    (previews; says lint rules' findings as HeraldLint does)
//   HeraldLint
//   HeraldLocalization
//   HeraldPayload, HeraldProtocol  (independent of each other)
//   HeraldJSON
import PackageDescription

let package = Package(
    name: "Herald",
    // Linux is the target; on Apple platforms the standard library's InlineArray (Swift 6.2)
    // needs the 26 releases.
    platforms: [.macOS(.v26), .iOS(.v26), .tvOS(.v26), .watchOS(.v26), .visionOS(.v26)],
    products: [
        .library(name: "HeraldJSON", targets: ["HeraldJSON"]),
        .library(name: "HeraldProtocol", targets: ["HeraldProtocol"]),
        .library(name: "HeraldPayload", targets: ["HeraldPayload"]),
        .library(name: "HeraldLint", targets: ["HeraldLint"]),
        .library(name: "HeraldLocalization", targets: ["HeraldLocalization"]),
        .library(name: "HeraldDevice", targets: ["HeraldDevice"]),
        .library(name: "HeraldAuth", targets: ["HeraldAuth"]),
        .library(name: "HeraldMock", targets: ["HeraldMock"]),
        .library(name: "HeraldClient", targets: ["HeraldClient"]),
        .library(name: "HeraldGateway", targets: ["HeraldGateway"]),
        .executable(name: "herald", targets: ["herald"]),
        // Fixtures, generators and property checks for Herald's own tests and fuzzers.
        .library(name: "HeraldTestSupport", targets: ["HeraldTestSupport"]),
        .library(name: "HeraldAuthTestSupport", targets: ["HeraldAuthTestSupport"]),
        .library(name: "HeraldClientTestSupport", targets: ["HeraldClientTestSupport"]),
        .library(name: "HeraldMockTestSupport", targets: ["HeraldMockTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // `swift package generate-documentation`: the DocC catalogs, built in CI.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // `herald mock --db` and `herald serve --db`: SQLite (bundled, no system library).
        .package(url: "https://github.com/vapor/sqlite-nio", from: "1.13.2"),
        // `herald serve --postgres`: the gateway's store for several processes.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // The interop tests: AsyncHTTPClient (under APNSwift) against the mock.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // `herald bench send`: latency percentiles.
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        // A simulated device's Notification Center: its oldest notification leaves in O(1).
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        .target(name: "HeraldJSON"),
        // HeraldVersion: the commit comes from the HeraldBuildInfo plugin (git, before each build).
        .target(name: "HeraldProtocol", plugins: ["HeraldBuildInfo"]),
        .target(name: "HeraldPayload", dependencies: ["HeraldJSON"]),
        .target(name: "HeraldLint", dependencies: ["HeraldJSON", "HeraldProtocol", "HeraldPayload"]),
        .target(name: "HeraldLocalization", dependencies: ["HeraldJSON", "HeraldPayload"]),
        .target(
            name: "HeraldDevice",
            dependencies: [
                "HeraldJSON", "HeraldProtocol", "HeraldPayload", "HeraldLocalization", "HeraldLint",
                .product(name: "DequeModule", package: "swift-collections"),
            ]),
        .target(
            name: "HeraldAuth",
            dependencies: [
                "HeraldJSON", "HeraldProtocol",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .target(
            name: "HeraldMock",
            dependencies: [
                "HeraldJSON", "HeraldProtocol", "HeraldPayload", "HeraldLint", "HeraldLocalization", "HeraldDevice", "HeraldAuth",
                // Releasing a stored notification to Apple or another mock sends it with the client.
                "HeraldClient", "HeraldSQL", "HeraldHTTPAPI", "HeraldHTTP2",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
            ],
            // The inbox's web sources, embedded by Scripts/embed-web (InboxAssets.swift).
            exclude: ["Inbox"]
        ),
        // Waiting primitives (internal: no product) the client and the gateway share: a bound on
        // requests in flight with deadlines, a capacity gate, a wake-up signal, a rate limiter, an
        // async lock.
        .target(
            name: "HeraldAsync",
            dependencies: [.product(name: "NIOCore", package: "swift-nio")]),
        // The HTTP API plumbing the mock and the gateway share (internal: no product): a
        // Hummingbird server started and stopped as one value, JSON responses, OpenAPI pieces.
        .target(
            name: "HeraldHTTPAPI",
            dependencies: [
                "HeraldJSON", "HeraldLocalization",
                .product(name: "NIOCore", package: "swift-nio"),
                // JSONPoster: webhooks, the mock's reports of Live Activity tokens.
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                // HTTPS for the API (HTTP/1.1 and HTTP/2 by ALPN).
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
            ]),
        // SQL both stores share (internal: no product): values and rows the same in SQLite and
        // PostgreSQL, an SQLite database, the schema migrator.
        .target(
            name: "HeraldSQL",
            dependencies: [
                "HeraldAsync",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
            ]),
        // HTTP/2 for the client and the mock (internal: no product), sessions as values fed bytes;
        // HeraldHTTP2.docc says why Herald has its own rather than NIOHTTP2Handler.
        .target(
            name: "HeraldHTTP2",
            dependencies: [.product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHPACK", package: "swift-nio-http2")]),
        .target(
            name: "HeraldClient",
            dependencies: [
                "HeraldJSON", "HeraldProtocol", "HeraldPayload", "HeraldLint", "HeraldAuth", "HeraldHTTP2", "HeraldAsync",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "HeraldGateway",
            dependencies: [
                "HeraldJSON", "HeraldProtocol", "HeraldPayload", "HeraldLint", "HeraldAuth", "HeraldClient", "HeraldAsync", "HeraldSQL", "HeraldHTTPAPI",
                // The console's previews: a payload as a device shows it.
                "HeraldDevice",
                // Language matching for a notification's variants (the rules iOS follows).
                "HeraldLocalization",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            // The console's web sources, embedded by Scripts/embed-web (Console/ConsoleAssets.swift).
            exclude: ["Console/Web"]
        ),
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldJSON", "HeraldProtocol", "HeraldLint", "HeraldLocalization", "HeraldDevice", "HeraldAuth", "HeraldMock", "HeraldClient",
                "HeraldGateway",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Shared by the test targets: fixture paths and seeded generators.
        .target(
            name: "HeraldTestSupport",
            dependencies: [
                "HeraldJSON", "HeraldProtocol", "HeraldPayload", "HeraldLint", "HeraldLocalization", "HeraldDevice",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/HeraldTestSupport"),
        .testTarget(name: "HeraldJSONTests", dependencies: ["HeraldJSON", "HeraldTestSupport"]),
        .testTarget(name: "HeraldProtocolTests", dependencies: ["HeraldProtocol"]),
        .testTarget(name: "HeraldAsyncTests", dependencies: ["HeraldAsync", .product(name: "NIOCore", package: "swift-nio")]),
        .testTarget(name: "HeraldSQLTests", dependencies: ["HeraldSQL", "HeraldTestSupport", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "HeraldPayloadTests", dependencies: ["HeraldJSON", "HeraldPayload", "HeraldTestSupport"]),
        .testTarget(name: "HeraldLintTests", dependencies: ["HeraldJSON", "HeraldProtocol", "HeraldPayload", "HeraldLint", "HeraldTestSupport"]),
        .testTarget(name: "HeraldLocalizationTests", dependencies: ["HeraldPayload", "HeraldLocalization", "HeraldTestSupport"]),
        .testTarget(name: "HeraldDeviceTests", dependencies: ["HeraldJSON", "HeraldProtocol", "HeraldPayload", "HeraldLocalization", "HeraldDevice", "HeraldTestSupport"]),
        // The provider-token properties, shared by HeraldAuthTests and the FuzzProviderToken fuzzer.
        .target(name: "HeraldAuthTestSupport", dependencies: ["HeraldAuth", "HeraldProtocol"], path: "Tests/HeraldAuthTestSupport"),
        .testTarget(name: "HeraldAuthTests", dependencies: ["HeraldAuth", "HeraldJSON", "HeraldProtocol", "HeraldTestSupport", "HeraldAuthTestSupport"]),
        // The HTTP/2 session's properties, shared by HeraldClientTests and the FuzzHTTP2Client fuzzer.
        .target(
            name: "HeraldClientTestSupport",
            dependencies: ["HeraldHTTP2", .product(name: "NIOCore", package: "swift-nio")],
            path: "Tests/HeraldClientTestSupport"),
        // The mock connection's properties, shared by HeraldMockTests and the FuzzMockConnection fuzzer.
        .target(
            name: "HeraldMockTestSupport",
            dependencies: [
                "HeraldMock", "HeraldAuth", "HeraldProtocol", "HeraldTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            path: "Tests/HeraldMockTestSupport"),
        // A mock with clients that trust it, for the client's, the mock's and the commands' tests.
        .target(
            name: "HeraldHarness",
            dependencies: ["HeraldClient", "HeraldMock", "HeraldAuth", "HeraldPayload", "HeraldProtocol"],
            path: "Tests/HeraldHarness"),
        .testTarget(
            name: "HeraldMockTests",
            dependencies: [
                "herald", "HeraldMock", "HeraldAuth", "HeraldJSON", "HeraldProtocol", "HeraldPayload", "HeraldTestSupport", "HeraldMockTestSupport",
                "HeraldHarness", "HeraldClient", "HeraldLocalization", "HeraldHTTPAPI",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        .testTarget(
            name: "HeraldClientTests",
            dependencies: [
                "herald", "HeraldClient", "HeraldMock", "HeraldAuth", "HeraldJSON", "HeraldProtocol", "HeraldPayload", "HeraldLint", "HeraldTestSupport",
                "HeraldClientTestSupport", "HeraldHTTP2", "HeraldLocalization", "HeraldHarness",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]),
        // The HTTP/2 sessions fed bytes written from RFC 9113, their header blocks read by NIOHPACK
        // and Python's hpack.
        .testTarget(
            name: "HeraldHTTP2Tests",
            dependencies: [
                "HeraldHTTP2", "HeraldTestSupport", "HeraldClientTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ]),
        // Real clients against the mock; AsyncHTTPClient is a test-only dependency.
        .testTarget(
            name: "HeraldInteropTests",
            dependencies: [
                "HeraldMock", "HeraldAuth", "HeraldProtocol", "HeraldTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        .testTarget(
            name: "HeraldCLITests",
            dependencies: [
                "herald", "HeraldJSON", "HeraldLint", "HeraldProtocol", "HeraldAuth", "HeraldMock", "HeraldHarness", "HeraldTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .testTarget(
            name: "HeraldGatewayTests",
            dependencies: [
                "herald", "HeraldGateway", "HeraldMock", "HeraldClient", "HeraldAuth", "HeraldJSON", "HeraldProtocol", "HeraldTestSupport",
                "HeraldHTTPAPI", "HeraldSQL",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]),
        // Writes the git commit Herald is built from into HeraldProtocol (HeraldVersion.commit).
        .plugin(name: "HeraldBuildInfo", capability: .buildTool()),
    ]
)
