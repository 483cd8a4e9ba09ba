import HeraldDevice
import HeraldJSON
import HeraldPayload
import HeraldProtocol
import Testing
import HeraldTestSupport

/// The notification center simulation: grouping, replacement, badge, background budget, expiry.
@Suite(.ownThreads) struct SimulatedDeviceTests {
    func device(_ configuration: SimulatedDevice.Configuration = .init()) -> SimulatedDevice {
        SimulatedDevice(renderer: NotificationRenderer(bundle: nil, preferredLanguages: ["en"]), configuration: configuration)
    }

    func delivery(_ json: String, id: String? = nil, collapseID: String? = nil, expiration: Expiration? = nil, pushType: PushType? = nil, activity: String? = nil) throws -> SimulatedDevice.Delivery {
        SimulatedDevice.Delivery(
            id: id, payload: try Payload(decoding: json),
            headers: APNsRequestHeaders(pushType: pushType, collapseID: try collapseID.map { try CollapseID($0) }, expiration: expiration), activityID: activity)
    }

    @Test func groupsByThreadNewestFirst() throws {
        var device = device()
        device.receive(try delivery(#"{"aps":{"alert":"a1","thread-id":"a"}}"#, id: "1"), at: 1)
        device.receive(try delivery(#"{"aps":{"alert":"b1","thread-id":"b"}}"#, id: "2"), at: 2)
        device.receive(try delivery(#"{"aps":{"alert":"a2","thread-id":"a"}}"#, id: "3"), at: 3)
        device.receive(try delivery(#"{"aps":{"alert":"none"}}"#, id: "4"), at: 4)
        #expect(device.groups.map(\.threadIdentifier) == [nil, "a", "b"])
        #expect(device.groups[1].notifications.map(\.id) == ["3", "1"])
        #expect(device.notificationCount == 4)
    }

    @Test func memoryStaysBoundedOverManyPushes() throws {
        var device = device(.init(notificationLimit: 8, logLimit: 20))
        for index in 0..<500 {
            let thread = ["a", "b", "c"][index % 3]
            device.receive(try delivery(#"{"aps":{"alert":"n\#(index)","thread-id":"\#(thread)","content-available":1}}"#, id: "\(index)"), at: Double(index) * 60)
        }
        #expect(device.notificationCount == 8)
        // The eight kept are the newest eight, whatever their threads.
        #expect(Set(device.groups.flatMap(\.notifications).map(\.id)) == Set((492..<500).map(String.init)))
        #expect(device.log.count >= 20 && device.log.count <= 30)
        #expect(device.log.last.map(\.time) == Double(499 * 60))
        // Wakes older than the window are forgotten: at most the limit remain.
        #expect(device.backgroundWakes.count <= 3)
    }

    @Test func collapseIDReplaces() throws {
        var device = device()
        device.receive(try delivery(#"{"aps":{"alert":"1-0"}}"#, id: "first", collapseID: "score"), at: 1)
        let events = device.receive(try delivery(#"{"aps":{"alert":"2-0"}}"#, id: "second", collapseID: "score"), at: 2)
        #expect(events.contains(.replaced(id: "second", previousID: "first")))
        #expect(device.notificationCount == 1)
        #expect(device.groups.first?.notifications.first?.content.body == "2-0")
        #expect(device.groups.first?.notifications.first?.replacements == 1)
        device.receive(try delivery(#"{"aps":{"alert":"other"}}"#, id: "third", collapseID: "other"), at: 3)
        #expect(device.notificationCount == 2)
    }

    @Test func badgeSetUnchangedAndCleared() throws {
        var device = device()
        #expect(device.receive(try delivery(#"{"aps":{"alert":"x","badge":5}}"#), at: 1).contains(.badgeChanged(from: nil, to: 5)))
        device.receive(try delivery(#"{"aps":{"alert":"y"}}"#), at: 2)
        #expect(device.badge == 5)
        #expect(device.receive(try delivery(#"{"aps":{"badge":0}}"#), at: 3).contains(.badgeChanged(from: 5, to: nil)))
        #expect(device.badge == nil)
        // A sound-and-badge push is not listed in Notification Center.
        #expect(device.notificationCount == 2)
    }

    @Test func backgroundBudgetCoalescesToTheNewest() throws {
        var device = device(.init(backgroundWakeLimit: 3, backgroundWindow: 3600))
        let silent = #"{"aps":{"content-available":1}}"#
        for (index, time) in [0.0, 10, 20].enumerated() {
            #expect(device.receive(try delivery(silent, id: "w\(index)"), at: time) == [.appWoken(id: "w\(index)")])
        }
        #expect(device.receive(try delivery(silent, id: "late1"), at: 30) == [.backgroundDeferred(id: "late1")])
        #expect(device.receive(try delivery(silent, id: "late2"), at: 40) == [.dropped(id: "late1", reason: .coalesced), .backgroundDeferred(id: "late2")])
        #expect(device.advance(to: 3599).isEmpty)
        #expect(device.advance(to: 3601) == [.appWoken(id: "late2")])
        // The wake at 0 left the window when the one at 3600 came; it is forgotten.
        #expect(device.backgroundWakes == [10, 20, 3600])
        #expect(device.pendingBackground == nil)
    }

    @Test func forceQuitDiscardsBackgroundPushes() throws {
        var device = device()
        device.isAppForceQuit = true
        #expect(device.receive(try delivery(#"{"aps":{"content-available":1}}"#, id: "s"), at: 1) == [.dropped(id: "s", reason: .appForceQuit)])
        #expect(device.receive(try delivery(#"{"aps":{"alert":"still shown"}}"#, id: "a"), at: 2) == [.displayed(id: "a")])
    }

    @Test func expiredDeliveriesAreDropped() throws {
        var device = device()
        #expect(device.receive(try delivery(#"{"aps":{"alert":"late"}}"#, id: "x", expiration: .at(epochSeconds: 100)), at: 101) == [.dropped(id: "x", reason: .expired)])
        #expect(device.receive(try delivery(#"{"aps":{"alert":"on time"}}"#, id: "y", expiration: .at(epochSeconds: 100)), at: 100) == [.displayed(id: "y")])
    }

    @Test func offlineHoldsOnlyTheNewestAndDropsExpirationZero() throws {
        var device = device()
        device.setOnline(false, at: 0)
        #expect(device.receive(try delivery(#"{"aps":{"alert":"A"}}"#, id: "A"), at: 1) == [.held(id: "A")])
        #expect(device.receive(try delivery(#"{"aps":{"alert":"B"}}"#, id: "B", expiration: .at(epochSeconds: 50)), at: 2) == [.dropped(id: "A", reason: .replacedWhileOffline), .held(id: "B")])
        #expect(device.receive(try delivery(#"{"aps":{"alert":"C"}}"#, id: "C", expiration: .immediately), at: 3) == [.dropped(id: "C", reason: .expired)])
        #expect(device.setOnline(true, at: 10) == [.displayed(id: "B")])
        device.setOnline(false, at: 20)
        device.receive(try delivery(#"{"aps":{"alert":"D"}}"#, id: "D", expiration: .at(epochSeconds: 30)), at: 21)
        #expect(device.setOnline(true, at: 31) == [.dropped(id: "D", reason: .expired)])
    }

    @Test func summaryOrdersByRelevanceThenRecency() throws {
        var device = device()
        device.receive(try delivery(#"{"aps":{"alert":"low","relevance-score":0.1}}"#, id: "low"), at: 1)
        device.receive(try delivery(#"{"aps":{"alert":"high","relevance-score":0.9}}"#, id: "high"), at: 2)
        device.receive(try delivery(#"{"aps":{"alert":"none"}}"#, id: "none"), at: 3)
        device.receive(try delivery(#"{"aps":{"alert":"low2","relevance-score":0.1}}"#, id: "low2"), at: 4)
        #expect(device.summary.map(\.id) == ["high", "low2", "low", "none"])
    }

    @Test func liveActivityLifecycle() throws {
        var device = device()
        device.receive(try delivery(#"{"aps":{"event":"start","timestamp":1,"attributes-type":"Match","attributes":{},"content-state":{"score":0}}}"#, id: "s", pushType: .liveactivity, activity: "token1"), at: 1)
        device.receive(try delivery(#"{"aps":{"event":"update","timestamp":5,"content-state":{"score":2}}}"#, id: "u", pushType: .liveactivity, activity: "token1"), at: 5)
        #expect(device.receive(try delivery(#"{"aps":{"event":"update","timestamp":3,"content-state":{"score":1}}}"#, id: "old", pushType: .liveactivity, activity: "token1"), at: 6)
            == [.dropped(id: "old", reason: .staleActivityUpdate)])
        device.receive(try delivery(#"{"aps":{"event":"end","timestamp":9,"content-state":{"score":3},"dismissal-date":100}}"#, id: "e", pushType: .liveactivity, activity: "token1"), at: 9)
        let activity = try #require(device.activities["token1"])
        #expect(activity.ended)
        #expect(activity.updates == 3)
        #expect(activity.latest.contentState?["score"] == .number(JSONNumber(3)))
        #expect(device.notificationCount == 0)
    }

    /// An activity's history keeps its newest 20 updates; what it lets go of is handed, oldest
    /// first, to a caller that asks for it (the mock frees it outside the device's lock).
    @Test func historyHandsOverWhatItLetsGo() throws {
        var device = device()
        var retired: [RenderedNotification.ActivityUpdate] = []
        device.receive(try delivery(#"{"aps":{"event":"start","timestamp":1,"attributes-type":"Match","attributes":{},"content-state":{"score":1}}}"#, pushType: .liveactivity, activity: "t"), at: 1)
        for stamp in 2...30 {
            let update = try delivery(#"{"aps":{"event":"update","timestamp":\#(stamp),"content-state":{"score":\#(stamp)}}}"#, pushType: .liveactivity, activity: "t")
            _ = device.receive(update, at: Double(stamp), retiring: &retired)
        }
        let activity = try #require(device.activities["t"])
        #expect(activity.history.map(\.timestamp) == (11...30).map(Double.init))
        #expect(retired.map(\.timestamp) == (1...10).map(Double.init))
        #expect(retired.map { $0.contentState?["score"] } == (1...10).map { .number(JSONNumber($0)) })
    }

    @Test func removeAndLog() throws {
        var device = device()
        device.receive(try delivery(#"{"aps":{"alert":"a"}}"#, id: "a"), at: 1)
        device.receive(try delivery(#"{"aps":{"alert":"b"}}"#, id: "b"), at: 2)
        device.remove(id: "a")
        #expect(device.summary.map(\.id) == ["b"])
        device.removeAll()
        #expect(device.groups.isEmpty)
        #expect(device.log.map(\.time) == [1, 2])
        #expect(device.receive(try delivery(#"{"aps":{}}"#, id: "n"), at: 3) == [.dropped(id: "n", reason: .nothingToDo)])
    }

    @Test func idsAreAssignedWhenMissing() throws {
        var device = device()
        let events = device.receive(try delivery(#"{"aps":{"alert":"a"}}"#), at: 1)
        #expect(events == [.displayed(id: "delivery-1")])
    }
}
