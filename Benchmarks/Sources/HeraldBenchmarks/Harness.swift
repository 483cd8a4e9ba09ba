import Foundation
import Histogram

/// Keeps a value alive so the optimizer cannot delete the work that made it.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// Nanoseconds on the monotonic clock.
@inline(__always)
func now() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// Per-operation latencies of one side of a comparison.
struct Series {
    var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
    var operations = 0
    var nanoseconds: UInt64 = 0

    var median: Double { Double(histogram.valueAtPercentile(50)) / 10 }
    var p99: Double { Double(histogram.valueAtPercentile(99)) / 10 }
    var operationsPerSecond: Double { Double(operations) / (Double(nanoseconds) / 1e9) }
}

/// One comparison: Herald against a baseline on the same work.
struct Comparison {
    var name: String
    var bytesPerOperation: Int
    var herald: Series
    var baseline: Series
    var baselineName: String
    var target: Double?

    /// How many times faster Herald's median is.
    var ratio: Double { baseline.median / herald.median }
}

/// Runs `herald` and `baseline` in interleaved batches, so both see the same machine noise.
/// Each batch is timed as a whole and recorded as its per-operation average (in tenths of a ns).
func compare(
    _ name: String, bytesPerOperation: Int, baselineName: String, target: Double? = nil,
    rounds: Int, herald: () -> Void, baseline: () -> Void
) -> Comparison {
    func calibrate(_ body: () -> Void) -> Int {
        var batch = 1
        while true {
            let start = now()
            for _ in 0..<batch { body() }
            if now() - start > 2_000_000 || batch >= 1 << 20 { return batch }
            batch *= 2
        }
    }
    // Warm up and size batches to about 2 ms.
    let heraldBatch = calibrate(herald)
    let baselineBatch = calibrate(baseline)
    var heraldSeries = Series()
    var baselineSeries = Series()
    func run(_ body: () -> Void, batch: Int, into series: inout Series) {
        let start = now()
        for _ in 0..<batch { body() }
        let elapsed = now() - start
        series.histogram.record(elapsed * 10 / UInt64(batch))
        series.operations += batch
        series.nanoseconds += elapsed
    }
    for round in 0..<rounds {
        if round % 2 == 0 {
            run(herald, batch: heraldBatch, into: &heraldSeries)
            run(baseline, batch: baselineBatch, into: &baselineSeries)
        } else {
            run(baseline, batch: baselineBatch, into: &baselineSeries)
            run(herald, batch: heraldBatch, into: &heraldSeries)
        }
    }
    return Comparison(name: name, bytesPerOperation: bytesPerOperation, herald: heraldSeries,
                      baseline: baselineSeries, baselineName: baselineName, target: target)
}

/// The machine, for the report.
enum Machine {
    static var description: String {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        let memory = ProcessInfo.processInfo.physicalMemory / (1 << 30)
        return "\(cores) cores (\(cpu)), \(memory) GiB, \(swiftVersion), \(ProcessInfo.processInfo.operatingSystemVersionString)"
    }

    static var swiftVersion: String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "--version"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = Pipe()
        guard (try? process.run()) != nil else { return "Swift (version unknown)" }
        process.waitUntilExit()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard let range = text.range(of: #"Swift version [0-9.]+"#, options: .regularExpression) else { return "Swift" }
        return String(text[range])
    }

    /// Peak resident memory of this process (VmHWM), in MiB.
    static var peakMemoryMiB: Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kilobytes / 1024
    }
}

/// Prints comparisons as a Markdown table.
func report(_ title: String, command: String, comparisons: [Comparison], rounds: Int) {
    print("## \(title)\n")
    print("- command: `\(command)`")
    print("- machine: \(Machine.description)")
    print("- method: \(rounds) rounds; each round times one batch (~2 ms) of each side, alternating which goes first; figures are per operation, from HdrHistogram")
    print("")
    print("| case | bytes | Herald p50 | Herald p99 | baseline | baseline p50 | baseline p99 | Herald ops/s | ratio (p50) | target |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|---|")
    for comparison in comparisons {
        let target = comparison.target.map { comparison.ratio >= $0 ? "≥ \(format($0))x met" : "≥ \(format($0))x MISSED" } ?? ""
        print("| \(comparison.name) | \(comparison.bytesPerOperation) | \(nanoseconds(comparison.herald.median)) | \(nanoseconds(comparison.herald.p99)) | \(comparison.baselineName) | \(nanoseconds(comparison.baseline.median)) | \(nanoseconds(comparison.baseline.p99)) | \(count(comparison.herald.operationsPerSecond)) | \(format(comparison.ratio))x | \(target) |")
    }
    print("\npeak memory (VmHWM): \(format(Machine.peakMemoryMiB)) MiB\n")
}

func format(_ value: Double) -> String {
    value >= 100 ? String(Int(value.rounded())) : String(format: "%.1f", value)
}

func nanoseconds(_ value: Double) -> String {
    value >= 10_000 ? String(format: "%.1f µs", value / 1000) : String(format: "%.0f ns", value)
}

func count(_ value: Double) -> String {
    value >= 1e6 ? String(format: "%.2fM", value / 1e6) : String(format: "%.0fk", value / 1e3)
}
