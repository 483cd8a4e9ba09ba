import Foundation
import HeraldJSON
import HeraldPayload

/// Issue "Lint": `herald lint --jsonl` over a million payloads, whole process, against a program
/// that only parses each line with JSONSerialization and measures its size.
enum LintBenchmarks {
    /// A deterministic mix: the seed examples (compact), larger alerts with custom data
    /// (1 to 3 KB), Live Activity updates, and some payloads with findings.
    static func writeDataset(lines: Int, to path: String) throws -> (bytes: Int, kinds: String) {
        var pool: [[UInt8]] = Workloads.seedBytes
        var random = SystemRandomNumberGenerator()
        _ = random
        for size in [1000, 2000, 3000] {
            var items: [JSONValue] = []
            var payload = Payload.alert(title: "Order update", body: "Your order has shipped and is on its way.")
                .threadID("orders").sound(.default).badge(1)
            while try payload.encodedSize() < size {
                items.append(["sku": "SKU-\(items.count)", "qty": .number(JSONNumber(items.count % 7 + 1)), "note": "주문 상품 \(items.count)"])
                payload = try payload.custom("items", .array(items))
            }
            pool.append(try payload.encode())
        }
        pool.append(try Payload.liveActivity(event: .update, timestamp: 1_700_000_000, contentState: ["home": 2, "away": 1, "minute": 67]).encode())
        pool.append(Array(#"{"aps":{"content-available":1,"alert":"sync"},"user":"jane@example.com"}"#.utf8))
        pool.append(Array(#"{"aps":{"content_available":1,"badge":-1}}"#.utf8))
        var output: [UInt8] = []
        output.reserveCapacity(lines * 400)
        var totalBytes = 0
        for index in 0..<lines {
            // Mostly seed examples; every seventh line is large; a few carry findings.
            let choice: Int
            switch index % 20 {
            case 0, 7, 14: choice = Workloads.seedBytes.count + (index / 20) % 3
            case 3: choice = pool.count - 3
            case 11: choice = pool.count - 2
            case 17: choice = pool.count - 1
            default: choice = index % Workloads.seedBytes.count
            }
            output += pool[choice]
            output.append(UInt8(ascii: "\n"))
            totalBytes += pool[choice].count
        }
        try Data(output).write(to: URL(fileURLWithPath: path))
        return (totalBytes, "10 seed examples (70%), 1-3 KB alerts with custom data (15%), a Live Activity update (5%), payloads with findings (10%)")
    }

    struct Run {
        var seconds: Double
        var peakMiB: Double
        var output: String
    }

    /// Runs a program with its output sent to /dev/null (so the harness does no work while it
    /// runs), returning wall time and that program's peak resident memory. The program runs under
    /// GNU time when it is installed: a child spawned from this large process would inherit its
    /// high-water mark, while one spawned from `time` starts small.
    static func time(_ executable: String, _ arguments: [String]) throws -> Run {
        let timeTool = "/usr/bin/time"
        guard FileManager.default.isExecutableFile(atPath: timeTool) else { return try spawn(executable, arguments) }
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("herald-bench-rss-\(getpid())").path
        var run = try spawn(timeTool, ["-f", "%M", "-o", report, executable] + arguments)
        if let text = try? String(contentsOfFile: report, encoding: .utf8),
           let kilobytes = text.split(separator: "\n").last.flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }) {
            run.peakMiB = kilobytes / 1024
        }
        return run
    }

    static func spawn(_ executable: String, _ arguments: [String]) throws -> Run {
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let start = now()
        guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else {
            throw CocoaError(.fileReadUnknown)
        }
        var status: Int32 = 0
        var usage = rusage()
        _ = wait4(pid, &status, 0, &usage)
        let seconds = Double(now() - start) / 1e9
        return Run(seconds: seconds, peakMiB: Double(usage.ru_maxrss) / 1024, output: "")
    }

    /// The last line a program prints (an untimed run, for the report).
    static func lastLine(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    static func run(lines: Int, rounds: Int, herald: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-bench")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("lint-\(lines).jsonl").path
        let dataset = try writeDataset(lines: lines, to: path)
        let baseline = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("FoundationLintBaseline").path
        var heraldTimes: [Double] = []
        var heraldOneJobTimes: [Double] = []
        var baselineTimes: [Double] = []
        var baselineAllCoresTimes: [Double] = []
        let cores = ProcessInfo.processInfo.activeProcessorCount
        var heraldPeak = 0.0
        var baselinePeak = 0.0
        let summary = try lastLine(herald, ["lint", "--jsonl", path])
        let baselineSummary = try lastLine(baseline, [path])
        for round in 0..<rounds {
            // Alternate the order so both sides see the same machine state on average.
            let order = round % 2 == 0 ? [0, 1, 2, 3] : [3, 2, 1, 0]
            for which in order {
                switch which {
                case 0:
                    let run = try time(herald, ["lint", "--jsonl", path])
                    heraldTimes.append(run.seconds)
                    heraldPeak = max(heraldPeak, run.peakMiB)
                case 1:
                    heraldOneJobTimes.append(try time(herald, ["lint", "--jsonl", "--jobs", "1", path]).seconds)
                case 2:
                    let run = try time(baseline, [path])
                    baselineTimes.append(run.seconds)
                    baselinePeak = max(baselinePeak, run.peakMiB)
                default:
                    baselineAllCoresTimes.append(try time(baseline, ["--threads", String(cores), path]).seconds)
                }
            }
        }
        let heraldRate = Double(lines) / median(heraldTimes)
        let oneJobRate = Double(lines) / median(heraldOneJobTimes)
        let baselineRate = Double(lines) / median(baselineTimes)
        let baselineAllCoresRate = Double(lines) / median(baselineAllCoresTimes)
        print("## herald lint --jsonl, whole process\n")
        print("- command: `swift run -c release --package-path Benchmarks HeraldBenchmarks lint --lines \(lines) --rounds \(rounds)`")
        print("- machine: \(Machine.description)")
        print("- input: \(lines) lines, \(dataset.bytes) bytes of payload: \(dataset.kinds)")
        print("- herald's summary line: \(summary)")
        print("- baseline's summary line: \(baselineSummary)")
        print("- baseline: the fastest reasonable Foundation program (Benchmarks/Sources/FoundationLintBaseline): the file memory-mapped, each line copied into its own Data (JSONSerialization's fast path), parsed and measured; once on one thread, once split over all \(cores) cores")
        print("- method: \(rounds) rounds, each running the four programs one after another (order alternating), output to /dev/null; median wall time per program; peak RSS of each child from wait4\n")
        print("| program | median wall time | payloads/s | ratio to baseline | target |")
        print("|---|---:|---:|---:|---|")
        print("| `herald lint --jsonl` (all cores) | \(String(format: "%.2f s", median(heraldTimes))) | \(count(heraldRate)) | \(format(heraldRate / baselineRate))x | ≥ 500k/s \(heraldRate >= 500_000 ? "met" : "MISSED"), ≥ 5x \(heraldRate / baselineRate >= 5 ? "met" : "MISSED") |")
        print("| `herald lint --jsonl --jobs 1` | \(String(format: "%.2f s", median(heraldOneJobTimes))) | \(count(oneJobRate)) | \(format(oneJobRate / baselineRate))x | |")
        print("| baseline: JSONSerialization + size, 1 thread | \(String(format: "%.2f s", median(baselineTimes))) | \(count(baselineRate)) | 1.0x | |")
        print("| baseline, \(cores) threads | \(String(format: "%.2f s", median(baselineAllCoresTimes))) | \(count(baselineAllCoresRate)) | \(format(baselineAllCoresRate / baselineRate))x | herald, all cores each: \(format(heraldRate / baselineAllCoresRate))x |")
        print("\npeak memory: herald \(format(heraldPeak)) MiB, baseline \(format(baselinePeak)) MiB\n")
    }
}
