import Foundation

// Usage: HeraldBenchmarks [payload] [localization] [lint [--lines N] [--herald PATH]] [scaling [--quick] [--only TEXT]]
//        [repeat --only TEXT --times N] [--rounds N]
let arguments = CommandLine.arguments.dropFirst()
let rounds = arguments.firstIndex(of: "--rounds").flatMap { Int(arguments[arguments.index(after: $0)]) } ?? 60
let suites = arguments.enumerated().filter { index, argument in
    !argument.hasPrefix("--") && Int(argument) == nil
        && (index == 0 || !["--herald", "--only", "--times"].contains(arguments[arguments.index(arguments.startIndex, offsetBy: index - 1)]))
}.map(\.element)
let selected = suites.isEmpty ? ["payload"] : suites

for suite in selected {
    switch suite {
    case "payload":
        let results = PayloadBenchmarks.run(rounds: rounds)
        report("Payload encoding and JSON parsing", command: "swift run -c release --package-path Benchmarks HeraldBenchmarks payload --rounds \(rounds)",
               comparisons: results, rounds: rounds)
    case "localization":
        let results = LocalizationBenchmarks.run(rounds: rounds)
        report("Strings tables, formatting and preview", command: "swift run -c release --package-path Benchmarks HeraldBenchmarks localization --rounds \(rounds)",
               comparisons: results, rounds: rounds)
    case "lint":
        let lines = arguments.firstIndex(of: "--lines").flatMap { Int(arguments[arguments.index(after: $0)]) } ?? 1_000_000
        let heraldPath = arguments.firstIndex(of: "--herald").map { String(arguments[arguments.index(after: $0)]) }
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent(".build/release/herald").path
        guard FileManager.default.isExecutableFile(atPath: heraldPath) else {
            FileHandle.standardError.write(Data("no herald at \(heraldPath); run 'swift build -c release' at the repository root first, or pass --herald PATH\n".utf8))
            exit(2)
        }
        try LintBenchmarks.run(lines: lines, rounds: arguments.contains("--rounds") ? rounds : 5, herald: heraldPath)
    case "scaling":
        let only = arguments.firstIndex(of: "--only").map { String(arguments[arguments.index(after: $0)]) }
        let linear = ScalingBenchmarks.run(quick: arguments.contains("--quick"), filter: only)
        // Work per finding is reported against its target, not yet enforced.
        _ = ScalingBenchmarks.runPerFinding(quick: arguments.contains("--quick"), filter: only)
        if !linear { exit(1) }
    case "repeat":
        // Lints the 4 KB payloads whose names contain TEXT, N times each, and prints nothing
        // timed: for `valgrind --tool=callgrind`, whose instruction counts the machine's noise
        // does not move (run with N and 1, and take the difference over N - 1). With --read,
        // every finding's message and pointer are read too, as `herald lint` and the mock's
        // records read them.
        let only = arguments.firstIndex(of: "--only").map { String(arguments[arguments.index(after: $0)]) }
        let times = arguments.firstIndex(of: "--times").flatMap { Int(arguments[arguments.index(after: $0)]) } ?? 200
        ScalingBenchmarks.repeatFourKilobyte(filter: only, times: times, reading: arguments.contains("--read"))
    default:
        FileHandle.standardError.write(Data("unknown suite '\(suite)'; available: payload, localization, lint, scaling, repeat\n".utf8))
        exit(2)
    }
}
