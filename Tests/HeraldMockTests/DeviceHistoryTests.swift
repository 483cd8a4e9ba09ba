import Foundation
import HeraldDevice
import HeraldJSON
@testable import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Testing

/// The mock's memory under a load test: only the most recently reached devices keep what they
/// showed; the others keep their state.
@Suite(.serialized) struct DeviceHistoryTests {
    typealias H = MockHarness

    /// Five devices, a budget of three: the two reached first forget their Notification Center
    /// and log, keep their badge and counts, and start again with their next push, which costs
    /// the device reached longest ago its history.
    @Test func onlyTheMostRecentlyReachedDevicesKeepAHistory() async throws {
        let mock = try await H.start { $0.deviceHistories = 3 }
        defer { Task { await mock.stop() } }
        let tokens = (1...5).map { String(repeating: String(format: "%02x", $0), count: 32) }
        let run = try await mock.python(tokens.enumerated().map { index, token in
            H.push(#"{"aps":{"alert":"Hello \#(index)","badge":\#(index + 1)}}"#, token: token)
        })
        #expect(run.answers.map(\.status) == [200, 200, 200, 200, 200])
        func device(_ index: Int) throws -> MockDevice { try #require(mock.server.device(try DeviceToken(hex: tokens[index]))) }
        for index in 0..<5 {
            let forgotten = index < 2
            let state = try device(index)
            #expect(state.historyForgotten == forgotten, "device \(index)")
            #expect(state.device.notificationCount == (forgotten ? 0 : 1) && state.device.log.isEmpty == forgotten, "device \(index)")
            // What the device is stays: its badge, its binding, its count of deliveries.
            #expect(state.device.badge == index + 1 && state.deliveries == 1 && state.topic == "com.example.app", "device \(index)")
            guard case .object(let json) = state.jsonValue else { Issue.record("not an object"); continue }
            #expect(json["historyForgotten"] == .bool(forgotten))
        }

        let again = try await mock.python([H.push(#"{"aps":{"alert":"Back"}}"#, token: tokens[0])])
        #expect(again.answers.map(\.status) == [200])
        let first = try device(0)
        #expect(!first.historyForgotten && first.device.notificationCount == 1 && first.device.groups.first?.notifications.first?.content.body == "Back")
        #expect(try device(2).historyForgotten && device(2).device.notificationCount == 0)
        #expect(try !device(3).historyForgotten && !device(4).historyForgotten)
    }

    @Test func aBudgetBelowOneIsRefused() throws {
        var configuration = MockConfiguration()
        configuration.deviceHistories = 0
        #expect(throws: (any Error).self) { try MockAPNsServer(configuration: configuration) }
        var settings = MockSettings()
        settings.deviceHistories = 0
        #expect(throws: MockSettingsError.self) { _ = try settings.configuration() }
    }

    /// Devices made by a first push are forgotten oldest first beyond the registry's capacity,
    /// registered ones never; a forgotten device gives back its place in the history budget.
    @Test func devicesMadeByAPushAreForgottenOldestFirst() throws {
        let registry = DeviceRegistry(capacity: 3, histories: 2, renderer: NotificationRenderer(bundle: nil, preferredLanguages: ["en"]))
        let tokens = try (1...6).map { try DeviceToken(hex: String(repeating: String(format: "%02x", $0), count: 32)) }
        _ = registry.register(tokens[0], topic: "com.example.app", environment: .sandbox)
        var evicted: [DeviceToken] = []
        for token in tokens.dropFirst() {
            let made = registry.entry(token, creatingWith: "com.example.app", environment: .sandbox)
            #expect(made.created)
            if let gone = made.evicted { evicted.append(gone) }
            registry.reached(token)
        }
        #expect(evicted == [tokens[1], tokens[2]])
        #expect(registry.count == 4 && registry.entry(tokens[0]) != nil && registry.entry(tokens[1]) == nil)
        // The two most recently reached keep a history; the third was reached before them.
        #expect(registry.all.filter { !$0.historyForgotten && $0.registered == false }.map(\.token) == [tokens[4], tokens[5]].sorted { $0.hex < $1.hex })
        #expect(registry.entry(tokens[3])?.state.withLock { $0.historyForgotten } == true)
    }

    /// Against a naive model (a list of keys, most recent last): after every touch or removal
    /// the same keys are kept, and a touch reports exactly the keys that fell out.
    @Test(.ownThreads) func recencyOrderMatchesANaiveModel() {
        var rng = SeededGenerator(seed: 0x5EED_0031)
        for limit in [1, 2, 3, 7, 40] {
            var order = RecencyOrder<Int>(limit: limit)
            var model: [Int] = []
            for _ in 0..<4_000 {
                let key = Int.random(in: 0..<(limit * 3), using: &rng)
                if Int.random(in: 0..<10, using: &rng) == 0 {
                    order.remove(key)
                    model.removeAll { $0 == key }
                } else {
                    let dropped = order.touch(key).map { [$0] } ?? []
                    model.removeAll { $0 == key }
                    model.append(key)
                    let expected = Array(model.prefix(max(0, model.count - limit)))
                    model.removeFirst(expected.count)
                    #expect(dropped == expected, "limit \(limit)")
                }
                for candidate in 0..<(limit * 3) where order.contains(candidate) != model.contains(candidate) {
                    Issue.record("limit \(limit): key \(candidate) kept \(order.contains(candidate)), model \(model)")
                    return
                }
            }
        }
    }
}
