import Foundation

// Usage: HeraldBenchmarks [payload] [--rounds N]
let arguments = CommandLine.arguments.dropFirst()
let rounds = arguments.firstIndex(of: "--rounds").flatMap { Int(arguments[arguments.index(after: $0)]) } ?? 60
let suites = arguments.filter { !$0.hasPrefix("--") && Int($0) == nil }
let selected = suites.isEmpty ? ["payload"] : suites

for suite in selected {
    switch suite {
    case "payload":
        let results = PayloadBenchmarks.run(rounds: rounds)
        report("Payload encoding and JSON parsing", command: "swift run -c release --package-path Benchmarks HeraldBenchmarks payload --rounds \(rounds)",
               comparisons: results, rounds: rounds)
    default:
        FileHandle.standardError.write(Data("unknown suite '\(suite)'; available: payload\n".utf8))
        exit(2)
    }
}
