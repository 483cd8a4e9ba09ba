import ArgumentParser
import Foundation
import HeraldClient
import HeraldPayload
import HeraldProtocol
import Histogram
import NIOPosix
import Synchronization

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure sending throughput and latency.",
        subcommands: [BenchSendCommand.self]
    )
}

struct BenchSendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send many notifications as fast as the server takes them, and report throughput, latency and memory.",
        discussion: """
            Point it at a herald mock (or any server you own): it sends --count requests over \
            --connections connections with --concurrency requests in flight, each to one of \
            1,000 device tokens, and prints requests per second, latency percentiles \
            (HdrHistogram), errors by reason and the process's peak memory. The first requests \
            (--warmup) open the connections and are not measured.

            Example:
              herald mock --port 2197 --ca-out ca.pem --key demo.p8 \\
                  --key-id ABC123DEFG --team-id DEF123GHIJ &
              herald bench send --host 127.0.0.1 --port 2197 --ca-file ca.pem \\
                  --count 100000 --connections 4 --concurrency 400 \\
                  --p8 demo.p8 --key-id ABC123DEFG --team-id DEF123GHIJ
            """
    )

    @Option(help: ArgumentHelp("Requests to measure.", valueName: "N"))
    var count: Int = 100_000

    @Option(help: ArgumentHelp("Connections to open.", valueName: "C"))
    var connections: Int = 4

    @Option(help: ArgumentHelp("Requests in flight.", valueName: "K"))
    var concurrency: Int = 400

    @Option(help: ArgumentHelp("Event-loop threads for the connections (default: one per core, as the client library).", valueName: "N"))
    var threads: Int?

    @Option(help: ArgumentHelp("Requests sent first and not measured.", valueName: "N"))
    var warmup: Int = 2_000

    @Option(help: ArgumentHelp("The payload file (default: a 1,024-byte alert).", valueName: "FILE"))
    var payload: String?

    @Option(help: ArgumentHelp("apns-topic.", valueName: "TOPIC"))
    var topic: String = "com.example.app"

    @Option(name: .customLong("push-type"), help: ArgumentHelp("apns-push-type.", valueName: "TYPE"))
    var pushType: String = "alert"

    @OptionGroup var credentials: CredentialOptions
    @OptionGroup var server: ServerOptions

    func validate() throws {
        guard count > 0, connections > 0, concurrency > 0, warmup >= 0 else {
            throw ValidationError("--count, --connections and --concurrency are at least 1, --warmup at least 0")
        }
    }

    func run() async throws {
        var configuration = try server.configuration(credentials: try credentials.credentials())
        configuration.maximumConnections = connections
        configuration.maximumRequestsInFlight = concurrency
        configuration.pingInterval = nil
        let body = try payload.map { try InputFile(argument: $0).read() } ?? Self.defaultPayload()
        guard let type = PushType(rawValue: pushType) else { throw UsageError(message: "--push-type \(pushType) is not a push type") }
        let client: APNsClient
        do {
            client = try APNsClient(
                configuration: configuration,
                eventLoopGroup: threads.map { MultiThreadedEventLoopGroup(numberOfThreads: $0) } ?? MultiThreadedEventLoopGroup.singleton)
        } catch {
            throw UsageError(message: error.message)
        }
        let tokens = (0..<1_000).map { index -> DeviceToken in
            var bytes = [UInt8](repeating: 0xB0, count: 32)
            withUnsafeBytes(of: UInt32(index).bigEndian) { bytes.replaceSubrange(28..<32, with: $0) }
            return try! DeviceToken(bytes: bytes)
        }
        let template = APNsRequest(headers: APNsRequestHeaders(pushType: type, topic: topic), body: body)
        do {
            try await client.prewarm()
        } catch {
            writeStandardError("herald: error: \(error)\n")
            throw ExitStatus.usageFailure
        }
        _ = await Self.run(client: client, template: template, tokens: tokens, count: warmup, workers: concurrency)
        let started = ContinuousClock.now
        let result = await Self.run(client: client, template: template, tokens: tokens, count: count, workers: concurrency)
        let elapsed = ContinuousClock.now - started
        await client.shutdown()

        let seconds = elapsed.timeInterval
        let histogram = result.histogram
        func ms(_ percentile: Double) -> String {
            String(format: "%.2f", Double(histogram.valueAtPercentile(percentile)) / 1_000)
        }
        var lines = [
            "command: herald bench send --count \(count) --connections \(connections) --concurrency \(concurrency) (\(body.count)-byte payload, \(warmup) warm-up requests not measured)",
            "machine: \(ProcessInfo.processInfo.activeProcessorCount) cores",
            "requests: \(count) in \(String(format: "%.2f", seconds)) s",
            "throughput: \(Int((Double(count) / seconds).rounded())) req/s",
            "latency ms: p50 \(ms(50)) p90 \(ms(90)) p99 \(ms(99)) max \(String(format: "%.2f", Double(histogram.max) / 1_000))",
            "accepted: \(result.accepted)",
        ]
        if result.errors.isEmpty {
            lines.append("errors: none")
        } else {
            lines.append("errors: " + result.errors.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        lines.append("peak memory: \(Self.peakResidentMegabytes().map { "\($0) MB" } ?? "unknown")")
        writeStandardOutput(lines.joined(separator: "\n") + "\n")
        if !result.errors.isEmpty { throw ExitStatus.failure }
    }

    struct Tally: Sendable {
        var histogram = Histogram<UInt64>(highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: .three)
        var accepted = 0
        var errors: [String: Int] = [:]
    }

    /// `workers` tasks send until `count` requests have been sent, recording each latency (in
    /// microseconds) into one shared histogram: a histogram per worker would hold hundreds of
    /// kilobytes each.
    static func run(client: APNsClient, template: APNsRequest, tokens: [DeviceToken], count: Int, workers: Int) async -> Tally {
        let next = TicketCounter()
        let tally = SharedTally()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<min(workers, max(count, 1)) {
                group.addTask {
                    while true {
                        let index = next.take()
                        if index >= count { break }
                        let request = template.to(tokens[index % tokens.count])
                        let start = ContinuousClock.now
                        let outcome = await client.outcome(of: request)
                        let microseconds = max((ContinuousClock.now - start).nanosecondCount / 1_000, 0)
                        tally.state.withLock { tally in
                            tally.histogram.record(UInt64(microseconds))
                            switch outcome {
                            case .success: tally.accepted += 1
                            case .failure(let error): tally.errors[error.reason?.rawValue ?? "\(error.kind)", default: 0] += 1
                            }
                        }
                    }
                }
            }
        }
        return tally.state.withLock { $0 }
    }

    /// A 1,024-byte alert, as Benchmarks/mock-load sends.
    static func defaultPayload() -> [UInt8] {
        let prefix = #"{"aps":{"alert":{"title":"Benchmark","body":""#
        let suffix = #""},"badge":1,"sound":"default"},"id":"12345"}"#
        let filler = String(repeating: "x", count: 1024 - prefix.utf8.count - suffix.utf8.count)
        return Array((prefix + filler + suffix).utf8)
    }

    /// VmHWM from /proc/self/status.
    static func peakResidentMegabytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes / 1024
    }
}

/// The bench's counts, shared by its workers.
final class SharedTally: Sendable {
    let state = Mutex(BenchSendCommand.Tally())
}

/// Hands out 0, 1, 2, … to any number of tasks.
final class TicketCounter: Sendable {
    private let value = Atomic<Int>(0)
    func take() -> Int { value.add(1, ordering: .relaxed).oldValue }
}

extension Duration {
    var timeInterval: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    var nanosecondCount: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }
}
