// swift-tools-version: 6.2
//
// Herald's benchmarks: their own package, so `swift test` at the root stays fast.
//
//   swift run -c release --package-path Benchmarks HeraldBenchmarks --help
import PackageDescription

let package = Package(
    name: "HeraldBenchmarks",
    platforms: [.macOS(.v26)],
    dependencies: [
        .package(name: "Herald", path: ".."),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        .executableTarget(
            name: "HeraldBenchmarks",
            dependencies: [
                .product(name: "HeraldJSON", package: "Herald"),
                .product(name: "HeraldPayload", package: "Herald"),
                .product(name: "HeraldLocalization", package: "Herald"),
                .product(name: "HeraldDevice", package: "Herald"),
                .product(name: "HeraldLint", package: "Herald"),
                .product(name: "HeraldTestSupport", package: "Herald"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        .executableTarget(name: "FoundationLintBaseline"),
    ]
)
