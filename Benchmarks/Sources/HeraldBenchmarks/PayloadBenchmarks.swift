import Foundation
import HeraldJSON
import HeraldPayload

/// Payload encoding and decoding against what a user writes instead: a synthesized `Codable`
/// struct of the same shape, with one `JSONEncoder` and one `JSONDecoder` made once and reused
/// (APNSwift's style); and parsing against `JSONSerialization`.
///
/// Workloads: Listing 1 of "Generating a remote notification", a 3 KB payload with 60 custom keys,
/// the seed documents' ten examples, and a 4 KB payload near the limit.
enum PayloadBenchmarks {
    static func run(rounds: Int) -> [Comparison] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let decoder = JSONDecoder()

        let listing = ListingOne(aps: .init(alert: .init(title: "Game Request", subtitle: "Five Card Draw", body: "Bob wants to play poker"), category: "GAME_INVITATION"), gameID: "12345678")
        let listingData = try! encoder.encode(listing)
        let listingBytes = Array(listingData)
        // Encoding starts from payloads built in code, as a sender builds them (a decoded payload
        // would copy its custom data from the source, a path senders do not take).
        let listingPayload = try! Payload.alert(title: "Game Request", subtitle: "Five Card Draw", body: "Bob wants to play poker")
            .category("GAME_INVITATION").custom("gameID", "12345678")

        let sixty = SixtyKeys.sample
        let sixtyData = try! encoder.encode(sixty)
        let sixtyBytes = Array(sixtyData)
        var sixtyPayload = try! Payload(decoding: sixtyBytes)
        sixtyPayload.custom = sixtyPayload.custom  // built values, not the decoded source
        FileHandle.standardError.write(Data("3 KB workload: \(sixtyBytes.count) bytes, \(sixtyPayload.custom.count) custom keys\n".utf8))
        precondition(sixtyPayload.custom.count == 60 && (2900...3300).contains(sixtyBytes.count), "the 3 KB workload drifted: \(sixtyBytes.count) bytes")
        // Both sides produce the same JSON.
        precondition(try! JSONDocument(parsing: Array(encoder.encode(sixty))).root.value.isEquivalent(to: JSONDocument(parsing: sixtyPayload.encode()).root.value))

        let seeds = Workloads.seedPayloads
        let seedBytes = Workloads.seedBytes
        let seedData = seedBytes.map { Data($0) }
        let seedTotal = seedBytes.reduce(0) { $0 + $1.count }
        let largeBytes = Workloads.largeBytes
        let largeData = Data(largeBytes)

        var results: [Comparison] = []
        results.append(compare(
            "encode: Listing 1", bytesPerOperation: listingBytes.count, baselineName: "JSONEncoder, synthesized struct",
            target: 10, rounds: rounds,
            herald: { blackHole(try! listingPayload.encode()) },
            baseline: { blackHole(try! encoder.encode(listing)) }))
        results.append(compare(
            "encode: 3 KB, 60 custom keys", bytesPerOperation: sixtyBytes.count, baselineName: "JSONEncoder, synthesized struct",
            target: 10, rounds: rounds,
            herald: { blackHole(try! sixtyPayload.encode()) },
            baseline: { blackHole(try! encoder.encode(sixty)) }))
        results.append(compare(
            "decode to typed: Listing 1", bytesPerOperation: listingBytes.count, baselineName: "JSONDecoder, synthesized struct",
            target: 5, rounds: rounds,
            herald: { blackHole(try! Payload(decoding: listingBytes)) },
            baseline: { blackHole(try! decoder.decode(ListingOne.self, from: listingData)) }))
        results.append(compare(
            "decode to typed: 3 KB, 60 custom keys", bytesPerOperation: sixtyBytes.count, baselineName: "JSONDecoder, synthesized struct",
            target: 5, rounds: rounds,
            herald: { blackHole(try! Payload(decoding: sixtyBytes)) },
            baseline: { blackHole(try! decoder.decode(SixtyKeys.self, from: sixtyData)) }))
        // The decode's own overhead: the typed payload against the parse it starts from.
        results.append(compare(
            "typed decode vs parse: Listing 1", bytesPerOperation: listingBytes.count, baselineName: "Herald parse only (JSONDocument)",
            rounds: rounds,
            herald: { blackHole(try! Payload(decoding: listingBytes)) },
            baseline: { blackHole(try! JSONDocument(parsing: listingBytes)) }))
        results.append(compare(
            "typed decode vs parse: 3 KB, 60 custom keys", bytesPerOperation: sixtyBytes.count, baselineName: "Herald parse only (JSONDocument)",
            rounds: rounds,
            herald: { blackHole(try! Payload(decoding: sixtyBytes)) },
            baseline: { blackHole(try! JSONDocument(parsing: sixtyBytes)) }))
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
        return results
    }
}
