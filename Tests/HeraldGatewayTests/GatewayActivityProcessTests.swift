import Foundation
import HeraldAuth
@testable import HeraldGateway
import HeraldJSON
import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Testing

/// Live Activities across two `herald serve` processes on one PostgreSQL, the mock as the device
/// reporting update tokens to the second: every call alternates between the processes, GOAWAYs
/// force retries, and the mock's records show nothing sent twice and nothing older after newer,
/// on the activity's own token and on a channel.
@Suite(.serialized) struct GatewayActivityProcessTests {
    static let adminKey = "activity-admin-key-0123456789"

    @Test(.enabled(if: PostgresTestDatabase.isAvailable, Comment(rawValue: PostgresTestDatabase.notConfigured)))
    func twoProcessesShareTheActivities() async throws {
        let postgres = try await PostgresTestDatabase()
        let signing = ProviderSigningKey.generate(keyID: GatewayHarness.keyID, teamID: GatewayHarness.teamID)
        var configuration = MockConfiguration()
        configuration.port = 0
        configuration.apiPort = nil
        configuration.channelPort = 0
        configuration.transport = .plaintext
        configuration.keys = [signing.publicKey]
        let mock = try MockAPNsServer(configuration: configuration)
        try await mock.start()
        defer { Task { await mock.stop() } }
        _ = mock.addFault(try FaultRule(parsing: "goaway=Shutdown/before,every=4,push-type=liveactivity"))

        var gateways: [ServeProcess] = []
        for _ in 0..<2 {
            gateways.append(try await ServeProcess.start(
                ["--postgres", postgres.url, "--admin-key-env", "HERALD_ACTIVITY_ADMIN", "--claim-lease", "31", "--request-timeout", "30"],
                environment: ["HERALD_ACTIVITY_ADMIN": Self.adminKey]))
        }
        defer { for gateway in gateways where gateway.program.process.isRunning { gateway.program.process.signal(SIGKILL) } }
        #expect(Set(gateways.map(\.worker)).count == 2)
        var turn = 0
        /// A call to the processes in turn.
        func call(_ method: String, _ path: String, _ body: String? = nil) async throws -> (Int, JSONDocument?) {
            turn += 1
            let answer = try await ServeProcess.call(port: gateways[turn % 2].port, method, path, body, key: Self.adminKey)
            return (answer.status, answer.json)
        }
        let key = signing.pkcs8PEM.replacingOccurrences(of: "\n", with: "\\n")
        let app = "com.example.app"
        let definition = #"{"bundleId":"\#(app)","environment":"sandbox","server":{"host":"127.0.0.1","port":\#(mock.port),"plaintext":true,"channelPort":\#(mock.channelPort ?? 0)},"token":{"key":"\#(key)","keyId":"\#(GatewayHarness.keyID)","teamId":"\#(GatewayHarness.teamID)"}}"#
        #expect(try await call("POST", "/v1/apps", definition).0 == 201)
        mock.reportActivityTokens(to: ActivityTokenReport(
            url: "http://127.0.0.1:\(gateways[1].port)/v1/apps/\(app)/activity-tokens", headers: [("Authorization", "Bearer \(Self.adminKey)")]))

        func waitFor(_ id: String, _ what: String, _ done: (JSONDocument.Node) -> Bool) async throws -> JSONDocument.Node {
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                if let view = try await call("GET", "/v1/apps/\(app)/activities/\(id)").1?.root, done(view) { return view }
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("\(what): not within 60 s")
            throw CancellationError()
        }
        let startToken = GatewayActivityTests.randomToken()
        #expect(try await call("POST", "/v1/apps/\(app)/start-tokens", #"{"token":"\#(startToken.hex)","attributesType":"\#(GatewayActivityTests.attributesType)","user":"ada"}"#).0 == 201)
        for (id, channel) in [("by-token", false), ("by-channel", true)] {
            let (started, answer) = try await call("POST", "/v1/apps/\(app)/activities", GatewayActivityTests.startBody(id: id, to: #"{"user":"ada"}"#, channel: channel))
            #expect(started == 202, "\(String(describing: answer?.root.value))")
            _ = try await waitFor(id, "\(id) started") { channel ? $0["state"]?.stringValue == "active" : $0["updateToken"]?.stringValue != nil }
            // Ten updates, through both processes at once.
            var seqs: [Int64: Int64] = [:]
            try await withThrowingTaskGroup(of: (Int64, Int64).self) { group in
                for step in 1...10 {
                    let port = gateways[step % 2].port
                    group.addTask {
                        let answer = try await ServeProcess.call(port: port, "PATCH", "/v1/apps/\(app)/activities/\(id)", #"{"contentState":{"step":\#(step)}}"#, key: Self.adminKey)
                        #expect(answer.status == 202)
                        return (Int64(step), answer.json?.root["seq"]?.int64Value ?? -1)
                    }
                }
                for try await (step, seq) in group { seqs[step] = seq }
            }
            #expect(Set(seqs.values) == Set(1...10))
            let newest = try #require(seqs.max { $0.value < $1.value }?.key)
            let settled = try await waitFor(id, "\(id) settled") { $0["pending"]?.kind == .null }
            #expect(settled["lastContent"]?["step"]?.int64Value == newest)
            let (ended, _) = try await call("POST", "/v1/apps/\(app)/activities/\(id)/end", #"{"contentState":{"step":99}}"#)
            #expect(ended == 202)
            _ = try await waitFor(id, "\(id) ended") { $0["pending"]?.kind == .null && (!channel || $0["channel"]?["deleted"]?.boolValue == true) }

            // The mock's records: this activity's pushes, in order of arrival.
            let records = try await GatewayActivityTests.accepted(mock).filter { record in
                guard let body = try? JSONDocument(parsing: record.body) else { return false }
                let aps = body.root["aps"]
                return aps?["attributes"]?["orderId"]?.stringValue == id || (aps?["event"]?.stringValue != "start" && (channel ? record.kind == .broadcast : record.kind != .broadcast))
            }
            let ids = records.compactMap(\.apnsID)
            #expect(Set(ids).count == ids.count, "nothing sent twice: \(ids.count) records, \(Set(ids).count) apns-ids")
            let steps = records.filter { GatewayActivityTests.event($0) != "start" }.compactMap(GatewayActivityTests.step)
            let order = steps.map { $0 == 99 ? 11 : seqs[$0] ?? -1 }
            #expect(order == order.sorted() && Set(order).count == order.count && order.last == 11, "\(id): content in the order \(steps)")
            #expect(records.filter { GatewayActivityTests.event($0) == "start" }.count == 1)
            try await mock.clearNotifications()
        }
        #expect(mock.channels.isEmpty, "the channel was deleted at the end")
    }
}
