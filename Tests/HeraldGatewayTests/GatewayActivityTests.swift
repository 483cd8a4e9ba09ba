import Foundation
import HeraldAuth
@testable import HeraldGateway
import HeraldJSON
import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Testing

/// Live Activities through the gateway, with the mock as the device: the mock's records and its
/// simulated activities are the oracle.
@Suite("Gateway Live Activities", .serialized)
struct GatewayActivityTests {
    static let attributesType = "DeliveryAttributes"

    static func randomToken() -> DeviceToken {
        var random = SystemRandomNumberGenerator()
        return try! DeviceToken(bytes: (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
    }

    /// A harness whose mock plays the device (channels on) and reports update tokens to the
    /// gateway, and the app registered with the mock's channel port.
    static func start(
        _ backend: GatewayHarness.Backend, reports: Bool = true, goAway: Bool = false, gateway: (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws -> GatewayHarness {
        let harness = try await GatewayHarness.start(backend, mock: { $0.channelPort = 0 }, gateway: gateway)
        if reports {
            harness.mock.reportActivityTokens(to: ActivityTokenReport(
                url: "http://127.0.0.1:\(harness.port)/v1/apps/\(GatewayHarness.bundleID)/activity-tokens",
                headers: [("Authorization", "Bearer \(GatewayHarness.adminKey)")]))
        }
        let definition = harness.appDefinition().replacingOccurrences(of: "\"port\":\(harness.mock.port)", with: "\"port\":\(harness.mock.port),\"channelPort\":\(harness.mock.channelPort ?? 0)")
        let (status, body) = try await harness.call("POST", "/v1/apps", definition)
        #expect(status == 201, "\(String(describing: body?.root.value))")
        if goAway {
            // Every third Live Activity push is refused with a GOAWAY before it is processed:
            // the client sends it again on a new connection.
            _ = harness.mock.addFault(try FaultRule(parsing: "goaway=Shutdown/before,every=3,push-type=liveactivity"))
        }
        return harness
    }

    /// Polls the gateway's view of an activity until `done` holds (at most 30 s).
    @discardableResult
    static func waitForActivity(_ harness: GatewayHarness, _ id: String, _ what: String, until done: (JSONDocument.Node) -> Bool) async throws -> JSONDocument {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let (status, body) = try await harness.call("GET", "/v1/apps/\(GatewayHarness.bundleID)/activities/\(id)")
            if status == 200, let body, done(body.root) { return body }
            if ContinuousClock.now > deadline {
                Issue.record("\(what): not within 30 s; the activity is \(String(describing: body?.root.value))")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    static func startBody(id: String, to: String, channel: Bool = false) -> String {
        #"{"id":"\#(id)","attributesType":"\#(attributesType)","attributes":{"orderId":"\#(id)"},"contentState":{"step":0},"alert":{"title":"Order \#(id)","body":"On its way"},"to":\#(to),"channel":\#(channel)}"#
    }

    /// The Live Activity pushes the mock accepted, oldest first.
    static func accepted(_ mock: MockAPNsServer) async throws -> [NotificationRecord] {
        var query = NotificationQuery()
        query.pushType = "liveactivity"
        query.accepted = true
        query.limit = 10_000
        return try await mock.notifications(query).reversed()
    }

    static func step(_ record: NotificationRecord) -> Int64? {
        (try? JSONDocument(parsing: record.body))?.root["aps"]?["content-state"]?["step"]?.int64Value
    }

    static func int(_ value: JSONValue?) -> Int64? {
        if case .number(let number)? = value { return number.int64Value }
        return nil
    }

    static func event(_ record: NotificationRecord) -> String? {
        (try? JSONDocument(parsing: record.body))?.root["aps"]?["event"]?.stringValue
    }

    /// The whole loop: start by user, the mock issues the update token and reports it, ten
    /// concurrent updates with GOAWAYs forcing retries, the newest shown and nothing older after
    /// a newer, end removes it, an update after the end is a 409. On PostgreSQL with a second
    /// gateway process working the same activities: nothing is sent twice.
    @Test(.heavy, arguments: GatewayHarness.Backend.available)
    func theWholeLoopWithTheMockAsTheDevice(backend: GatewayHarness.Backend) async throws {
        let harness = try await Self.start(backend, goAway: true)
        var second: GatewayServer?
        if backend == .postgres {
            var configuration = harness.gateway.configuration
            configuration.port = 0
            configuration.workerName = "second"
            let other = try await GatewayServer.open(configuration: configuration)
            try await other.start()
            second = other
        }
        defer { Task { [second] in await second?.stop(); await harness.stop() } }
        let app = GatewayHarness.bundleID
        let startToken = Self.randomToken()
        let (registered, _) = try await harness.call("POST", "/v1/apps/\(app)/start-tokens", #"{"token":"\#(startToken.hex)","attributesType":"\#(Self.attributesType)","user":"ada"}"#)
        #expect(registered == 201)

        let (started, startAnswer) = try await harness.call("POST", "/v1/apps/\(app)/activities", Self.startBody(id: "order-1", to: #"{"user":"ada"}"#))
        #expect(started == 202, "\(String(describing: startAnswer?.root.value))")
        let active = try await Self.waitForActivity(harness, "order-1", "the update token reported by the mock") { $0["updateToken"]?.stringValue != nil }
        let updateToken = try DeviceToken(hex: try #require(active.root["updateToken"]?.stringValue))
        // The mock's device made that token for this activity, from this start token.
        let device = try #require(harness.mock.device(updateToken))
        #expect(device.startToken == startToken)
        // The mock notes how its report went once the post returns (the gateway may be quicker).
        var report: String?
        for _ in 0..<100 where report == nil {
            report = harness.mock.device(updateToken)?.tokenReport
            if report == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(report == "200")

        // Ten updates at once; each answer says its place in order.
        let seqs = try await withThrowingTaskGroup(of: (Int64, Int64).self) { group in
            for step in 1...10 {
                group.addTask {
                    let (status, body) = try await harness.call("PATCH", "/v1/apps/\(app)/activities/order-1", #"{"contentState":{"step":\#(step)}}"#)
                    #expect(status == 202, "\(String(describing: body?.root.value))")
                    return (Int64(step), body?.root["seq"]?.int64Value ?? -1)
                }
            }
            var all: [Int64: Int64] = [:]
            for try await (step, seq) in group { all[step] = seq }
            return all
        }
        #expect(Set(seqs.values) == Set(1...10))
        let newest = try #require(seqs.max { $0.value < $1.value }?.key)
        let settled = try await Self.waitForActivity(harness, "order-1", "the updates settled") { $0["pending"]?.kind == .null }
        #expect(settled.root["lastContent"]?["step"]?.int64Value == newest)

        // The device: shows the newest, and applied content in the order it was submitted.
        let shown = try #require(harness.mock.activities(of: updateToken)?.first)
        #expect(Self.int(shown["contentState"]?["step"]) == newest)
        let records = try await Self.accepted(harness.mock)
        let updates = records.filter { $0.deviceToken == updateToken.hex && Self.event($0) == "update" }
        let order = updates.compactMap { Self.step($0).flatMap { seqs[$0] } }
        #expect(order == order.sorted() && Set(order).count == order.count, "updates reached the device in the order \(order) (seq)")
        #expect(order.last == 10)
        // Nothing sent twice: one accepted record per apns-id, and only the start went to the start token.
        let ids = records.compactMap(\.apnsID)
        #expect(Set(ids).count == ids.count)
        let toStartToken = records.filter { $0.deviceToken == startToken.hex }
        #expect(toStartToken.map { Self.event($0) } == ["start"])
        #expect(records.filter { $0.deviceToken == startToken.hex || $0.deviceToken == updateToken.hex }.count == 1 + updates.count)
        // What the gateway counts agrees with the device.
        let counts = settled.root["counts"]
        #expect(counts?["sent"]?.int64Value == Int64(updates.count))
        #expect((counts?["sent"]?.int64Value ?? 0) + (counts?["superseded"]?.int64Value ?? 0) == 10)

        // End: the device removes it (its dismissal date has come); then an update is a 409.
        let now = Int64(Date().timeIntervalSince1970)
        let (ended, _) = try await harness.call("POST", "/v1/apps/\(app)/activities/order-1/end", #"{"contentState":{"step":99},"dismissalDate":\#(now)}"#)
        #expect(ended == 202)
        try await Self.waitForActivity(harness, "order-1", "the end sent") { $0["pending"]?.kind == .null && $0["state"]?.stringValue == "ended" }
        let endRecord = try #require(try await Self.accepted(harness.mock).last { $0.deviceToken == updateToken.hex })
        #expect(Self.event(endRecord) == "end" && Self.step(endRecord) == 99)
        try await Task.sleep(for: .milliseconds(1_100))
        #expect(harness.mock.activities(of: updateToken)?.isEmpty == true)
        let (late, lateBody) = try await harness.call("PATCH", "/v1/apps/\(app)/activities/order-1", #"{"contentState":{"step":100}}"#)
        #expect(late == 409, "\(String(describing: lateBody?.root.value))")
    }

    /// An update submitted before the app reported the update token waits, and only the newest
    /// of those waiting goes, to the update token only, once the token arrives.
    @Test(arguments: GatewayHarness.Backend.available)
    func updatesWaitForTheUpdateToken(backend: GatewayHarness.Backend) async throws {
        let harness = try await Self.start(backend, reports: false)
        defer { Task { await harness.stop() } }
        let app = GatewayHarness.bundleID
        let startToken = Self.randomToken()
        let (started, _) = try await harness.call("POST", "/v1/apps/\(app)/activities", Self.startBody(id: "late-token", to: #"{"startToken":"\#(startToken.hex)"}"#))
        #expect(started == 202)
        try await Self.waitForActivity(harness, "late-token", "the start accepted") { $0["state"]?.stringValue == "active" }
        let (first, firstBody) = try await harness.call("PATCH", "/v1/apps/\(app)/activities/late-token", #"{"contentState":{"step":1}}"#)
        #expect(first == 202 && firstBody?.root["waitingForToken"]?.boolValue == true)
        let (second, _) = try await harness.call("PATCH", "/v1/apps/\(app)/activities/late-token", #"{"contentState":{"step":2}}"#)
        #expect(second == 202)
        try await Task.sleep(for: .milliseconds(300))
        // Nothing but the start reached the mock: no update went to the start token.
        #expect(try await Self.accepted(harness.mock).map { Self.event($0) } == ["start"])

        // The device made its token; the app reports it.
        let startDevice = try #require(harness.mock.device(startToken))
        let updateToken = try #require(startDevice.activityTokens.first)
        let (reported, _) = try await harness.call("POST", "/v1/apps/\(app)/activities/late-token/tokens", #"{"token":"\#(updateToken.hex)"}"#)
        #expect(reported == 200)
        let settled = try await Self.waitForActivity(harness, "late-token", "the waiting update sent") { $0["pending"]?.kind == .null }
        let records = try await Self.accepted(harness.mock)
        #expect(records.map { Self.event($0) } == ["start", "update"])
        #expect(records.last?.deviceToken == updateToken.hex && records.last.flatMap(Self.step) == 2)
        #expect(settled.root["counts"]?["superseded"]?.int64Value == 1)
        #expect(Self.int(harness.mock.activities(of: updateToken)?.first?["contentState"]?["step"]) == 2)
    }

    /// With a channel: the gateway creates it on the mock, starts the activity subscribed to it,
    /// sends updates and the end as broadcasts, and deletes the channel after the end.
    @Test(arguments: GatewayHarness.Backend.available)
    func aChannelCarriesTheUpdatesAndIsDeletedAtTheEnd(backend: GatewayHarness.Backend) async throws {
        let harness = try await Self.start(backend, reports: false, goAway: true)
        defer { Task { await harness.stop() } }
        let app = GatewayHarness.bundleID
        let startToken = Self.randomToken()
        let (started, _) = try await harness.call("POST", "/v1/apps/\(app)/activities", Self.startBody(id: "match", to: #"{"startToken":"\#(startToken.hex)"}"#, channel: true))
        #expect(started == 202)
        let active = try await Self.waitForActivity(harness, "match", "the channel made and the start accepted") { $0["state"]?.stringValue == "active" }
        let channel = try #require(active.root["channel"]?["id"]?.stringValue)
        #expect(harness.mock.channels.map(\.id) == [channel])
        for step in 1...5 {
            let (status, _) = try await harness.call("PATCH", "/v1/apps/\(app)/activities/match", #"{"contentState":{"step":\#(step)}}"#)
            #expect(status == 202)
        }
        try await Self.waitForActivity(harness, "match", "the broadcasts sent") { $0["pending"]?.kind == .null }
        let shown = try #require(harness.mock.activities(of: startToken)?.first)
        #expect(shown["channel"]?.stringValue == channel)
        #expect(Self.int(shown["contentState"]?["step"]) == 5)
        let (ended, _) = try await harness.call("POST", "/v1/apps/\(app)/activities/match/end", #"{"contentState":{"step":6}}"#)
        #expect(ended == 202)
        try await Self.waitForActivity(harness, "match", "the channel deleted") { $0["channel"]?["deleted"]?.boolValue == true }
        #expect(harness.mock.channels.isEmpty)
        let broadcasts = try await Self.accepted(harness.mock).filter { $0.kind == .broadcast }
        let steps = broadcasts.compactMap(Self.step)
        #expect(steps == steps.sorted() && steps.last == 6, "broadcast steps \(steps)")
    }

    /// The door: what the device would ignore is refused with the reason; a duplicate id is a
    /// 409; an unknown activity a 404; a start for a user without a start token says how to fix it.
    @Test func theDoorRefusesWhatTheDeviceWouldIgnore() async throws {
        let harness = try await Self.start(.sqlite, reports: false)
        defer { Task { await harness.stop() } }
        let app = GatewayHarness.bundleID
        let token = Self.randomToken().hex
        let noAlert = #"{"id":"a","attributesType":"T","attributes":{},"contentState":{"step":0},"to":{"startToken":"\#(token)"}}"#
        let (status1, body1) = try await harness.call("POST", "/v1/apps/\(app)/activities", noAlert)
        #expect(status1 == 422 && body1?.root["error"]?["pointer"]?.stringValue == "/alert")
        let noAttributes = #"{"id":"a","attributesType":"T","contentState":{},"alert":"Hi","to":{"startToken":"\#(token)"}}"#
        let (status2, body2) = try await harness.call("POST", "/v1/apps/\(app)/activities", noAttributes)
        #expect(status2 == 422 && body2?.root["error"]?["pointer"]?.stringValue == "/attributes")
        let (status3, body3) = try await harness.call("POST", "/v1/apps/\(app)/activities", Self.startBody(id: "b", to: #"{"user":"nobody"}"#))
        #expect(status3 == 422 && (body3?.root["error"]?["message"]?.stringValue ?? "").contains("start-tokens"), "\(String(describing: body3?.root.value))")
        let (status4, _) = try await harness.call("POST", "/v1/apps/\(app)/activities", Self.startBody(id: "c", to: #"{"startToken":"\#(token)"}"#))
        #expect(status4 == 202)
        let (status5, _) = try await harness.call("POST", "/v1/apps/\(app)/activities", Self.startBody(id: "c", to: #"{"startToken":"\#(token)"}"#))
        #expect(status5 == 409)
        let (status6, body6) = try await harness.call("PATCH", "/v1/apps/\(app)/activities/c", #"{"alert":"no content"}"#)
        #expect(status6 == 422 && body6?.root["error"]?["pointer"]?.stringValue == "/contentState")
        let (status7, _) = try await harness.call("PATCH", "/v1/apps/\(app)/activities/none", #"{"contentState":{}}"#)
        #expect(status7 == 404)
        let (status8, body8) = try await harness.call("PATCH", "/v1/apps/\(app)/activities/c", #"{"contentState":{},"priority":10}"#)
        #expect(status8 == 202 && body8?.root["warnings"]?.count == 1, "the update waits for a token: \(String(describing: body8?.root.value))")
        let huge = String(repeating: "x", count: 5_000)
        let (status9, body9) = try await harness.call("PATCH", "/v1/apps/\(app)/activities/c", #"{"contentState":{"text":"\#(huge)"}}"#)
        #expect(status9 == 422 && body9?.root["error"]?["findings"] != nil, "\(String(describing: body9?.root.value))")
    }

    /// Started on a start token, the update token reported by hand (the mock's device made it).
    static func startReported(_ harness: GatewayHarness, id: String) async throws -> (start: DeviceToken, update: DeviceToken) {
        let startToken = Self.randomToken()
        let (started, _) = try await harness.call("POST", "/v1/apps/\(GatewayHarness.bundleID)/activities", Self.startBody(id: id, to: #"{"startToken":"\#(startToken.hex)"}"#))
        #expect(started == 202)
        try await Self.waitForActivity(harness, id, "the start accepted") { $0["state"]?.stringValue == "active" }
        let updateToken = try #require(harness.mock.device(startToken)?.activityTokens.first)
        let (reported, _) = try await harness.call("POST", "/v1/apps/\(GatewayHarness.bundleID)/activities/\(id)/tokens", #"{"token":"\#(updateToken.hex)"}"#)
        #expect(reported == 200)
        return (startToken, updateToken)
    }

    /// Past the system's limit the activity is expired: updates answer 409, nothing more is sent.
    @Test func anActivityPastTheLimitExpires() async throws {
        let harness = try await Self.start(.sqlite, reports: false) { configuration in
            configuration.activityLimits.active = .seconds(2)
            configuration.activityLimits.expiryInterval = .milliseconds(100)
        }
        defer { Task { await harness.stop() } }
        let app = GatewayHarness.bundleID
        _ = try await Self.startReported(harness, id: "short")
        let (early, _) = try await harness.call("PATCH", "/v1/apps/\(app)/activities/short", #"{"contentState":{"step":1}}"#)
        #expect(early == 202)
        let expired = try await Self.waitForActivity(harness, "short", "expired") { $0["state"]?.stringValue == "expired" }
        #expect(expired.root["lastContent"]?["step"]?.int64Value == 1)
        let (late, body) = try await harness.call("PATCH", "/v1/apps/\(app)/activities/short", #"{"contentState":{"step":2}}"#)
        #expect(late == 409 && (body?.root["error"]?["message"]?.stringValue ?? "").contains("expired"), "\(String(describing: body?.root.value))")
        let (listed, list) = try await harness.call("GET", "/v1/apps/\(app)/activities?state=expired")
        #expect(listed == 200 && list?.root["activities"]?.elements.compactMap { $0["id"]?.stringValue } == ["short"])
    }

    /// A dead update token (410) is forgotten and the update counted failed; the token the app
    /// reports next takes the updates, and the old one gets nothing more.
    @Test func aNewUpdateTokenReplacesADeadOne() async throws {
        let harness = try await Self.start(.sqlite, reports: false)
        defer { Task { await harness.stop() } }
        let app = GatewayHarness.bundleID
        let (_, first) = try await Self.startReported(harness, id: "rotating")
        harness.mock.unregister(first)
        let (status, _) = try await harness.call("PATCH", "/v1/apps/\(app)/activities/rotating", #"{"contentState":{"step":1}}"#)
        #expect(status == 202)
        let failed = try await Self.waitForActivity(harness, "rotating", "the update to the dead token failed") { $0["counts"]?["failed"]?.int64Value == 1 }
        #expect(failed.root["updateToken"]?.kind == .null)
        let reason = failed.root["lastReason"]?.stringValue ?? ""
        #expect(reason.contains("Unregistered"), "\(reason)")
        let second = Self.randomToken()
        let (reported, _) = try await harness.call("POST", "/v1/apps/\(app)/activities/rotating/tokens", #"{"token":"\#(second.hex)"}"#)
        #expect(reported == 200)
        let (again, _) = try await harness.call("PATCH", "/v1/apps/\(app)/activities/rotating", #"{"contentState":{"step":2}}"#)
        #expect(again == 202)
        try await Self.waitForActivity(harness, "rotating", "the update to the new token sent") { $0["counts"]?["sent"]?.int64Value == 1 }
        let updates = try await Self.accepted(harness.mock).filter { Self.event($0) == "update" }
        #expect(updates.map(\.deviceToken) == [second.hex] && updates.compactMap(Self.step) == [2])
    }

    /// An update in flight to the old token when the app reports a new one, refused by the old
    /// token, goes to the new one: the token change loses nothing.
    @Test func anUpdateInFlightWhenTheTokenChangesGoesToTheNewToken() async throws {
        let harness = try await Self.start(.sqlite, reports: false)
        defer { Task { await harness.stop() } }
        let app = GatewayHarness.bundleID
        let (_, old) = try await Self.startReported(harness, id: "moving")
        _ = harness.mock.addFault(try FaultRule(parsing: "status=410/Unregistered,delay=800ms,token=\(old.hex)"))
        let (status, _) = try await harness.call("PATCH", "/v1/apps/\(app)/activities/moving", #"{"contentState":{"step":1}}"#)
        #expect(status == 202)
        try await Task.sleep(for: .milliseconds(250))
        let new = Self.randomToken()
        let (reported, _) = try await harness.call("POST", "/v1/apps/\(app)/activities/moving/tokens", #"{"token":"\#(new.hex)"}"#)
        #expect(reported == 200)
        let sent = try await Self.waitForActivity(harness, "moving", "the update sent to the new token") { $0["counts"]?["sent"]?.int64Value == 1 }
        #expect(sent.root["counts"]?["failed"]?.int64Value == 0 && sent.root["updateToken"]?.stringValue == new.hex)
        let updates = try await Self.accepted(harness.mock).filter { Self.event($0) == "update" }
        #expect(updates.map(\.deviceToken) == [new.hex] && updates.compactMap(Self.step) == [1])
    }

    /// Updates go at priority 5 unless asked; priority 10 is counted per hour, shown, warned
    /// about past the threshold, and never refused.
    @Test func priority10IsCountedAndWarnedAbout() async throws {
        let harness = try await Self.start(.sqlite, reports: false) { $0.activityLimits.priority10PerHour = 2 }
        defer { Task { await harness.stop() } }
        let app = GatewayHarness.bundleID
        _ = try await Self.startReported(harness, id: "busy")
        var warnings: [Int] = []
        for step in 1...4 {
            let priority = step == 1 ? "" : #","priority":10"#
            let (status, body) = try await harness.call("PATCH", "/v1/apps/\(app)/activities/busy", #"{"contentState":{"step":\#(step)}\#(priority)}"#)
            #expect(status == 202)
            warnings.append(body?.root["warnings"]?.count ?? -1)
            try await Self.waitForActivity(harness, "busy", "update \(step) sent") { $0["counts"]?["sent"]?.int64Value == Int64(step) }
        }
        #expect(warnings == [0, 0, 0, 1], "the third priority-10 update is past 2 an hour")
        let (_, view) = try await harness.call("GET", "/v1/apps/\(app)/activities/busy")
        #expect(view?.root["budget"]?["priority10ThisHour"]?.int64Value == 3)
        let priorities = try await Self.accepted(harness.mock).filter { Self.event($0) == "update" }.map { $0.request?.priority?.rawValue }
        #expect(priorities == [5, 10, 10, 10])
        let (_, metrics, _) = try await harness.raw("GET", "/metrics")
        let text = String(decoding: metrics, as: UTF8.self)
        #expect(text.contains(#"herald_gateway_activity_priority10_total{app="\#(app)"} 3"#), "\(text.split(separator: "\n").filter { $0.contains("activity") })")
    }

    /// Erasing a user forgets its push-to-start tokens: nothing can be started on them after.
    @Test func erasingAUserForgetsItsStartTokens() async throws {
        let harness = try await Self.start(.sqlite, reports: false)
        defer { Task { await harness.stop() } }
        let app = GatewayHarness.bundleID
        let token = Self.randomToken()
        let (registered, _) = try await harness.call("POST", "/v1/apps/\(app)/start-tokens", #"{"token":"\#(token.hex)","attributesType":"\#(Self.attributesType)","user":"grace"}"#)
        #expect(registered == 201)
        let (erased, body) = try await harness.call("DELETE", "/v1/apps/\(app)/users/grace")
        #expect(erased == 200 && body?.root["erased"]?["startTokens"]?.int64Value == 1, "\(String(describing: body?.root.value))")
        let (started, _) = try await harness.call("POST", "/v1/apps/\(app)/activities", Self.startBody(id: "after", to: #"{"user":"grace"}"#))
        #expect(started == 422)
    }
}
