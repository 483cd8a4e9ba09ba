import Foundation
@testable import HeraldGateway
import HeraldJSON
import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Testing

/// The gateway's API against the mock as APNs: submissions, outcomes, idempotency, the door,
/// dead tokens, retries, audiences, keys, apps.
@Suite(.serialized) struct GatewayAPITests {
    @Test(arguments: GatewayHarness.Backend.available)
    func everyTokenGetsAnOutcomeThatAgreesWithAPNs(_ backend: GatewayHarness.Backend) async throws {
        let harness = try await GatewayHarness.start(backend)
        defer { Task { await harness.stop() } }
        try await harness.registerApp()
        let tokens = GatewayHarness.tokens(300, salt: 1)
        harness.mock.unregister(tokens[10], at: Date(timeIntervalSince1970: 1_790_000_000.25))
        _ = harness.mock.addFault(try FaultRule(parsing: "status=400/BadDeviceToken,token=\(tokens[20].hex)"))
        let job = try await harness.submit(tokens: tokens)
        let summary = try await harness.waitUntilDone(job)
        #expect(summary.root["counts"]?["accepted"]?.int64Value == 298 && summary.root["counts"]?["rejected"]?.int64Value == 2)
        let deliveries = try await harness.deliveries(job)
        #expect(deliveries.count == 300)
        #expect(deliveries.compactMap { $0["token"]?.stringValue } == tokens.map(\.hex), "one outcome per token, in order")
        let gone = try #require(deliveries.first { $0["token"]?.stringValue == tokens[10].hex })
        #expect(gone["state"]?.stringValue == "rejected" && gone["reason"]?.stringValue == "Unregistered" && gone["status"]?.int64Value == 410)
        #expect(gone["unregisteredAt"]?.stringValue == "2026-09-21T14:13:20.250Z", "the 410's timestamp, to the millisecond (1790000000250)")
        #expect(deliveries.first { $0["token"]?.stringValue == tokens[20].hex }?["reason"]?.stringValue == "BadDeviceToken")

        // The mock's records agree: each accepted delivery's apns-id was accepted there, once.
        var query = NotificationQuery()
        query.limit = 1_000_000
        var acceptedByMock: [String: Int] = [:]
        for record in try await harness.mock.notifications(query) where record.isAccepted { acceptedByMock[record.apnsID ?? "", default: 0] += 1 }
        for delivery in deliveries where delivery["state"]?.stringValue == "accepted" {
            #expect(acceptedByMock[delivery["apnsId"]?.stringValue ?? ""] == 1)
        }
        #expect(acceptedByMock.count == 298)

        // Both tokens are dead now: a new notification skips them and sends the rest.
        let dead = try await harness.call("GET", "/v1/apps/\(GatewayHarness.bundleID)/devices?state=dead").1
        #expect(Set(dead?.root["devices"]?.elements.compactMap { $0["token"]?.stringValue } ?? []) == [tokens[10].hex, tokens[20].hex])
        let second = try await harness.submit(tokens: tokens)
        let again = try await harness.waitUntilDone(second)
        #expect(again.root["counts"]?["skipped"]?.int64Value == 2 && again.root["counts"]?["accepted"]?.int64Value == 298)
        #expect(try await harness.mock.notifications(query).count == 300 + 298, "skipped tokens were not sent")
    }

    /// Sends that wait longer than the lease (here for the app's rate limit: 60 tokens at 20 a
    /// second, under a 1.5-second lease) stay with the live process that holds them: its leases
    /// are extended, nothing is taken over, and the mock sees each apns-id once.
    /// A live process keeps its claims however long its sends wait for the app's rate: 80
    /// sends at 20 a second take four seconds, past the 2.5-second lease, and none is claimed
    /// twice or sent twice. (It failed now and then on a loaded machine: an extension that came
    /// late let the same process claim its own rows again and send them a second time. A
    /// process now never takes over its own claims, and sends only while its lease outlasts
    /// the send.)
    @Test(.exclusive) func aLiveProcessKeepsItsClaimsPastTheLease() async throws {
        let harness = try await GatewayHarness.start(gateway: {
            $0.claimLease = .milliseconds(2_500)
            $0.requestTimeout = .seconds(1)
        })
        defer { Task { await harness.stop() } }
        try await harness.registerApp(extra: #","rateLimit":20"#)
        let tokens = GatewayHarness.tokens(80, salt: 11)
        let started = ContinuousClock.now
        let summary = try await harness.waitUntilDone(try await harness.submit(tokens: tokens))
        #expect(ContinuousClock.now - started > .milliseconds(2_500), "the rate limit held the sends past the lease")
        #expect(summary.root["counts"]?["accepted"]?.int64Value == 80)
        var query = NotificationQuery()
        query.limit = 1_000
        let ids = try await harness.mock.notifications(query).compactMap(\.apnsID)
        #expect(ids.count == 80 && Set(ids).count == 80, "\(ids.count) sent for 80 tokens")
        let attempts = try await harness.deliveries(summary.root["id"]?.stringValue ?? "").compactMap { $0["attempts"]?.int64Value }
        #expect(attempts == Array(repeating: 1, count: 80), "no delivery was claimed twice")
    }

    @Test func resubmittingWithTheSameIdempotencyKeyIsANoOp() async throws {
        let harness = try await GatewayHarness.start()
        defer { Task { await harness.stop() } }
        try await harness.registerApp()
        let tokens = GatewayHarness.tokens(20, salt: 2)
        let body = #"{"payload":{"aps":{"alert":"Once"}},"tokens":[\#(tokens.map { "\"\($0.hex)\"" }.joined(separator: ","))]}"#
        let path = "/v1/apps/\(GatewayHarness.bundleID)/notifications"
        let (first, firstBody, _) = try await harness.raw("POST", path, body, headers: ["Idempotency-Key": "order-1"])
        #expect(first == 202)
        let id = try #require(try JSONDocument(parsing: firstBody).root["id"]?.stringValue)
        _ = try await harness.waitUntilDone(id)
        // Retried (the same body, spaced differently): the same notification, nothing sent again.
        let (replay, replayBody, response) = try await harness.raw("POST", path, body.replacingOccurrences(of: ",", with: ", "), headers: ["Idempotency-Key": "order-1"])
        let replayed = try JSONDocument(parsing: replayBody)
        #expect(replay == 200 && replayed.root["id"]?.stringValue == id)
        #expect(response?.value(forHTTPHeaderField: "Idempotent-Replayed") == "true")
        #expect(try await harness.mock.notifications().count == 20)
        let (conflict, conflictBody) = try await harness.call("POST", path, body.replacingOccurrences(of: "Once", with: "Twice"), headers: ["Idempotency-Key": "order-1"])
        #expect(conflict == 409 && conflictBody?.root["error"]?["message"]?.stringValue?.contains(id) == true)
        #expect(try await harness.call("POST", path, body, headers: ["Idempotency-Key": ""]).0 == 400)
        // At the same moment from several callers: one notification.
        let ids = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<8 {
                group.addTask { try await harness.call("POST", path, body, headers: ["Idempotency-Key": "order-2"]).1?.root["id"]?.stringValue }
            }
            var ids = Set<String>()
            for try await id in group { if let id { ids.insert(id) } }
            return ids
        }
        #expect(ids.count == 1)
        _ = try await harness.waitUntilDone(try #require(ids.first))
        #expect(try await harness.mock.notifications().count == 40)
    }

    /// A body larger than any request can be (the tokens allowed, 80 bytes each, and a
    /// megabyte) is refused as it arrives, not held: 128 MB were read before.
    @Test func bodiesAreBoundedByTheTokensAllowed() async throws {
        let harness = try await GatewayHarness.start(gateway: { $0.maximumTokensPerRequest = 10 })
        defer { Task { await harness.stop() } }
        try await harness.registerApp()
        let path = "/v1/apps/\(GatewayHarness.bundleID)/notifications"
        let token = GatewayHarness.tokens(1, salt: 4)[0].hex
        let padding = String(repeating: " ", count: 1_100_000)
        let (status, answer) = try await harness.call("POST", path, #"{"payload":{"aps":{"alert":"x"}},\#(padding)"tokens":["\#(token)"]}"#)
        #expect(status == 413)
        #expect(answer?.root["error"]?["message"]?.stringValue?.contains("over 1049376 bytes") == true, "\(String(describing: answer?.root.value))")
        #expect(answer?.root["error"]?["message"]?.stringValue?.contains("10 tokens") == true)
        let (fits, _) = try await harness.call("POST", path, #"{"payload":{"aps":{"alert":"x"}},\#(padding.prefix(900_000))"tokens":["\#(token)"]}"#)
        #expect(fits == 202)
    }

    @Test func whatAPNsWouldRejectIsRefusedAtTheDoor() async throws {
        let harness = try await GatewayHarness.start()
        defer { Task { await harness.stop() } }
        try await harness.registerApp()
        let token = GatewayHarness.tokens(1, salt: 3)[0].hex
        let path = "/v1/apps/\(GatewayHarness.bundleID)/notifications"
        let big = String(repeating: "x", count: 5_000)
        let (tooLarge, refusal) = try await harness.call("POST", path, #"{"payload":{"aps":{"alert":"\#(big)"}},"tokens":["\#(token)"]}"#)
        #expect(tooLarge == 422 && refusal?.root["error"]?["reason"]?.stringValue == "PayloadTooLarge")
        #expect(refusal?.root["error"]?["findings"]?.elements.contains { $0["rule"]?.stringValue == "payload-too-large" } == true)
        // Over the limit the size alone answers: 60 KB of what the rules flag gives one finding.
        let nulls = Array(repeating: "null", count: 12_000).joined(separator: ",")
        let (flooded, floodRefusal) = try await harness.call("POST", path, #"{"payload":{"aps":{"alert":"hi","sound":1},"x":[\#(nulls)]},"tokens":["\#(token)"]}"#)
        #expect(flooded == 422 && floodRefusal?.root["error"]?["reason"]?.stringValue == "PayloadTooLarge")
        #expect(floodRefusal?.root["error"]?["findings"]?.elements.map { $0["rule"]?.stringValue } == ["payload-too-large"])
        let (wrongTopic, topicRefusal) = try await harness.call("POST", path, #"{"payload":{"aps":{}},"pushType":"voip","topic":"com.example.app","tokens":["\#(token)"]}"#)
        #expect(wrongTopic == 422 && topicRefusal?.root["error"]?["reason"]?.stringValue == "DeviceTokenNotForTopic", "\(String(describing: topicRefusal?.root.value))")
        // Lint errors APNs accepts and the device ignores or misreads are refused too, as
        // `herald send` refuses them: each with its rule and where.
        let errors: [(body: String, rule: String, pointer: String?)] = [
            (#"{"payload":{"aps":{"alert":"x","badge":"one"}},"tokens":["\#(token)"]}"#, "key-type", "/payload/aps/badge"),
            (#"{"payload":{"hello":1},"tokens":["\#(token)"]}"#, "aps-missing", "/payload"),
            (#"{"payload":{"aps":{"content-available":1}},"pushType":"background","priority":10,"tokens":["\#(token)"]}"#, "background-priority", nil),
        ]
        for (body, rule, pointer) in errors {
            let (status, answer) = try await harness.call("POST", path, body)
            let error = answer?.root["error"]
            #expect(status == 422, "\(body): \(status) \(String(describing: answer?.root.value))")
            #expect(error?["message"]?.stringValue?.contains(rule) == true && error?["pointer"]?.stringValue == pointer, "\(String(describing: answer?.root.value))")
            #expect(error?["findings"]?.elements.contains { $0["rule"]?.stringValue == rule && $0["severity"]?.stringValue == "error" } == true)
        }
        // Already expired: nobody wants it any more (0 still means "try once, now").
        let past = Int(Date().timeIntervalSince1970) - 60
        let (expired, expiredAnswer) = try await harness.call("POST", path, #"{"payload":{"aps":{"alert":"Hi"}},"expiration":\#(past),"tokens":["\#(token)"]}"#)
        #expect(expired == 422 && expiredAnswer?.root["error"]?["pointer"]?.stringValue == "/expiration", "\(String(describing: expiredAnswer?.root.value))")
        // A warning is sent, with the finding in the answer.
        let (warned, finding) = try await harness.call("POST", path, #"{"payload":{"aps":{"alert":"Hi","gameID":"7"}},"expiration":0,"tokens":["\#(token)"]}"#)
        #expect(warned == 202, "\(String(describing: finding?.root.value))")
        #expect(finding?.root["findings"]?.elements.contains { $0["pointer"]?.stringValue == "/payload/aps/gameID" && $0["severity"]?.stringValue == "warning" } == true)
        let cases: [(String, String)] = [
            (#"{"payload":{"aps":{}},"pushType":"fax","tokens":["\#(token)"]}"#, "/pushType"),
            (#"{"payload":{"aps":{"alert":"Hi"}},"tokens":["\#(token)","nothex"]}"#, "/tokens/1"),
            (#"{"tokens":["\#(token)"]}"#, "/payload"),
            (#"{"payload":{"aps":{"alert":"Hi"}}}"#, "/tokens"),
            (#"{"payload":{"aps":{"alert":"Hi"}},"tokens":[]}"#, "/tokens"),
            (#"{"payload":{"aps":{"alert":"Hi"}},"tokens":["\#(token)"],"prio":5}"#, "/prio"),
            (#"{"payload":{"aps":{"alert":"Hi"}},"tokens":["\#(token)"],"priority":7}"#, "/priority"),
            (#"{"payload":{"aps":{"alert":"Hi"}},"tokens":["\#(token)"],"expiration":-1}"#, "/expiration"),
            (#"{"payload":{"aps":{"alert":"Hi"}},"tokens":["\#(token)"],"audience":"all"}"#, "/audience"),
        ]
        for (body, pointer) in cases {
            let (status, answer) = try await harness.call("POST", path, body)
            #expect(status == 400 && answer?.root["error"]?["pointer"]?.stringValue == pointer, "\(body): \(status) \(String(describing: answer?.root.value))")
        }
        let (malformed, parse) = try await harness.call("POST", path, "{\"payload\": {\n  \"aps\" {}}}")
        #expect(malformed == 400 && parse?.root["error"]?["message"]?.stringValue?.contains("line 2") == true)
        #expect(try await harness.call("POST", "/v1/apps/nope/notifications", #"{"payload":{"aps":{}},"tokens":["\#(token)"]}"#).0 == 404)
        _ = try await harness.waitUntilDone(try #require(finding?.root["id"]?.stringValue))
        #expect(try await harness.mock.notifications().count == 1, "nothing refused reached APNs")
    }

    @Test func keysAreScopedToTheirApps() async throws {
        let harness = try await GatewayHarness.start()
        defer { Task { await harness.stop() } }
        try await harness.registerApp(id: "first")
        try await harness.registerApp(id: "second")
        let (noKey, _, response) = try await harness.raw("GET", "/v1/apps", key: nil)
        #expect(noKey == 401 && response?.value(forHTTPHeaderField: "WWW-Authenticate") == "Bearer")
        #expect(try await harness.call("GET", "/v1/apps", key: "hgk_made_up").0 == 401)
        let (created, made) = try await harness.call("POST", "/v1/keys", #"{"name":"first's backend","apps":["first"]}"#)
        #expect(created == 201)
        let scoped = try #require(made?.root["key"]?.stringValue)
        let keyID = try #require(made?.root["id"]?.stringValue)
        #expect(scoped.hasPrefix("hgk_"))
        #expect(try await harness.call("GET", "/v1/apps/first", key: scoped).0 == 200)
        #expect(try await harness.call("GET", "/v1/apps/second", key: scoped).0 == 403)
        let token = GatewayHarness.tokens(1, salt: 4)[0].hex
        #expect(try await harness.call("POST", "/v1/apps/second/notifications", #"{"payload":{"aps":{"alert":"x"}},"tokens":["\#(token)"]}"#, key: scoped).0 == 403)
        #expect(try await harness.call("POST", "/v1/apps/first/notifications", #"{"payload":{"aps":{"alert":"x"}},"tokens":["\#(token)"]}"#, key: scoped).0 == 202)
        #expect(try await harness.call("POST", "/v1/keys", #"{"name":"more"}"#, key: scoped).0 == 403, "only administrators make keys")
        #expect(try await harness.call("GET", "/v1/apps", key: scoped).1?.root["apps"]?.elements.compactMap { $0["id"]?.stringValue } == ["first"])
        let listed = try await harness.call("GET", "/v1/keys").1
        #expect(!(listed.map { String(decoding: try! JSONWriterBytes($0.root.value), as: UTF8.self) } ?? "").contains(scoped), "keys are never shown again")
        #expect(try await harness.call("DELETE", "/v1/keys/\(keyID)").0 == 204)
        #expect(try await harness.call("GET", "/v1/apps/first", key: scoped).0 == 401, "a revoked key stops at once")

        // The last administrator's key cannot be revoked (nobody could administer the gateway);
        // once another exists, it can.
        let administrators = try await harness.call("GET", "/v1/keys").1?.root["keys"]?.elements.filter { $0["apps"]?.stringValue == "*" } ?? []
        let adminID = try #require(administrators.first?["id"]?.stringValue)
        #expect(administrators.count == 1)
        let (refused, why) = try await harness.call("DELETE", "/v1/keys/\(adminID)")
        #expect(refused == 409 && (why?.root["error"]?["message"]?.stringValue ?? "").contains("last administrator"))
        let second = try #require(try await harness.call("POST", "/v1/keys", #"{"name":"second admin"}"#).1?.root["key"]?.stringValue)
        #expect(try await harness.call("DELETE", "/v1/keys/\(adminID)", key: second).0 == 204)
        #expect(try await harness.call("GET", "/v1/keys", key: second).0 == 200)
    }

    @Test func appsAreCheckedAndTheirSecretsNeverShown() async throws {
        let harness = try await GatewayHarness.start()
        defer { Task { await harness.stop() } }
        let (missing, noCredentials) = try await harness.call("POST", "/v1/apps", #"{"bundleId":"com.example.app"}"#)
        #expect(missing == 400 && noCredentials?.root["error"]?["pointer"]?.stringValue == "/token")
        let (badKey, keyProblem) = try await harness.call("POST", "/v1/apps", #"{"bundleId":"x","token":{"key":"not a key","keyId":"ABC123DEFG","teamId":"DEF123GHIJ"}}"#)
        #expect(badKey == 422 && keyProblem?.root["error"]?["pointer"]?.stringValue == "/token", "well-formed, but the key is not a key")
        let (badP12, p12Problem) = try await harness.call("POST", "/v1/apps", #"{"bundleId":"x","certificate":{"p12":"AAAA","password":"x"}}"#)
        #expect(badP12 == 422 && p12Problem?.root["error"]?["pointer"]?.stringValue == "/certificate")
        #expect(try await harness.call("POST", "/v1/apps", #"{"bundleId":"x","environment":"staging","token":{}}"#).1?.root["error"]?["pointer"]?.stringValue == "/environment")
        #expect(try await harness.call("POST", "/v1/apps", harness.appDefinition(extra: #","webhook":{"url":"ftp://x","secret":"0123456789abcdef"}"#)).1?.root["error"]?["pointer"]?.stringValue == "/webhook/url")
        try await harness.registerApp(extra: #","webhook":{"url":"http://127.0.0.1:9/hook","secret":"0123456789abcdef-secret"}"#)
        #expect(try await harness.call("POST", "/v1/apps", harness.appDefinition()).0 == 409)
        // JSON Schema's integers include 2197.0 and 2.197e3: the same port.
        let written = harness.appDefinition(id: "whole").replacingOccurrences(of: "\"port\":\(harness.mock.port)", with: "\"port\":\(harness.mock.port).0")
        #expect(written.contains(".0}") || written.contains(".0,"))
        #expect(try await harness.call("POST", "/v1/apps", written).1?.root["server"]?["port"]?.int64Value == Int64(harness.mock.port))
        let (_, shown, _) = try await harness.raw("GET", "/v1/apps/\(GatewayHarness.bundleID)")
        let text = String(decoding: shown, as: UTF8.self)
        #expect(text.contains("(hidden)") && !text.contains("PRIVATE KEY") && !text.contains("0123456789abcdef-secret"))
        #expect(try await harness.call("DELETE", "/v1/apps/\(GatewayHarness.bundleID)").0 == 200)
        #expect(try await harness.call("GET", "/v1/apps/\(GatewayHarness.bundleID)").0 == 404)
    }

    @Test func retryableFailuresAreRetriedUntilSuccessOrExpiration() async throws {
        let harness = try await GatewayHarness.start()
        defer { Task { await harness.stop() } }
        try await harness.registerApp()
        let tokens = GatewayHarness.tokens(3, salt: 5)
        // Seven 503s: more than the client's three attempts, so the gateway queues it again.
        _ = harness.mock.addFault(try FaultRule(parsing: "status=503/ServiceUnavailable,token=\(tokens[0].hex),times=7"))
        _ = harness.mock.addFault(try FaultRule(parsing: "status=429/TooManyRequests,token=\(tokens[1].hex)"))
        _ = harness.mock.addFault(try FaultRule(parsing: "status=500/InternalServerError,token=\(tokens[2].hex)"))
        let expiration = Int64(Date().timeIntervalSince1970) + 3
        let job = try await harness.submit(tokens: [tokens[0]])
        let expiring = try await harness.submit(tokens: [tokens[1]], extra: #","expiration":\#(expiration)"#)
        let once = try await harness.submit(tokens: [tokens[2]], extra: #","expiration":0"#)
        // The schema's largest expiration (2^63-1 seconds) is "never", not an overflow.
        let never = try await harness.submit(tokens: [GatewayHarness.tokens(1, salt: 6)[0]], extra: #","expiration":9223372036854775807"#)
        let neverJob = try await harness.waitUntilDone(never)
        #expect(neverJob.root["retryUntil"]?.stringValue == "9999-12-31T23:59:59.999Z", "the latest time RFC 3339 writes: \(neverJob.root.value)")
        let first = try await harness.deliveries(try await harness.waitUntilDone(job).root["id"]!.stringValue!)
        #expect(first[0]["state"]?.stringValue == "accepted" && (first[0]["attempts"]?.int64Value ?? 0) >= 3, "\(first[0].value)")
        let second = try await harness.deliveries(try await harness.waitUntilDone(expiring, timeout: .seconds(30)).root["id"]!.stringValue!)
        // Expired with APNs' last answer as the reason: when the answer came after the expiration
        // ("TooManyRequests"), or when the retry's turn came after it (a loaded machine).
        let reason = second[0]["reason"]?.stringValue ?? ""
        #expect(second[0]["state"]?.stringValue == "expired", "\(second[0].value)")
        #expect(reason == "TooManyRequests" || reason == "expired before it could be sent again (last answer: TooManyRequests)", "\(reason)")
        let third = try await harness.deliveries(try await harness.waitUntilDone(once).root["id"]!.stringValue!)
        #expect(third[0]["state"]?.stringValue == "expired" && third[0]["attempts"]?.int64Value == 1, "expiration 0: one attempt")
        // Every attempt carried the delivery's one apns-id.
        let ids = Set(try await harness.mock.notifications().filter { $0.deviceToken == tokens[0].hex }.compactMap(\.apnsID))
        #expect(ids == [first[0]["apnsId"]!.stringValue!])
    }

    /// A delivery whose retry comes due only after its notification expired is not sent, and
    /// its reason keeps what its last attempt got.
    @Test func anExpiredRetryKeepsItsLastAnswer() async throws {
        let clock = TestClock(Date())
        let harness = try await GatewayHarness.start(gateway: { $0.now = { clock.now } })
        defer { Task { await harness.stop() } }
        try await harness.registerApp()
        let token = GatewayHarness.tokens(1, salt: 17)[0]
        // Three 503s: the client's three attempts all fail, so the gateway queues a retry.
        _ = harness.mock.addFault(try FaultRule(parsing: "status=503/ServiceUnavailable,token=\(token.hex),times=3"))
        let expiration = Int64(clock.now.timeIntervalSince1970) + 600
        let job = try await harness.submit(tokens: [token], extra: #","expiration":\#(expiration)"#)
        var queued: JSONDocument.Node?
        for _ in 0..<200 {
            queued = try await harness.deliveries(job).first
            if queued?["reason"]?.stringValue == "ServiceUnavailable" { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(queued?["state"]?.stringValue == "queued" && queued?["reason"]?.stringValue == "ServiceUnavailable", "\(String(describing: queued?.value))")
        // An hour later (the machine asleep, every process down): the retry is due, and late.
        clock.set(clock.now.addingTimeInterval(3_600))
        let done = try await harness.deliveries(try await harness.waitUntilDone(job).root["id"]!.stringValue!)
        #expect(done.first?["state"]?.stringValue == "expired")
        #expect(done.first?["reason"]?.stringValue == "expired before it could be sent again (last answer: ServiceUnavailable)", "\(String(describing: done.first?.value))")
        #expect(try await harness.mock.notifications().filter { $0.deviceToken == token.hex }.count == 3, "nothing sent after the expiration")
    }

    @Test func audiencesSendToTheRegisteredDevices() async throws {
        let harness = try await GatewayHarness.start()
        defer { Task { await harness.stop() } }
        try await harness.registerApp()
        let tokens = GatewayHarness.tokens(6, salt: 6)
        let devices = "/v1/apps/\(GatewayHarness.bundleID)/devices"
        let hex = { (list: ArraySlice<DeviceToken>) in list.map { "\"\($0.hex)\"" }.joined(separator: ",") }
        #expect(try await harness.call("POST", devices, #"{"tokens":[\#(hex(tokens[0..<2]))],"tags":["beta"]}"#).0 == 200)
        #expect(try await harness.call("POST", devices, #"{"tokens":[\#(hex(tokens[2..<6]))]}"#).0 == 200)
        #expect(try await harness.call("POST", devices, #"{"tokens":["zz"]}"#).1?.root["error"]?["pointer"]?.stringValue == "/tokens/0")
        let path = "/v1/apps/\(GatewayHarness.bundleID)/notifications"
        let beta = try #require(try await harness.call("POST", path, #"{"payload":{"aps":{"alert":"Beta"}},"audience":{"tag":"beta"}}"#).1?.root["id"]?.stringValue)
        #expect(try await harness.waitUntilDone(beta).root["tokens"]?.int64Value == 2)
        let everyone = try #require(try await harness.call("POST", path, #"{"payload":{"aps":{"alert":"All"}},"audience":"all"}"#).1?.root["id"]?.stringValue)
        #expect(try await harness.waitUntilDone(everyone).root["tokens"]?.int64Value == 6)
        #expect(try await harness.call("POST", path, #"{"payload":{"aps":{"alert":"x"}},"audience":{"tag":"nobody"}}"#).0 == 422)
        #expect(try await harness.call("DELETE", "\(devices)/\(tokens[0].hex)").0 == 204)
        let listed = try await harness.call("GET", "\(devices)?tag=beta").1
        #expect(listed?.root["devices"]?.elements.compactMap { $0["token"]?.stringValue } == [tokens[1].hex])
    }

    @Test func gracefulShutdownRecordsOrGivesBackWhatItHolds() async throws {
        let directory = try TemporaryDirectory()
        let harness = try await GatewayHarness.start(mock: { $0.faults = [try! FaultRule(parsing: "delay=200ms")] }) {
            $0.database = .sqlite(path: directory.path("gateway.db"))
            $0.maximumInFlight = 50
            $0.claimBatch = 25
        }
        try await harness.registerApp()
        let tokens = GatewayHarness.tokens(400, salt: 7)
        let job = try await harness.submit(tokens: tokens)
        try await Task.sleep(for: .milliseconds(600))
        await harness.gateway.stop()
        let path = directory.path("gateway.db")
        let sqlite = try await ExternalTools.onOwnThread { try ExternalTools.python(
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(c.execute(\"SELECT count(*) FROM deliveries WHERE state = 'claimed'\").fetchone()[0], c.execute(\"SELECT count(*) FROM deliveries WHERE state = 'accepted'\").fetchone()[0])",
            arguments: [path]) }
        let counts = String(decoding: sqlite, as: UTF8.self).split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(counts.first == 0, "nothing left claimed after a graceful stop: \(counts)")
        #expect((counts.last ?? 0) > 0 && (counts.last ?? 400) < 400, "it stopped part way: \(counts)")

        // Another gateway on the same file sends the rest: every token once.
        var configuration = harness.gateway.configuration
        configuration.port = 0
        let next = try await GatewayServer.open(configuration: configuration)
        try await next.start()
        let resumed = GatewayHarness(mock: harness.mock, gateway: next, key: harness.key, port: next.port ?? 0, keep: harness.keep)
        defer { Task { await resumed.stop() } }
        _ = try await resumed.waitUntilDone(job)
        var query = NotificationQuery()
        query.limit = 10_000
        let apnsIDs = try await harness.mock.notifications(query).compactMap(\.apnsID)
        #expect(apnsIDs.count == 400 && Set(apnsIDs).count == 400, "no token sent twice, none left out")
    }
}

/// A JSON value's compact bytes.
func JSONWriterBytes(_ value: JSONValue) throws -> [UInt8] {
    var writer = JSONWriter(output: JSONBytes())
    writer.value(value)
    return writer.output.bytes
}

/// Webhooks, received by a Python server that checks each signature with Python's hmac.
@Suite(.serialized) struct GatewayWebhookTests {
    @Test func outcomesArePostedSignedAndRetried() async throws {
        let python = try ExternalTools.require("python3", package: "python3")
        let secret = "whsec-0123456789-abcdef"
        let directory = try TemporaryDirectory()
        let log = directory.path("events.jsonl")
        let receiver = try RunningProgram(python, [Fixtures.url("gateway/webhook_receiver.py").path, secret, "1", log])
        defer { receiver.process.terminate() }
        let started = await receiver.read(until: "port ", timeout: .seconds(20))
        let port = try #require(started.firstMatch(of: /port (\d+)/).flatMap { Int($0.output.1) })

        let harness = try await GatewayHarness.start()
        defer { Task { await harness.stop() } }
        try await harness.registerApp(extra: #","webhook":{"url":"http://127.0.0.1:\#(port)/hooks/apns","secret":"\#(secret)","events":["token.dead","delivery.rejected","delivery.accepted","job.done"]}"#)
        let tokens = GatewayHarness.tokens(2, salt: 8)
        harness.mock.unregister(tokens[0], at: Date(timeIntervalSince1970: 1_790_000_123))
        let job = try await harness.submit(tokens: tokens, extra: #","metadata":{"order":"A-1234","campaign":7}"#)
        let summary = try await harness.waitUntilDone(job)
        #expect(summary.root["metadata"]?["order"]?.stringValue == "A-1234", "the job gives its metadata back")
        #expect(try await harness.call("GET", "/v1/apps/\(GatewayHarness.bundleID)/notifications/\(job)/deliveries").1?.root["metadata"]?["campaign"]?.int64Value == 7)

        // Four events; the first answer was a 500, so one of them came twice.
        var lines: [JSONDocument] = []
        for _ in 0..<200 {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            lines = text.split(separator: "\n").compactMap { try? JSONDocument(parsing: Array($0.utf8)) }
            if lines.filter({ $0.root["status"]?.int64Value == 204 }).count >= 4 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let delivered = lines.filter { $0.root["status"]?.int64Value == 204 }
        #expect(delivered.count == 4 && lines.count == 5, "\(lines.map(\.root.value))")
        #expect(lines.allSatisfy { $0.root["verified"]?.boolValue == true }, "every signature verifies with the secret")
        #expect(lines.allSatisfy { $0.root["tamperedVerifies"]?.boolValue == false }, "a changed body does not")
        #expect(lines.allSatisfy { $0.root["contentType"]?.stringValue == "application/json" })
        let events = delivered.map { $0.root["event"]! }
        let dead = try #require(events.first { $0["type"]?.stringValue == "token.dead" })
        #expect(dead["token"]?.stringValue == tokens[0].hex && dead["reason"]?.stringValue == "Unregistered")
        #expect(dead["unregisteredAt"]?.stringValue == "2026-09-21T14:15:23.000Z" && dead["job"]?.stringValue == job && dead["app"]?.stringValue == GatewayHarness.bundleID)
        #expect(events.contains { $0["type"]?.stringValue == "delivery.rejected" && $0["token"]?.stringValue == tokens[0].hex })
        #expect(events.contains { $0["type"]?.stringValue == "delivery.accepted" && $0["token"]?.stringValue == tokens[1].hex })
        #expect(events.allSatisfy { $0["metadata"]?["order"]?.stringValue == "A-1234" }, "every event carries the submission's metadata")
        let finished = try #require(events.first { $0["type"]?.stringValue == "job.done" })
        #expect(finished["job"]?.stringValue == job && finished["counts"]?["accepted"]?.int64Value == 1 && finished["counts"]?["rejected"]?.int64Value == 1,
                "\(finished.value)")
        let retried = try #require(lines.first { $0.root["status"]?.int64Value == 500 })
        #expect(delivered.contains { $0.root["event"]?["id"]?.stringValue == retried.root["event"]?["id"]?.stringValue }, "the retry is the same event")
    }
}

/// Probes, metrics and the OpenAPI document.
@Suite(.serialized) struct GatewayOperationsTests {
    @Test func probesMetricsAndEveryDocumentedRoute() async throws {
        let harness = try await GatewayHarness.start()
        defer { Task { await harness.stop() } }
        try await harness.registerApp()
        let health = try await harness.call("GET", "/healthz", key: nil).1?.root
        #expect(health?["status"]?.stringValue == "ok" && health?["version"]?.stringValue == HeraldVersion.description)
        #expect(try await harness.call("GET", "/readyz", key: nil).0 == 200)
        let tokens = GatewayHarness.tokens(5, salt: 9)
        harness.mock.unregister(tokens[0])
        _ = try await harness.waitUntilDone(try await harness.submit(tokens: tokens))
        let (_, metrics, _) = try await harness.raw("GET", "/metrics", key: nil)
        let text = String(decoding: metrics, as: UTF8.self)
        func value(_ prefix: String) -> Double? {
            text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.split(separator: " ").last ?? "") }
        }
        let app = GatewayHarness.bundleID
        #expect(value(#"herald_gateway_deliveries_total{app="\#(app)",state="accepted",reason=""}"#) == 4, "\(text)")
        #expect(value(#"herald_gateway_deliveries_total{app="\#(app)",state="rejected",reason="Unregistered"}"#) == 1)
        #expect(value(#"herald_gateway_submissions_total{app="\#(app)",result="accepted"}"#) == 1 && value(#"herald_gateway_sent_total{app="\#(app)"}"#) == 5)
        #expect(text.contains("herald_gateway_queue_waiting") && text.contains("herald_gateway_send_seconds"))
        #expect(value(#"herald_gateway_apns_accepted_total{app="\#(app)"}"#) == 4, "the client's own, labelled by app")
        // Every metric says what it counts, in what unit.
        let types = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
        let helped = Set(text.split(separator: "\n").filter { $0.hasPrefix("# HELP ") }.map { $0.split(separator: " ")[2] })
        #expect(!types.isEmpty && types.allSatisfy { helped.contains($0) }, "without # HELP: \(types.filter { !helped.contains($0) })")

        // Every route the OpenAPI document lists answers (with the administrator's key).
        let (_, openAPI, _) = try await harness.raw("GET", "/v1/openapi.json", key: nil)
        let document = try JSONDocument(parsing: openAPI)
        #expect(document.root["openapi"]?.stringValue == "3.1.0")
        var checked = 0
        let paths = try #require(document.root["paths"])
        for path in paths.members {
            for operation in path.value.members {
                let concrete = path.key.replacingOccurrences(of: "{app}", with: GatewayHarness.bundleID)
                    .replacingOccurrences(of: "{id}", with: "unknown").replacingOccurrences(of: "{token}", with: tokens[1].hex)
                let method = operation.key.uppercased()
                // A method the document does not give the path is a 405 naming the ones it does.
                let documented = Set(path.value.members.map { $0.key.uppercased() })
                if let other = ["PUT", "PATCH", "TRACE", "DELETE", "POST"].first(where: { !documented.contains($0) }) {
                    let (status, _, response) = try await harness.raw(other, concrete)
                    let allow = response?.value(forHTTPHeaderField: "Allow") ?? ""
                    #expect(status == 405, "\(other) \(concrete): \(status)")
                    #expect(Set(allow.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }) == documented, "\(other) \(concrete): \(allow)")
                }
                guard method == "GET" else { continue }
                let (status, _, _) = try await harness.raw(method, concrete)
                #expect(status != 405 && (status != 404 || concrete.contains("unknown")), "\(method) \(concrete): \(status)")
                checked += 1
            }
        }
        #expect(checked >= 9)
        #expect(try await harness.raw("GET", "/v1/undocumented").0 == 404)
        #expect(try await harness.raw("GET", "/v1/apps/\(GatewayHarness.bundleID)/devices/x/y").0 == 404)
    }
}
