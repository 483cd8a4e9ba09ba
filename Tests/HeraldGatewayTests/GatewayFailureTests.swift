import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HeraldAuth
@testable import HeraldGateway
import HeraldJSON
@testable import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import NIOCore
import NIOPosix
import Testing

/// `herald serve` where the world misbehaves, driven from outside as an operator would see it:
/// PostgreSQL stopped and started under two processes, SIGTERM under a low rate limit with a
/// second process waiting, APNs refusing connections and coming back, a port already taken.
/// Each checks that nothing is lost, what is sent twice, and the timing a user would notice.
@Suite(.serialized, .exclusive) struct GatewayFailureTests {
    static let adminKey = "failure-tests-admin-key-0123456789"
    static let environment = ["HERALD_FAILURE_ADMIN": adminKey]

    /// A mock APNs in this process (plaintext), answering after `delay` when given.
    static func mock(port: Int = 0, delay: String? = nil, key: ProviderSigningKey) async throws -> MockAPNsServer {
        var configuration = MockConfiguration()
        configuration.port = port
        configuration.apiPort = nil
        configuration.channelPort = nil
        configuration.transport = .plaintext
        configuration.keys = [key.publicKey]
        configuration.storeCapacity = 100_000
        configuration.ownEventLoopThreads = 1
        if let delay { configuration.faults = [try FaultRule(parsing: "delay=\(delay)")] }
        let mock = try MockAPNsServer(configuration: configuration)
        try await mock.start()
        return mock
    }

    static func app(port: Int, key: ProviderSigningKey, extra: String = "") -> String {
        let pem = key.pkcs8PEM.replacingOccurrences(of: "\n", with: "\\n")
        return #"{"bundleId":"com.example.app","environment":"sandbox","server":{"host":"127.0.0.1","port":\#(port),"plaintext":true},"token":{"key":"\#(pem)","keyId":"\#(GatewayHarness.keyID)","teamId":"\#(GatewayHarness.teamID)"}\#(extra)}"#
    }

    static func tokens(_ count: Int, batch: Int) -> [String] {
        (0..<count).map { "fa" + String(repeating: "11", count: 25) + String(format: "%04x%08x", batch, $0) }
    }

    static func submit(_ gateway: ServeProcess, tokens: [String]) async throws -> String {
        let body = #"{"payload":{"aps":{"alert":"Failure behaviour"}},"tokens":[\#(tokens.map { "\"\($0)\"" }.joined(separator: ","))]}"#
        let answer = try await gateway.call("POST", "/v1/apps/com.example.app/notifications", body, key: adminKey)
        #expect(answer.status == 202, "\(String(describing: answer.json?.root.value))")
        return try #require(answer.json?.root["id"]?.stringValue)
    }

    /// Each job's counts summed: accepted, still waiting (queued or claimed), and every other state.
    static func counts(_ gateway: ServeProcess, jobs: [String]) async throws -> (accepted: Int, waiting: Int, other: [String: Int]) {
        var accepted = 0, waiting = 0
        var other: [String: Int] = [:]
        for job in jobs {
            let summary = try await gateway.call("GET", "/v1/apps/com.example.app/notifications/\(job)", key: adminKey, timeout: 30)
            guard let counts = summary.json?.root["counts"] else { continue }
            for member in counts.members {
                let value = Int(member.value.int64Value ?? 0)
                switch member.key {
                case "accepted": accepted += value
                case "queued", "claimed": waiting += value
                default: if value > 0 { other[member.key, default: 0] += value }
                }
            }
        }
        return (accepted, waiting, other)
    }

    /// How many times the mock accepted each apns-id beyond the first.
    static func duplicates(_ mock: MockAPNsServer) async throws -> Int {
        var query = NotificationQuery()
        query.limit = 1_000_000
        query.accepted = true
        var seen: [String: Int] = [:]
        for record in try await mock.notifications(query) { seen[record.apnsID ?? "", default: 0] += 1 }
        return seen.values.reduce(0) { $0 + $1 - 1 }
    }

    static func waitUntil(_ timeout: Duration, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(200))
        }
        return try await condition()
    }

    static func count(_ text: String, in output: String) -> Int { output.components(separatedBy: text).count - 1 }

    // MARK: PostgreSQL stops and starts

    /// Two processes send 6,000 notifications (each answer delayed 300 ms, so hundreds are in
    /// flight) on a PostgreSQL that is stopped at once (SIGQUIT) mid-run and started again 16
    /// seconds later, longer than the 12-second claim lease. Half the jobs are submitted just
    /// before the stop, so their first reads of the job fail. Nothing is lost or rejected as
    /// deleted; nothing is sent twice but what got no answer in time (retried with its
    /// apns-id: APNs may have it); the API answers 503 quickly during the outage, and each
    /// process says once that the database is unreachable and once that it is back.
    @Test func aPostgresOutageLosesNothingAndSendsNothingTwice() async throws {
        let postgres = try await PrivatePostgres()
        let key = ProviderSigningKey.generate(keyID: GatewayHarness.keyID, teamID: GatewayHarness.teamID)
        let mock = try await Self.mock(delay: "300ms", key: key)
        defer { Task { await mock.stop() } }
        var gateways: [ServeProcess] = []
        for _ in 0..<2 {
            gateways.append(try await ServeProcess.start(
                ["--postgres", postgres.url, "--admin-key-env", "HERALD_FAILURE_ADMIN", "--claim-lease", "12", "--request-timeout", "8",
                 "--in-flight", "1000", "--log", "notice"],
                environment: Self.environment, niceness: 5))
        }
        defer { for gateway in gateways { gateway.program.process.terminate() } }
        #expect(try await gateways[0].call("POST", "/v1/apps", Self.app(port: mock.port, key: key, extra: #","concurrency":400"#), key: Self.adminKey).status == 201)

        var jobs: [String] = []
        for batch in 0..<3 { jobs.append(try await Self.submit(gateways[batch % 2], tokens: Self.tokens(1_000, batch: batch))) }
        _ = try await Self.waitUntil(.seconds(60)) { try await Self.counts(gateways[0], jobs: jobs).accepted >= 300 }
        for batch in 3..<6 { jobs.append(try await Self.submit(gateways[batch % 2], tokens: Self.tokens(1_000, batch: batch))) }

        await postgres.stop()
        let stopped = ContinuousClock.now
        try await Task.sleep(for: .seconds(3))
        // During the outage: API calls and probes answer 503 within seconds, saying why. The
        // submission comes first: a call waiting on the pool's lost connections makes the
        // gateway check the server with a connection of its own (refused at once), not wait
        // for the call's 10-second deadline.
        for gateway in gateways {
            let submit = try await gateway.call(
                "POST", "/v1/apps/com.example.app/notifications", #"{"payload":{"aps":{"alert":"x"}},"tokens":["\#(Self.tokens(1, batch: 99)[0])"]}"#,
                key: Self.adminKey, timeout: 60)
            #expect(submit.status == 503 && submit.headers["retry-after"] != nil && submit.elapsed < .seconds(6),
                    "a submission during the outage: \(submit.status) in \(submit.elapsed), \(String(describing: submit.json?.root.value))")
            let ready = try await gateway.call("GET", "/readyz", key: nil, timeout: 30)
            #expect(ready.status == 503 && ready.elapsed < .seconds(5), "readyz \(ready.status) in \(ready.elapsed)")
        }
        try await Task.sleep(until: stopped + .seconds(16))
        try await postgres.start()
        let restarted = ContinuousClock.now

        let ready = try await Self.waitUntil(.seconds(30)) {
            try await gateways[0].call("GET", "/readyz", key: nil, timeout: 10).status == 200
        }
        #expect(ready, "ready again once the database is back")
        let readyAfter = ContinuousClock.now - restarted
        var state = try await Self.counts(gateways[0], jobs: jobs)
        _ = try await Self.waitUntil(.seconds(120)) {
            state = try await Self.counts(gateways[0], jobs: jobs)
            return state.waiting == 0
        }
        let doneAfter = ContinuousClock.now - restarted
        #expect(state.accepted == 6_000 && state.other.isEmpty, "every notification accepted: \(state)")
        let duplicates = try await Self.duplicates(mock)
        var unanswered = 0
        for gateway in gateways { unanswered += try await gateway.unansweredSends() }
        let reclaimed = (try? await postgres.query("SELECT count(*) FROM deliveries WHERE reclaimed_from IS NOT NULL")) ?? "?"
        let clientRetries = try await gateways[0].metric("herald_gateway_apns_retries_total") ?? -1
        let logs = gateways.map { $0.program.output.split(separator: "\n").filter { !$0.contains("admin key") }.suffix(30).joined(separator: "\n") }
        #expect(duplicates <= unanswered, "no process died: only what got no answer in time is sent again (\(duplicates) twice, \(unanswered) unanswered, \(reclaimed) taken over, \(clientRetries) client retries)\n\(logs.joined(separator: "\n----\n"))")
        let stuck = try await Self.waitUntil(.seconds(10)) { (try? await postgres.query("SELECT count(*) FROM deliveries WHERE state = 'claimed'")) == "0" }
        #expect(stuck, "nothing left claimed")

        for gateway in gateways {
            let (status, _) = try await gateway.program.stop(timeout: .seconds(40))
            #expect(status == 0, "a graceful stop after the outage")
            let output = gateway.program.output
            #expect(Self.count("the database is unreachable", in: output) == 1, "said once: \(output.suffix(2_000))")
            #expect(Self.count("the database answers again", in: output) == 1, "said once: \(output.suffix(2_000))")
            #expect(!output.contains("Generic description"), "the cause, not PostgresNIO's placeholder")
        }
        print("PostgreSQL outage of 16 s under 2 processes: 6000 accepted, \(duplicates) sent twice (\(unanswered) got no answer in time); ready \(readyAfter.secondsText) and done \(doneAfter.secondsText) after the restart")
    }

    // MARK: SIGTERM under a low rate limit

    /// One process holds 300 deliveries of an app limited to 20 a second; a second process is
    /// started and the first gets SIGTERM. The first stops within its grace period (3 s), gives
    /// back what it had not sent, and the second sends it at once (not after the 60-second
    /// lease): nothing is sent twice.
    @Test func sigtermUnderALowRateLimitStopsInTimeAndHandsOver() async throws {
        let database = try await PostgresTestDatabase()
        let key = ProviderSigningKey.generate(keyID: GatewayHarness.keyID, teamID: GatewayHarness.teamID)
        let mock = try await Self.mock(key: key)
        defer { Task { await mock.stop() } }
        let arguments = ["--postgres", database.url, "--admin-key-env", "HERALD_FAILURE_ADMIN", "--grace", "3"]
        let first = try await ServeProcess.start(arguments, environment: Self.environment)
        defer { first.program.process.terminate() }
        #expect(try await first.call("POST", "/v1/apps", Self.app(port: mock.port, key: key, extra: #","rateLimit":20"#), key: Self.adminKey).status == 201)
        let job = try await Self.submit(first, tokens: Self.tokens(300, batch: 7))
        _ = try await Self.waitUntil(.seconds(60)) { try await Self.counts(first, jobs: [job]).accepted >= 40 }
        let second = try await ServeProcess.start(arguments, environment: Self.environment)
        defer { second.program.process.terminate() }

        let signalled = ContinuousClock.now
        let (status, _) = try await first.program.stop(timeout: .seconds(30))
        let stoppedIn = ContinuousClock.now - signalled
        #expect(status == 0 && stoppedIn < .seconds(8), "stopped \(String(describing: status)) in \(stoppedIn.secondsText) for a 3-second grace")
        var state = try await Self.counts(second, jobs: [job])
        let done = try await Self.waitUntil(.seconds(50)) {
            state = try await Self.counts(second, jobs: [job])
            return state.waiting == 0
        }
        let handedOverIn = ContinuousClock.now - signalled
        #expect(done && state.accepted == 300 && state.other.isEmpty, "\(state)")
        // What was left goes at 20 a second at once; waiting for the lease would take 60 s more.
        #expect(handedOverIn < .seconds(40), "the rest sent \(handedOverIn.secondsText) after SIGTERM")
        let duplicates = try await Self.duplicates(mock)
        #expect(duplicates == 0)
        print("SIGTERM under rateLimit 20: stopped in \(stoppedIn.secondsText) (grace 3 s); all 300 done \(handedOverIn.secondsText) after; \(duplicates) sent twice")
    }

    // MARK: APNs refuses connections, then comes back

    /// 200 deliveries for an endpoint where nothing listens: a handful of connection attempts
    /// (not one per delivery per backoff), one log line; once the mock listens there, every
    /// delivery goes out within the breaker's 30-second cap; then the gateway idles.
    @Test func apnsRefusingIsProbedNotStormedAndItsReturnIsNoticed() async throws {
        let directory = try TemporaryDirectory()
        let key = ProviderSigningKey.generate(keyID: GatewayHarness.keyID, teamID: GatewayHarness.teamID)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        let gateway = try await ServeProcess.start(
            ["--db", directory.path("gateway.db"), "--admin-key-env", "HERALD_FAILURE_ADMIN", "--log", "notice"], environment: Self.environment)
        defer { gateway.program.process.terminate() }
        #expect(try await gateway.call("POST", "/v1/apps", Self.app(port: port, key: key), key: Self.adminKey).status == 201)
        let job = try await Self.submit(gateway, tokens: Self.tokens(200, batch: 8))
        try await Task.sleep(for: .seconds(12))
        let attempts = try await gateway.metric("herald_gateway_apns_connection_attempts_total") ?? -1
        #expect(attempts >= 2 && attempts <= 15, "\(attempts) connection attempts in 12 s")
        #expect(Self.count("APNs endpoint unreachable", in: gateway.program.output) == 1, "\(gateway.program.output.suffix(2_000))")

        let mock = try await Self.mock(port: port, key: key)
        defer { Task { await mock.stop() } }
        let back = ContinuousClock.now
        var state = try await Self.counts(gateway, jobs: [job])
        let done = try await Self.waitUntil(.seconds(60)) {
            state = try await Self.counts(gateway, jobs: [job])
            return state.waiting == 0
        }
        let resumedIn = ContinuousClock.now - back
        #expect(done && state.accepted == 200, "\(state)")
        #expect(resumedIn < .seconds(45), "all sent \(resumedIn.secondsText) after APNs came back (the breaker's cap is 30 s)")
        // The line is logged before the connection carries a push, but reaches us through a pipe.
        _ = try await Self.waitUntil(.seconds(5)) { Self.count("APNs endpoint reachable again", in: gateway.program.output) > 0 }
        #expect(Self.count("APNs endpoint reachable again", in: gateway.program.output) == 1)

        // Idle after the outage: nothing left running (a refused connection used to leave a
        // 20-ms timer behind, and a gateway idled at 75% of a core).
        try await Task.sleep(for: .seconds(2))
        let before = gateway.cpuSeconds
        try await Task.sleep(for: .seconds(5))
        let idle = (gateway.cpuSeconds - before) / 5
        #expect(idle < 0.1, "idle at \(Int(idle * 100))% of a core")
        let finalAttempts = try await gateway.metric("herald_gateway_apns_connection_attempts_total") ?? -1
        print("APNs refused for 12 s: \(Int(attempts)) connection attempts (\(Int(finalAttempts)) in all), 200 delivered \(resumedIn.secondsText) after its return, idle at \(Int(idle * 1000) / 10)% of a core")
        let (status, _) = try await gateway.program.stop()
        #expect(status == 0)
    }

    // MARK: Start-up

    /// A port already taken: exit 2 naming the port, no crash, and nothing created (the next
    /// start makes the first administrator key and shows it).
    @Test func aPortInUseFailsBeforeAnythingIsCreated() async throws {
        let directory = try TemporaryDirectory()
        let holder = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        defer { holder.close(promise: nil) }
        let port = holder.localAddress?.port ?? 0
        let database = directory.path("gateway.db")
        let result = try await ExternalTools.executeInBackground(
            Fixtures.heraldBinary, ["serve", "--db", database, "--port", String(port)], timeout: .seconds(60))
        #expect(result.status == 2, "exit 2, not a crash: \(result.status) \(result.stderr)")
        #expect(result.stderr.contains("127.0.0.1:\(port)") && result.stderr.contains("in use") && result.stderr.contains("--port"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: database), "nothing created before the port was bound")

        let started = try await ServeProcess.start(["--db", database])
        #expect(started.printedKey != nil, "the first start that works makes the key, and shows it")
        let (status, _) = try await started.program.stop()
        #expect(status == 0)

        // herald mock: each of its three ports, named with its flag.
        for flag in ["--port", "--api-port", "--channel-port"] {
            var arguments = ["mock", "--plaintext", "--port", "0", "--api-port", "0", "--channel-port", "0"]
            arguments[arguments.firstIndex(of: flag)! + 1] = String(port)
            let mock = try await HeraldProcess.runInBackground(arguments, timeout: .seconds(60))
            #expect(mock.status == 2 && mock.stderr.contains("\(flag) \(port)") && mock.stderr.contains("in use"), "\(flag): \(mock.stderr)")
        }
    }

    /// The first key was lost: `--new-admin-key` makes another, shown once; the old one still works.
    @Test func aLostAdminKeyIsReplacedOnRequest() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("gateway.db")
        let first = try await ServeProcess.start(["--db", database])
        let lost = try #require(first.printedKey)
        _ = try await first.program.stop()
        let second = try await ServeProcess.start(["--db", database])
        #expect(second.printedKey == nil, "a key is shown once")
        _ = try await second.program.stop()
        let third = try await ServeProcess.start(["--db", database, "--new-admin-key", "--log", "notice"])
        let new = try #require(third.printedKey)
        #expect(new != lost)
        #expect(try await third.call("GET", "/v1/keys", key: new).status == 200)
        #expect(try await third.call("GET", "/v1/keys", key: lost).status == 200, "the others stay")
        let (status, rest) = try await third.program.stop()
        #expect(status == 0)
        #expect((third.program.output + rest).contains("a new administrator key was made"))
    }
}
