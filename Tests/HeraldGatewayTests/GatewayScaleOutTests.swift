import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import HeraldGateway
import HeraldAuth
import HeraldJSON
@testable import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Testing

/// `herald serve` as processes on one PostgreSQL, one of them killed (SIGKILL) while sending
/// 30,000 notifications: every notification still reaches its outcome, none is lost, and the
/// duplicates (one apns-id accepted twice by the mock) are counted and no more than the killed
/// process held.
@Suite(.serialized, .exclusive) struct GatewayScaleOutTests {
    static let adminKey = "scale-out-admin-key-0123456789"

    static func start(postgres url: String, inFlight: Int) async throws -> ServeProcess {
        // At normal priority: the suite holds the load gate alone (.exclusive), and gateways
        // at nice 10 starved behind the test process timed out their own sends.
        try await ServeProcess.start(
            ["--postgres", url, "--admin-key-env", "HERALD_SCALE_OUT_ADMIN", "--in-flight", String(inFlight), "--claim-lease", "6", "--request-timeout", "5"],
            environment: ["HERALD_SCALE_OUT_ADMIN": adminKey])
    }

    static func call(_ port: Int, _ method: String, _ path: String, _ body: String? = nil) async throws -> (Int, JSONDocument?) {
        let answer = try await ServeProcess.call(port: port, method, path, body, key: adminKey)
        return (answer.status, answer.json)
    }

    @Test(arguments: [2, 3])
    func aKilledProcessLosesNothing(_ processes: Int) async throws {
        let postgres = try await PostgresTestDatabase()
        let harnessKey = GatewayHarness.self
        let signing = ProviderSigningKey.generate(keyID: harnessKey.keyID, teamID: harnessKey.teamID)
        var mockConfiguration = MockConfiguration()
        mockConfiguration.port = 0
        mockConfiguration.apiPort = nil
        mockConfiguration.channelPort = nil
        mockConfiguration.transport = .plaintext
        mockConfiguration.keys = [signing.publicKey]
        mockConfiguration.storeCapacity = 250_000
        // Its own event loop: the flood it takes does not queue other tests' connections.
        mockConfiguration.ownEventLoopThreads = 1
        let mock = try MockAPNsServer(configuration: mockConfiguration)
        try await mock.start()
        defer { Task { await mock.stop() } }

        let inFlight = 1_000
        var gateways: [ServeProcess] = []
        for _ in 0..<processes { gateways.append(try await Self.start(postgres: postgres.url, inFlight: inFlight)) }
        defer { for gateway in gateways where gateway.program.process.isRunning { gateway.program.process.signal(SIGKILL) } }
        #expect(Set(gateways.map(\.worker)).count == processes)

        let key = signing.pkcs8PEM.replacingOccurrences(of: "\n", with: "\\n")
        let app = #"{"bundleId":"com.example.app","environment":"sandbox","server":{"host":"127.0.0.1","port":\#(mock.port),"plaintext":true},"token":{"key":"\#(key)","keyId":"\#(harnessKey.keyID)","teamId":"\#(harnessKey.teamID)"},"concurrency":100}"#
        #expect(try await Self.call(gateways[0].port, "POST", "/v1/apps", app).0 == 201)

        // 30,000 notifications (HERALD_SCALE_OUT_TOTAL to change it): ten jobs, submitted
        // through every process's API. The mock here is a debug build answering about a
        // thousand requests a second beside the gateways: 100 in flight per process keeps its
        // answers well inside the five-second request timeout (1,500 did not: whole
        // connections timed out and were sent again).
        let total = Int(ProcessInfo.processInfo.environment["HERALD_SCALE_OUT_TOTAL"] ?? "") ?? 30_000
        var jobs: [String] = []
        for batch in 0..<10 {
            let tokens = (0..<(total / 10)).map { index in "de" + String(repeating: "ad", count: 27) + String(format: "%02x%08x", processes, batch * 100_000 + index) }
            let body = #"{"payload":{"aps":{"alert":"Scale out"}},"tokens":[\#(tokens.map { "\"\($0)\"" }.joined(separator: ","))]}"#
            let (status, answer) = try await Self.call(gateways[batch % processes].port, "POST", "/v1/apps/com.example.app/notifications", body)
            #expect(status == 202)
            jobs.append(try #require(answer?.root["id"]?.stringValue))
        }

        func accepted() async throws -> (accepted: Int, waiting: Int, other: Int) {
            var counts = (0, 0, 0)
            for job in jobs {
                let (status, summary) = try await Self.call(gateways[0].port, "GET", "/v1/apps/com.example.app/notifications/\(job)")
                // Not known (a 503 while the process finds the database away): still waiting.
                guard status == 200 else {
                    counts.1 += total / 10
                    continue
                }
                let values = summary?.root["counts"]
                counts.0 += Int(values?["accepted"]?.int64Value ?? 0)
                counts.1 += Int((values?["queued"]?.int64Value ?? 0) + (values?["claimed"]?.int64Value ?? 0))
                counts.2 += Int((values?["rejected"]?.int64Value ?? 0) + (values?["expired"]?.int64Value ?? 0) + (values?["skipped"]?.int64Value ?? 0))
            }
            return counts
        }
        // Midway, the second process is killed: no graceful shutdown, its claims left held.
        let deadline = ContinuousClock.now + .seconds(300)
        while try await accepted().accepted < total / 4, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(200)) }
        let victim = gateways[1]
        // What the victim resent itself (no answer in time) is a source of duplicates too; its
        // counters die with it, so they are read just before.
        let victimUnanswered = try await victim.unansweredSends()
        victim.program.process.signal(SIGKILL)
        _ = await victim.program.waitForExit()
        let heldAtKill = Int(try await postgres.query("SELECT count(*) FROM deliveries WHERE state = 'claimed' AND claimed_by = '\(victim.worker)'")) ?? -1
        #expect(heldAtKill >= 0 && heldAtKill <= inFlight, "the killed process held at most its --in-flight: \(heldAtKill)")

        var state = try await accepted()
        while state.waiting > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(250))
            state = try await accepted()
        }
        let events = mock.connectionEvents(limit: 100_000)
        let eventSummary = Dictionary(grouping: events) { "\($0.kind.rawValue)\($0.code.map { " " + $0 } ?? "")" }
            .map { "\($0.key): \($0.value.count)" }.sorted().joined(separator: ", ")
        let logs = ["the mock's connection events: \(eventSummary)"] + gateways.map { "\($0.worker):\n" + $0.program.output.split(separator: "\n").filter { !$0.contains("admin key") }.suffix(20).joined(separator: "\n") }
        #expect(state.accepted == total && state.waiting == 0 && state.other == 0, "every notification accepted: \(state)\n\(logs.joined(separator: "\n----\n"))")

        // The mock's side: every delivery's apns-id accepted at least once; the extra ones are
        // resends of what the killed process held, no more.
        var query = NotificationQuery()
        query.limit = 1_000_000
        query.accepted = true
        var seen: [String: Int] = [:]
        for record in try await mock.notifications(query) { seen[record.apnsID ?? "", default: 0] += 1 }
        let ids = try await postgres.query("SELECT apns_id FROM deliveries").split(separator: "\n").map(String.init)
        #expect(ids.count == total)
        let missing = ids.filter { seen[$0] == nil }.count
        #expect(missing == 0, "\(missing) accepted deliveries the mock never saw")
        let duplicates = seen.values.reduce(0) { $0 + $1 - 1 }
        let reclaimed = Int(try await postgres.query("SELECT count(*) FROM deliveries WHERE reclaimed_from = '\(victim.worker)'")) ?? -1
        // A live process's claim taken over (its lease ran out before it could extend it: a
        // machine too busy) is the other way to send twice; counted, and expected to be rare.
        let takenFromLive = Int(try await postgres.query("SELECT count(*) FROM deliveries WHERE reclaimed_from IS NOT NULL AND reclaimed_from <> '\(victim.worker)'")) ?? -1
        // Besides the killed process's sends, only a send with no answer (a deadline, a
        // connection lost after the request went out) is sent again: APNs may have it.
        var unanswered = victimUnanswered
        for gateway in gateways where gateway.worker != victim.worker { unanswered += try await gateway.unansweredSends() }
        #expect(duplicates <= reclaimed + takenFromLive + unanswered && reclaimed <= inFlight && takenFromLive <= total / 100,
                "duplicates \(duplicates), taken over from the killed process \(reclaimed) (its bound \(inFlight)), from live ones \(takenFromLive), unanswered sends \(unanswered)\n\(logs.joined(separator: "\n----\n"))")
        print("scale-out, \(processes) processes: \(total) accepted; the killed process held \(heldAtKill); \(reclaimed) taken over (\(takenFromLive) from live processes); \(unanswered) unanswered sends retried; \(duplicates) sent twice")

        for gateway in gateways where gateway.worker != victim.worker {
            let (status, _) = try await gateway.program.stop()
            #expect(status == 0, "a graceful stop")
        }
        #expect(Int(try await postgres.query("SELECT count(*) FROM deliveries WHERE state = 'claimed'")) == 0)
    }
}
