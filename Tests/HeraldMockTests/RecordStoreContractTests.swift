import Foundation
import HeraldJSON
@testable import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Logging
import Synchronization
import Testing

/// The one contract of the mock's record stores, held against each: the memory ring and the
/// SQLite database must answer every query alike, keep records unchanged, and apply retention
/// alike. Expected answers are worked out here from the requests sent, not by the stores' code.
@Suite struct RecordStoreContractTests {
    enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case memory, sqlite
        var testDescription: String { rawValue }
    }

    /// A store of `backend` keeping `count` records, `age` long.
    static func store(_ backend: Backend, count: Int = 10_000, age: Duration? = nil, in directory: TemporaryDirectory) async throws -> any RecordStore {
        let retention = RecordRetention(count: count, age: age)
        switch backend {
        case .memory: return MemoryRecordStore(retention: retention)
        case .sqlite: return try await DatabaseStore.open(path: directory.path("records.db"), retention: retention, logger: Logger(label: "test"))
        }
    }

    final class Clock: Sendable {
        let seconds = Mutex<Double>(1_790_000_000)
        var now: Date { Date(timeIntervalSince1970: seconds.withLock { $0 }) }
        func advance(_ by: Double) { seconds.withLock { $0 += by } }
    }

    /// One request and what the test knows about it.
    struct Sent {
        var token: String?
        var topic: String?
        var pushType: String?
        var status: Int?
        var reason: String?
        var kind: String
        var channel: String?
        var text: String
    }

    static let tokens = [
        "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad",
        "8a2ba7a6cc4c0e0b27d7e9da4b4d1df1ca5e1d9b0f43a6e3f5b2c6e7d8f9a0b1",
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    ]

    /// Twenty-odd requests of every kind through a real mock core, one second apart: accepted
    /// and rejected pushes, a 410, broadcasts, channel management, a fault without an answer,
    /// non-JSON and non-ASCII bodies, LIKE's wildcards in text.
    static func makeRecords() throws -> (records: [NotificationRecord], sent: [Sent], clock: Clock) {
        let clock = Clock()
        var configuration = MockConfiguration()
        configuration.now = { clock.now }
        configuration.unregisteredTokens = [try DeviceToken(hex: tokens[2])]
        let core = MockCore(configuration: configuration)
        let channel = try #require(core.channels.create(bundleID: "com.example.app", storagePolicy: 0, now: clock.now))
        var sent: [Sent] = []
        func send(_ fields: [(String, String)], body: String, listener: IncomingRequest.Listener = .apns, expect: Sent) {
            var connection = ConnectionState(id: 1)
            connection.authentication.trusted = true  // skip provider tokens: the store is under test, not auth
            var headerFields = APNsHeaderFields()
            for (name, value) in fields { headerFields.append(name: name, value: value) }
            let bytes = Array(body.utf8)
            _ = core.handle(IncomingRequest(fields: headerFields, body: bytes, bodyByteCount: bytes.count, listener: listener), connection: &connection)
            sent.append(expect)
            clock.advance(1)
        }
        func push(_ token: String, topic: String = "com.example.app", type: String = "alert", extra: [(String, String)] = [], body: String, status: Int = 200, reason: String? = nil) {
            send(
                [(":method", "POST"), (":path", "/3/device/\(token)"), ("apns-topic", topic), ("apns-push-type", type)] + extra, body: body,
                expect: Sent(token: token.lowercased(), topic: topic, pushType: type, status: status, reason: reason, kind: "device", text: body))
        }
        push(tokens[0], body: #"{"aps":{"alert":{"title":"Hello","body":"First"}}}"#)
        push(tokens[0], extra: [("apns-collapse-id", "score")], body: #"{"aps":{"alert":"Score 1-0","thread-id":"match"}}"#)
        push(tokens[1], body: #"{"aps":{"alert":"Café crème at 50% off_now"}}"#)
        push(tokens[1], type: "background", extra: [("apns-priority", "5")], body: #"{"aps":{"content-available":1}}"#)
        push(tokens[0], extra: [("apns-priority", "7")], body: #"{"aps":{"alert":"bad priority"}}"#, status: 400, reason: "BadPriority")
        push(tokens[2], body: #"{"aps":{"alert":"gone"}}"#, status: 410, reason: "Unregistered")
        push(tokens[0], body: "{\"aps\":{\"alert\":\"" + String(repeating: "x", count: 4_100) + "\"}}", status: 413, reason: "PayloadTooLarge")
        push(tokens[1], topic: "com.example.other", body: #"{"aps":{"alert":"wrong topic"}}"#, status: 400, reason: "DeviceTokenNotForTopic")
        push(tokens[0].uppercased(), body: #"{"aps":{"alert":"UPPER case token"}}"#)
        push(tokens[0], body: "not json at all", status: 200)
        push(tokens[1], topic: "com.example.app.voip", type: "voip", body: #"{"aps":{},"call":"42"}"#, status: 400, reason: "DeviceTokenNotForTopic")
        send(
            [(":method", "POST"), (":path", "/4/broadcasts/apps/com.example.app"), ("apns-push-type", "liveactivity"), ("apns-channel-id", channel.id), ("apns-expiration", "0")],
            body: #"{"aps":{"event":"update","timestamp":1790000000,"content-state":{"score":"2-1"}}}"#,
            expect: Sent(token: nil, topic: "com.example.app", pushType: "liveactivity", status: 200, kind: "broadcast", channel: channel.id, text: "score"))
        send(
            [(":method", "POST"), (":path", "/1/apps/com.example.app/channels")], body: #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#,
            listener: .channels, expect: Sent(status: 201, kind: "channel", text: "LiveActivity"))
        send([(":method", "POST"), (":path", "/nowhere")], body: "", expect: Sent(status: 404, reason: "BadPath", kind: "other", text: ""))
        core.faults.add(try FaultRule(parsing: "hang,times=1"))
        push(tokens[0], body: #"{"aps":{"alert":"never answered"}}"#)
        sent[sent.count - 1].status = nil
        for index in 0..<6 { push(tokens[index % 2], body: #"{"aps":{"alert":"batch \#(index)"}}"#) }
        let records = core.store.records(matching: NotificationQuery()).records.reversed()
        return (Array(records), sent, clock)
    }

    static func filled(_ backend: Backend, directory: TemporaryDirectory, count: Int = 10_000, age: Duration? = nil) async throws -> (any RecordStore, [NotificationRecord], [Sent], Clock) {
        let (records, sent, clock) = try makeRecords()
        let store = try await store(backend, count: count, age: age, in: directory)
        for record in records { try await store.append(record)?.get() }
        return (store, records, sent, clock)
    }

    @Test(arguments: Backend.allCases)
    func recordsComeBackUnchanged(_ backend: Backend) async throws {
        let directory = try TemporaryDirectory()
        let (store, records, sent, _) = try await Self.filled(backend, directory: directory)
        #expect(records.count == sent.count, "one record per request")
        #expect(try await store.count() == records.count)
        for (record, expected) in zip(records, sent) {
            #expect(record.status == expected.status && record.reason?.rawValue == expected.reason && record.kind.rawValue == expected.kind,
                    "request \(record.id) was judged as the test expects: \(record.status.map(String.init) ?? "-") \(record.reason?.rawValue ?? "")")
            let found = try #require(try await store.find(id: String(record.id)))
            #expect(found.jsonText == record.jsonText, "record \(record.id) is the same JSON")
            #expect(found.body == record.body && found.fields == record.fields && found.receivedAt.timeIntervalSince1970 == record.receivedAt.timeIntervalSince1970)
            if let apnsID = record.apnsID {
                #expect(try await store.find(id: apnsID)?.id == records.last { $0.apnsID == apnsID }?.id, "by apns-id: the newest with it")
            }
        }
        #expect(try await store.find(id: "no-such-id") == nil)
        #expect(try await store.find(id: "99999") == nil)
        await store.close()
    }

    @Test(arguments: Backend.allCases)
    func queriesAnswerAsTheRequestsSay(_ backend: Backend) async throws {
        let directory = try TemporaryDirectory()
        let (store, records, sent, _) = try await Self.filled(backend, directory: directory)
        let pairs = Array(zip(records, sent))
        func expectIDs(_ configure: (inout NotificationQuery) -> Void, _ keep: ((NotificationRecord, Sent)) -> Bool, _ what: String) async throws {
            var query = NotificationQuery()
            configure(&query)
            let page = try await store.page(query)
            let expected = pairs.filter(keep).map(\.0.id).sorted(by: >)
            #expect(page.total == expected.count, "\(what): total")
            #expect(page.records.map(\.id) == Array(expected.prefix(query.limit)), "\(what): newest first")
        }
        try await expectIDs({ _ in }, { _ in true }, "everything")
        try await expectIDs({ $0.limit = 3 }, { _ in true }, "limit")
        try await expectIDs({ $0.before = records[10].id }, { $0.0.id < records[10].id }, "before")
        try await expectIDs({ $0.token = Self.tokens[0].uppercased() }, { $0.1.token == Self.tokens[0] }, "token in any case")
        try await expectIDs({ $0.topic = "com.example.other" }, { $0.1.topic == "com.example.other" && $0.1.kind == "device" }, "topic")
        try await expectIDs({ $0.status = 400 }, { $0.1.status == 400 }, "status")
        try await expectIDs({ $0.accepted = true }, { ($0.1.status ?? 0) / 100 == 2 }, "accepted")
        try await expectIDs({ $0.accepted = false }, { ($0.1.status ?? 0) / 100 != 2 }, "rejected or unanswered")
        try await expectIDs({ $0.reason = "DeviceTokenNotForTopic" }, { $0.1.reason == "DeviceTokenNotForTopic" }, "reason")
        try await expectIDs({ $0.pushType = "background" }, { $0.1.pushType == "background" }, "push type")
        try await expectIDs({ $0.kind = "broadcast" }, { $0.1.kind == "broadcast" }, "kind")
        try await expectIDs({ $0.channelID = pairs.first { $0.1.channel != nil }?.1.channel }, { $0.1.channel != nil }, "channel")
        try await expectIDs({ $0.search = "hello" }, { $0.1.text.lowercased().contains("hello") }, "search ignores ASCII case")
        try await expectIDs({ $0.search = "50%" }, { $0.1.text.contains("50%") }, "% is text")
        try await expectIDs({ $0.search = "off_now" }, { $0.1.text.contains("off_now") }, "_ is text")
        try await expectIDs({ $0.search = "%" }, { $0.1.text.contains("%") }, "a lone %")
        try await expectIDs({ $0.search = "café" }, { $0.1.text.contains("Café") }, "non-ASCII text")
        try await expectIDs({ $0.search = "CAFÉ" }, { _ in false }, "É and é differ: case is folded for ASCII only, as SQLite's LIKE does")
        try await expectIDs({ $0.search = Self.tokens[1].prefix(12).uppercased() }, { $0.1.token == Self.tokens[1] }, "the token is searched")
        try await expectIDs({ $0.accepted = true; $0.token = Self.tokens[0]; $0.limit = 2 }, { ($0.1.status ?? 0) / 100 == 2 && $0.1.token == Self.tokens[0] }, "filters combine")
        await store.close()
    }

    @Test(arguments: Backend.allCases)
    func retentionKeepsTheNewestAndNothingTooOld(_ backend: Backend) async throws {
        let directory = try TemporaryDirectory()
        let (store, records, _, clock) = try await Self.filled(backend, directory: directory, count: 5, age: .seconds(8))
        try await store.applyRetention(now: records.last!.receivedAt)
        #expect(try await store.page(NotificationQuery()).records.map(\.id) == records.suffix(5).map(\.id).reversed(), "the newest five")
        // Six seconds after the last: the two oldest of the five are more than eight seconds old.
        clock.advance(5)
        try await store.applyRetention(now: clock.now)
        let kept = try await store.page(NotificationQuery()).records
        let cutoff = clock.now.addingTimeInterval(-8)
        #expect(kept.map(\.id) == records.suffix(5).filter { $0.receivedAt >= cutoff }.map(\.id).reversed())
        #expect(kept.count == 3)
        try await store.removeAll()
        #expect(try await store.count() == 0)
        #expect(try await store.page(NotificationQuery()).total == 0)
        await store.close()
    }
}
