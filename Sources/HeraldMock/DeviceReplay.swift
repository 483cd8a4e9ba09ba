import Foundation
import HeraldDevice
import HeraldJSON
import HeraldPayload

/// What a device shows, rebuilt from the pushes it was sent: after a restart on a database, and
/// for the API's `lang` (the same device, rendered in another language). The simulation is a
/// function of its deliveries and their times, so a replay gives what the live device gave.
enum DeviceReplay {
    /// How many of a device's newest accepted pushes are replayed (its Notification Center keeps
    /// 64).
    static let depth = 200

    /// The newest accepted pushes a device received, oldest first: those to its token and the
    /// broadcasts of its channels; and how many accepted pushes it received in all.
    static func deliveries(to device: MockDevice, in store: any RecordStore) async throws -> (records: [NotificationRecord], total: Int) {
        var query = NotificationQuery()
        query.token = device.token.hex
        query.accepted = true
        query.kind = NotificationRecord.Kind.device.rawValue
        query.limit = depth
        let direct = try await store.page(query)
        var records = direct.records
        var total = direct.total
        for channel in device.channels.sorted() {
            var broadcasts = NotificationQuery()
            broadcasts.kind = NotificationRecord.Kind.broadcast.rawValue
            broadcasts.channelID = channel
            broadcasts.accepted = true
            broadcasts.limit = depth
            let page = try await store.page(broadcasts)
            records += page.records
            total += page.total
        }
        return (Array(records.sorted { $0.id < $1.id }.suffix(depth)), total)
    }

    /// A device that received `records` (oldest first), rendered by `renderer`.
    static func simulate(_ records: [NotificationRecord], renderer: NotificationRenderer) -> SimulatedDevice {
        var device = SimulatedDevice(renderer: renderer)
        for record in records where record.delivered {
            guard let headers = record.request, let document = try? JSONDocument(parsing: record.body),
                  let rendered = try? renderer.render(document: document, headers: headers, includingUserInfo: false) else { continue }
            let activityID = record.kind == .broadcast ? headers.channelID : nil
            _ = device.receive(
                SimulatedDevice.Delivery(id: record.apnsID, payload: Payload(), headers: headers, activityID: activityID, rendered: rendered),
                at: record.receivedAt.timeIntervalSince1970)
        }
        return device
    }

    /// `device` with its Notification Center rebuilt from `store`, rendered by `renderer`.
    static func rebuild(_ device: MockDevice, from store: any RecordStore, renderer: NotificationRenderer) async throws -> MockDevice {
        let (records, total) = try await deliveries(to: device, in: store)
        var rebuilt = device
        rebuilt.device = simulate(records, renderer: renderer)
        rebuilt.deliveries = total
        if let last = records.last?.receivedAt, (rebuilt.lastSeen ?? .distantPast) < last { rebuilt.lastSeen = last }
        return rebuilt
    }
}
