import Foundation
import HeraldJSON
import HeraldPayload

/// Issue "Payload core": typed payload → bytes against `JSONEncoder`, and bytes → document
/// against `JSONSerialization`, on the seed examples and a 4 KB payload.
enum PayloadBenchmarks {
    static func run(rounds: Int) -> [Comparison] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let seeds = Workloads.seedPayloads
        let seedBytes = Workloads.seedBytes
        let seedData = seedBytes.map { Data($0) }
        let large = Workloads.large
        let largeBytes = Workloads.largeBytes
        let largeData = Data(largeBytes)
        let seedTotal = seedBytes.reduce(0) { $0 + $1.count }

        var results: [Comparison] = []
        results.append(compare(
            "encode: \(seeds.count) seed payloads", bytesPerOperation: seedTotal, baselineName: "JSONEncoder",
            target: 10, rounds: rounds,
            herald: { for payload in seeds { blackHole(try! payload.encode()) } },
            baseline: { for payload in seeds { blackHole(try! encoder.encode(payload)) } }))
        results.append(compare(
            "encode: 4 KB payload", bytesPerOperation: largeBytes.count, baselineName: "JSONEncoder",
            target: 10, rounds: rounds,
            herald: { blackHole(try! large.encode()) },
            baseline: { blackHole(try! encoder.encode(large)) }))
        results.append(compare(
            "parse: \(seeds.count) seed payloads", bytesPerOperation: seedTotal, baselineName: "JSONSerialization",
            target: 3, rounds: rounds,
            herald: { for bytes in seedBytes { blackHole(try! JSONDocument(parsing: bytes)) } },
            baseline: { for data in seedData { blackHole(try! JSONSerialization.jsonObject(with: data)) } }))
        results.append(compare(
            "parse: 4 KB payload", bytesPerOperation: largeBytes.count, baselineName: "JSONSerialization",
            target: 3, rounds: rounds,
            herald: { blackHole(try! JSONDocument(parsing: largeBytes)) },
            baseline: { blackHole(try! JSONSerialization.jsonObject(with: largeData)) }))
        // Not a target, but what users do next: the typed payload straight from bytes.
        results.append(compare(
            "decode to typed payload: 4 KB", bytesPerOperation: largeBytes.count, baselineName: "JSONDecoder",
            rounds: rounds,
            herald: { blackHole(try! Payload(decoding: largeBytes)) },
            baseline: { blackHole(try! JSONDecoder().decode(Payload.self, from: largeData)) }))
        return results
    }
}
