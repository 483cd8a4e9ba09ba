import Foundation
import HeraldJSON
import NIOCore
import Synchronization

/// Where the mock keeps the requests it recorded: a ring of the newest in memory (the default),
/// or an SQLite file (`--db`). The inspection API reads whichever the server has; the contract is
/// one, and one test suite (`RecordStoreContractTests`) holds every store to it.
protocol RecordStore: Sendable {
    /// Records a request. When the store is durable, the future completes once the record is
    /// committed, and the answer to the request waits for it; `nil` means it is already kept.
    func append(_ record: NotificationRecord) -> EventLoopFuture<Void>?
    /// The records matching `query`, newest first, at most `query.limit`, and how many match
    /// in all.
    func page(_ query: NotificationQuery) async throws -> RecordPage
    /// One record by `apns-id` (the newest with it) or by id.
    func find(id: String) async throws -> NotificationRecord?
    /// Forgets every record.
    func removeAll() async throws
    /// How many records are kept.
    func count() async throws -> Int
    /// Applies the retention: the newest ``RecordRetention/count``, none older than
    /// ``RecordRetention/age``.
    func applyRetention(now: Date) async throws
    /// Releases what the store holds open (a database connection); nothing is read after.
    func close() async
}

/// How much a store keeps.
struct RecordRetention: Sendable, Hashable {
    /// The newest this many requests (older ones are dropped).
    var count: Int
    /// Requests older than this are dropped (`nil`: kept whatever their age).
    var age: Duration?

    var ageInSeconds: Double? {
        age.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }
    }
}

/// One page of records, and how many match in all.
struct RecordPage: Sendable {
    var records: [NotificationRecord]
    var total: Int
}

/// A filter over records.
public struct NotificationQuery: Sendable, Hashable {
    /// At most this many (default 1,000).
    public var limit: Int = 1000
    /// Only records with an id below this (paging: pass the last id of the previous page).
    public var before: Int?
    /// Only this device token.
    public var token: String?
    /// Only this topic.
    public var topic: String?
    /// Only this status.
    public var status: Int?
    /// Only accepted (`true`) or rejected (`false`) requests.
    public var accepted: Bool?
    /// Only this reason.
    public var reason: String?
    /// Only this push type.
    public var pushType: String?
    /// Only this kind (`device`, `broadcast`, `channel`, `other`).
    public var kind: String?
    /// Only requests naming this broadcast channel (`apns-channel-id`).
    public var channelID: String?
    /// Text that the payload, token, topic, reason or apns-id contains (case-insensitive for
    /// ASCII letters).
    public var search: String?

    /// Everything, newest first, up to 1,000.
    public init() {}

    func matches(_ record: NotificationRecord) -> Bool {
        if let before, record.id >= before { return false }
        if let token, record.deviceToken != token.lowercased() { return false }
        if let topic, record.topic != topic { return false }
        if let status, record.status != status { return false }
        if let accepted, record.isAccepted != accepted { return false }
        if let reason, record.reason?.rawValue != reason { return false }
        if let pushType, record.request?.pushType?.rawValue != pushType { return false }
        if let kind, record.kind.rawValue != kind { return false }
        if let channelID, record.request?.channelID != channelID { return false }
        if let search, !search.isEmpty {
            return record.searchText.utf8.lowercasedASCII.contains(search.utf8.lowercasedASCII)
        }
        return true
    }
}

extension Sequence<UInt8> {
    /// The bytes with ASCII letters lowercased (as SQLite's LIKE compares).
    var lowercasedASCII: [UInt8] { map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 } }
}

extension Array where Element == UInt8 {
    func contains(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard needle.count <= count else { return false }
        for start in 0...(count - needle.count) where self[start] == needle[0] {
            if self[start..<start + needle.count].elementsEqual(needle) { return true }
        }
        return false
    }
}

/// The in-memory store: a ring of the newest `retention.count` records.
final class MemoryRecordStore: RecordStore {
    private struct Ring {
        var slots: [NotificationRecord?]
        var next = 0
        var count = 0
    }

    private let ring: Mutex<Ring>
    let capacity: Int
    let retention: RecordRetention

    init(retention: RecordRetention) {
        self.retention = retention
        capacity = max(1, retention.count)
        ring = Mutex(Ring(slots: []))
    }

    func append(_ record: NotificationRecord) -> EventLoopFuture<Void>? {
        // The record pushed out is released after the lock, not under it.
        _ = appendHandingBack(record)
        return nil
    }

    /// Appends `record` and hands back the one it pushed out, for the caller to release once it
    /// holds no lock of its own either (freeing a record is a twentieth of a request's time).
    func appendHandingBack(_ record: NotificationRecord) -> NotificationRecord? {
        ring.withLock { ring in
            // The ring grows to its capacity as records come (a large --store-limit costs
            // nothing up front), then wraps.
            if ring.slots.count < capacity {
                ring.slots.append(record)
                ring.next = (ring.next + 1) % capacity
                ring.count += 1
                return nil
            }
            let old = ring.slots[ring.next]
            ring.slots[ring.next] = record
            ring.next = (ring.next + 1) % capacity
            ring.count = min(ring.count + 1, capacity)
            return old
        }
    }

    /// Newest first.
    private func newestFirst(_ ring: Ring, _ body: (NotificationRecord) -> Bool) {
        var index = ring.next
        for _ in 0..<ring.count {
            index = (index - 1 + capacity) % capacity
            if let record = ring.slots[index], !body(record) { return }
        }
    }

    /// The records matching `query`, newest first, and how many match.
    func records(matching query: NotificationQuery) -> (records: [NotificationRecord], total: Int) {
        ring.withLock { ring in
            var records: [NotificationRecord] = []
            var total = 0
            newestFirst(ring) { record in
                if query.matches(record) {
                    total += 1
                    if records.count < query.limit { records.append(record) }
                }
                return true
            }
            return (records, total)
        }
    }

    /// One record by apns-id (the newest with it) or id.
    func record(id: String) -> NotificationRecord? {
        ring.withLock { ring in
            var found: NotificationRecord?
            newestFirst(ring) { record in
                if record.apnsID == id || String(record.id) == id { found = record; return false }
                return true
            }
            return found
        }
    }

    func clear() {
        ring.withLock { ring in ring = Ring(slots: []) }
    }

    var recordCount: Int { ring.withLock { $0.count } }

    // MARK: RecordStore

    func page(_ query: NotificationQuery) async throws -> RecordPage {
        let (records, total) = records(matching: query)
        return RecordPage(records: records, total: total)
    }

    func find(id: String) async throws -> NotificationRecord? { record(id: id) }

    func removeAll() async throws { clear() }

    func count() async throws -> Int { recordCount }

    func close() async {}

    /// The count is kept on every append; the age here, from the oldest end.
    func applyRetention(now: Date) async throws {
        guard let age = retention.ageInSeconds else { return }
        let cutoff = now.addingTimeInterval(-age)
        let dropped: [NotificationRecord] = ring.withLock { ring in
            var dropped: [NotificationRecord] = []
            while ring.count > 0 {
                let oldest = (ring.next - ring.count + capacity) % capacity
                guard let record = ring.slots[oldest], record.receivedAt < cutoff else { break }
                dropped.append(record)
                ring.slots[oldest] = nil
                ring.count -= 1
            }
            return dropped
        }
        _ = dropped
    }
}

extension NotificationRecord {
    /// The record as the API's JSON text.
    var jsonText: String {
        var writer = JSONWriter(output: JSONBytes())
        writer.value(jsonValue)
        return String(decoding: writer.output.bytes, as: UTF8.self)
    }

    /// What the text search looks in: the payload, device token, topic, reason and apns-id.
    var searchText: String {
        [payloadText, deviceToken ?? "", topic ?? "", reason?.rawValue ?? "", apnsID ?? ""].joined(separator: "\n")
    }
}
