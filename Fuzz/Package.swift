// swift-tools-version: 6.2
//
// libFuzzer entry points for Herald's parsers. Build and run with `Fuzz/run` (see README.md);
// they are their own package so that `swift test` at the root never builds sanitizers.
import PackageDescription

let package = Package(
    name: "HeraldFuzz",
    dependencies: [.package(name: "Herald", path: "..")],
    targets: [
        .executableTarget(name: "FuzzJSON", dependencies: [.product(name: "HeraldTestSupport", package: "Herald")]),
        .executableTarget(name: "FuzzPayload", dependencies: [.product(name: "HeraldTestSupport", package: "Herald")]),
        .executableTarget(name: "FuzzLint", dependencies: [.product(name: "HeraldTestSupport", package: "Herald")]),
        .executableTarget(name: "FuzzStrings", dependencies: [.product(name: "HeraldTestSupport", package: "Herald")]),
        .executableTarget(name: "FuzzPlist", dependencies: [.product(name: "HeraldTestSupport", package: "Herald")]),
        .executableTarget(name: "FuzzXCStrings", dependencies: [.product(name: "HeraldTestSupport", package: "Herald")]),
        .executableTarget(name: "FuzzFormatter", dependencies: [.product(name: "HeraldTestSupport", package: "Herald")]),
        .executableTarget(name: "FuzzPreview", dependencies: [.product(name: "HeraldTestSupport", package: "Herald")]),
        .executableTarget(name: "FuzzProviderToken", dependencies: [.product(name: "HeraldAuthTestSupport", package: "Herald")]),
        .executableTarget(name: "FuzzHTTP2Client", dependencies: [.product(name: "HeraldClientTestSupport", package: "Herald")]),
        .executableTarget(name: "FuzzHTTP2Server", dependencies: [.product(name: "HeraldClientTestSupport", package: "Herald")]),
        .executableTarget(name: "FuzzMockConnection", dependencies: [.product(name: "HeraldMockTestSupport", package: "Herald")]),
    ]
)
