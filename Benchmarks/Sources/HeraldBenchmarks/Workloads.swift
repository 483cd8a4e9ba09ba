import Foundation
import HeraldJSON
import HeraldPayload
import HeraldTestSupport

/// The payloads benchmarks run on: the seed documents' examples and a large one near the limit.
enum Workloads {
    /// The well-formed example payloads of the seed documents, compact.
    static let seedBytes: [[UInt8]] = Fixtures.seedPayloads.map { path in
        try! JSONDocument(parsing: Fixtures.bytes(path)).compactBytes()
    }

    /// The same, as typed payloads.
    static let seedPayloads: [Payload] = seedBytes.map { try! Payload(decoding: $0) }

    /// A payload just under 4096 bytes: a Korean alert (from seed 002's vocabulary), a thread,
    /// a sound, and custom data.
    static let large: Payload = {
        var payload = Payload.alert(
            title: "게임 요청",
            subtitle: "Five Card Draw",
            body: "Bob님이 포커를 하고 싶어 합니다. 알림 페이로드에는 고객 정보나 신용카드 번호와 같은 민감한 데이터를 포함하지 마세요.")
            .badge(9).sound("bingbong.aiff").threadID("game-42").category("GAME_INVITATION")
            .interruptionLevel(.timeSensitive).relevanceScore(0.75).mutableContent()
        var items: [JSONValue] = []
        var index = 0
        while true {
            let item: JSONValue = [
                "id": .number(JSONNumber(index)), "player": "플레이어 \(index)", "score": .number(JSONNumber(Double(index) * 1.5)!),
                "url": "https://example.com/games/42/players/\(index)", "active": .bool(index % 2 == 0),
            ]
            let candidate = try! payload.custom("items", .array(items + [item]))
            if try! candidate.encodedSize() > 4000 { break }
            items.append(item)
            index += 1
        }
        payload = try! payload.custom("items", .array(items)).custom("gameID", "12345678")
        return payload
    }()

    static let largeBytes: [UInt8] = try! large.encode()
}
