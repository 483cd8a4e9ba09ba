// swift-tools-version: 6.2
//
// Herald: a Swift toolkit for Apple Push Notifications.
//
// Layers (each imports only the layers below it, see ENGINEERING.md §1):
//
//   herald (CLI)
//   HeraldLint, HeraldDevice
//   HeraldLocalization
//   HeraldPayload
//   HeraldProtocol
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
        .executable(name: "herald", targets: ["herald"]),
        // Fixtures, generators and property checks for Herald's own tests and fuzzers.
        .library(name: "HeraldTestSupport", targets: ["HeraldTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // `swift package generate-documentation`: the DocC catalogs, built in CI.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(name: "HeraldJSON"),
        .target(name: "HeraldProtocol"),
        .target(name: "HeraldPayload", dependencies: ["HeraldJSON", "HeraldProtocol"]),
        .target(name: "HeraldLint", dependencies: ["HeraldJSON", "HeraldProtocol", "HeraldPayload"]),
        .target(name: "HeraldLocalization", dependencies: ["HeraldJSON", "HeraldPayload"]),
        .target(name: "HeraldDevice", dependencies: ["HeraldJSON", "HeraldProtocol", "HeraldPayload", "HeraldLocalization"]),
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldJSON", "HeraldProtocol", "HeraldLint", "HeraldLocalization", "HeraldDevice",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Shared by the test targets: fixture paths and seeded generators.
        .target(
            name: "HeraldTestSupport", dependencies: ["HeraldJSON", "HeraldProtocol", "HeraldPayload", "HeraldLint", "HeraldLocalization", "HeraldDevice"],
            path: "Tests/HeraldTestSupport"),
        .testTarget(name: "HeraldJSONTests", dependencies: ["HeraldJSON", "HeraldTestSupport"]),
        .testTarget(name: "HeraldProtocolTests", dependencies: ["HeraldProtocol"]),
        .testTarget(name: "HeraldPayloadTests", dependencies: ["HeraldJSON", "HeraldPayload", "HeraldTestSupport"]),
        .testTarget(name: "HeraldLintTests", dependencies: ["HeraldJSON", "HeraldProtocol", "HeraldPayload", "HeraldLint", "HeraldTestSupport"]),
        .testTarget(name: "HeraldLocalizationTests", dependencies: ["HeraldPayload", "HeraldLocalization", "HeraldTestSupport"]),
        .testTarget(name: "HeraldDeviceTests", dependencies: ["HeraldJSON", "HeraldProtocol", "HeraldPayload", "HeraldLocalization", "HeraldDevice", "HeraldTestSupport"]),
        .testTarget(name: "HeraldCLITests", dependencies: ["herald", "HeraldJSON", "HeraldLint", "HeraldTestSupport"]),
    ]
)
