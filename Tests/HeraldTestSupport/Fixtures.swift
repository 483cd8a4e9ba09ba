import Foundation

/// Files under `Tests/Fixtures`, found from this source file's location so tests run from any
/// working directory and on a fresh clone.
public enum Fixtures {
    /// The `Tests/Fixtures` directory.
    public static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// The repository's root directory.
    public static let repositoryRoot: URL = directory.deletingLastPathComponent().deletingLastPathComponent()

    /// The URL of a fixture, such as `seeds/legacy-example-1.json`.
    public static func url(_ relativePath: String) -> URL {
        directory.appendingPathComponent(relativePath)
    }

    /// The path of the `herald` binary next to the test bundle (SwiftPM builds executables the
    /// tests depend on into the same directory).
    public static let heraldBinary: String = {
        let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // On Linux the test runner is `<build>/HeraldPackageTests.xctest`.
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("herald").path),
              directory.path != "/" {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent("herald").path
    }()

    /// The bytes of a fixture.
    public static func bytes(_ relativePath: String) throws -> [UInt8] {
        Array(try Data(contentsOf: url(relativePath)))
    }

    /// The saved inputs of a fuzz target, as fixture paths: those that once failed
    /// (`Tests/Fixtures/fuzz/<target>/`) and its kept corpus (`Fuzz/corpus/<target>/`, the
    /// inputs that reached new code), so every run of the tests replays what the fuzzer found.
    public static func fuzzInputs(_ target: String) -> [String] {
        let failed = (try? FileManager.default.contentsOfDirectory(atPath: url("fuzz/\(target)").path)) ?? []
        let kept = (try? FileManager.default.contentsOfDirectory(atPath: url("../../Fuzz/corpus/\(target)").path)) ?? []
        return failed.sorted().map { "fuzz/\(target)/\($0)" } + kept.sorted().map { "../../Fuzz/corpus/\(target)/\($0)" }
    }

    /// The localization tables under `Tests/Fixtures/localization`, as fixture paths.
    public static var localizationTables: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url("localization").path)) ?? []
        return names.sorted().filter { !$0.hasSuffix(".md") }.map { "localization/\($0)" }
    }

    /// The well-formed example payloads printed in the seed documents.
    public static let seedPayloads: [String] = [
        "seeds/legacy-example-1.json", "seeds/legacy-example-2.json", "seeds/legacy-example-3.json",
        "seeds/legacy-example-4.json", "seeds/listing-1-alert.json", "seeds/listing-2-sound.json",
        "seeds/listing-3-localized.json", "seeds/korean-listing-1-alert.json", "seeds/korean-listing-2-sound.json",
        "seeds/korean-listing-3-localized.json",
    ]

    /// The example payloads printed malformed in the seeds.
    public static let malformedSeedPayloads: [String] = [
        "seeds/legacy-example-5-malformed.json", "seeds/summary-example-typographic-malformed.json",
    ]
}
