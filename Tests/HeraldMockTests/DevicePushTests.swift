import Foundation
import HeraldAuth
import HeraldJSON
import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Testing

/// Every answer of a device push, as an independent HTTP/2 client (Python's `h2`, signing its
/// own provider tokens with `cryptography`) sees it.
@Suite(.serialized) struct DevicePushTests {
    typealias H = MockHarness

    @Test func acceptedPushesAnswerAsApple() async throws {
        let mock = try await H.start()
        defer { Task { await mock.stop() } }
        let run = try await mock.python([
            H.push(),
            H.push(headers: [("apns-topic", "com.example.app"), ("apns-push-type", "alert"), ("apns-id", "123E4567-E89B-12D3-A456-4266554400A0")]),
        ])
        let first = run.answers[0], second = run.answers[1]
        #expect(first.status == 200 && first.body.isEmpty && first.error == nil)
        // A generated apns-id is a lowercase canonical UUID; sandbox answers carry apns-unique-id.
        let generated = try #require(first.header("apns-id"))
        #expect(generated.range(of: "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", options: .regularExpression) != nil)
        #expect(first.header("apns-unique-id") != nil)
        #expect(first.header("content-type") == nil)
        // An uppercase apns-id is accepted (reported) and echoed in lowercase.
        #expect(second.status == 200 && second.header("apns-id") == "123e4567-e89b-12d3-a456-4266554400a0")
        // The push reached the simulated device, rendered.
        let device = try #require(mock.server.device(try DeviceToken(hex: H.token)))
        #expect(device.deliveries == 2 && device.topic == "com.example.app" && device.device.notificationCount == 2)
        let record = try #require(try await mock.server.notification(id: generated))
        #expect(record.status == 200 && record.rendered?.body == "Hello")
    }

    @Test func productionAnswersCarryNoUniqueID() async throws {
        let mock = try await H.start { $0.environment = .production }
        defer { Task { await mock.stop() } }
        let run = try await mock.python([H.push()])
        #expect(run.answers[0].status == 200 && run.answers[0].header("apns-unique-id") == nil)
    }

    /// One request per reason, each breaking exactly one rule; the expectations are Apple's
    /// table ("Handling notification responses from APNs").
    @Test func everyHeaderAndPayloadReason() async throws {
        let mock = try await H.start()
        defer { Task { await mock.stop() } }
        let alert = [("apns-topic", "com.example.app"), ("apns-push-type", "alert")]
        let cases: [(JSONValue, Int, String)] = [
            (H.push(method: "GET"), 405, "MethodNotAllowed"),
            (H.push(path: "/3/devices/\(H.token)"), 404, "BadPath"),
            (H.push(path: "/2/device/\(H.token)"), 404, "BadPath"),
            (H.push(headers: alert + [("apns-topic", "com.example.app")]), 400, "DuplicateHeaders"),
            (H.push(headers: [("apns-push-type", "alert")]), 400, "MissingTopic"),
            (H.push(token: "zz" + String(H.token.dropFirst(2))), 400, "BadDeviceToken"),
            (H.push(token: "abcd"), 400, "BadDeviceToken"),
            (H.push(path: "/3/device/"), 400, "MissingDeviceToken"),
            (H.push(headers: alert + [("apns-collapse-id", String(repeating: "c", count: 65))]), 400, "BadCollapseId"),
            (H.push(headers: alert + [("apns-priority", "7")]), 400, "BadPriority"),
            (H.push(headers: alert + [("apns-expiration", "tomorrow")]), 400, "BadExpirationDate"),
            (H.push(headers: alert + [("apns-id", "not-a-uuid")]), 400, "BadMessageId"),
            (H.push(headers: [("apns-topic", "com.example.app"), ("apns-push-type", "Alert")]), 400, "InvalidPushType"),
            (H.push(""), 400, "PayloadEmpty"),
            (H.push(headers: [("apns-topic", "com.example.app"), ("apns-push-type", "voip")]), 400, "DeviceTokenNotForTopic"),
            (H.push(headers: [("apns-topic", "com.example.app.voip"), ("apns-push-type", "alert")]), 400, "DeviceTokenNotForTopic"),
        ]
        let run = try await mock.python(cases.map(\.0))
        for (index, answer) in run.answers.enumerated() {
            #expect(answer.status == cases[index].1, "case \(index): \(answer.status ?? -1) \(answer.body)")
            #expect(answer.reason == cases[index].2, "case \(index): \(answer.body)")
            #expect(answer.header("content-type") == "application/json", "case \(index)")
            #expect(answer.header("apns-id") != nil, "case \(index)")
        }
        // Exactly 64 bytes of collapse id is allowed.
        let ok = try await mock.python([H.push(headers: alert + [("apns-collapse-id", String(repeating: "c", count: 64))])])
        #expect(ok.answers[0].status == 200)
    }

    @Test func sizeLimitsPerPushType() async throws {
        let mock = try await H.start()
        defer { Task { await mock.stop() } }
        func sized(_ total: Int, type: String, topic: String, token: String = H.token) -> JSONValue {
            var step = H.push(token: token, headers: [("apns-topic", topic), ("apns-push-type", type)]).objectValue!
            step.members.removeAll { $0.key == "body" }
            step.members.append(.init(key: "bodyRepeat", value: [#"{"aps":{"alert":""#, "x", .number(JSONNumber(total)), #""}}"#]))
            return .object(step)
        }
        let voip = H.otherToken
        let run = try await mock.python([
            sized(4096, type: "alert", topic: "com.example.app"),
            sized(4097, type: "alert", topic: "com.example.app"),
            sized(5120, type: "voip", topic: "com.example.app.voip", token: voip),
            sized(5121, type: "voip", topic: "com.example.app.voip", token: voip),
        ])
        #expect(run.answers.map(\.status) == [200, 413, 200, 413])
        #expect(run.answers[1].reason == "PayloadTooLarge" && run.answers[3].reason == "PayloadTooLarge")

        // Over the limit the size alone answers: a 60 KB body full of what the rules flag (a
        // sound that is a number, twelve thousand nulls) is 413 with one finding, the size.
        var noisy = H.push(headers: [("apns-topic", "com.example.app"), ("apns-push-type", "alert")]).objectValue!
        noisy.members.removeAll { $0.key == "body" }
        noisy.members.append(.init(key: "bodyRepeat", value: [#"{"aps":{"alert":"hi","sound":1},"x":["#, "null,", .number(JSONNumber(12_000)), "null]}"]))
        let flood = try await mock.python([.object(noisy)])
        #expect(flood.answers.first?.status == 413 && flood.answers.first?.reason == "PayloadTooLarge")
        let record = try #require(try await mock.server.notifications().first { $0.bodyByteCount > 50_000 })
        #expect(record.findings.map(\.rule) == ["payload-too-large"], "\(record.findings.prefix(3))")
        #expect(record.findings.first?.message.contains("\(record.bodyByteCount) bytes") == true)
    }

    @Test func unregisteredTokensAnswer410WithMilliseconds() async throws {
        let dead = try DeviceToken(hex: H.otherToken)
        let mock = try await H.start { $0.unregisteredTokens = [dead] }
        defer { Task { await mock.stop() } }
        let when = Date(timeIntervalSince1970: 1_790_000_000.123)
        let live = try DeviceToken(hex: H.token)
        mock.server.registerDevice(live, topic: "com.example.app")
        mock.server.unregister(live, at: when)
        let run = try await mock.python([H.push(token: H.otherToken), H.push()])
        for answer in run.answers {
            #expect(answer.status == 410 && answer.reason == "Unregistered")
            let timestamp = try #require(answer.bodyObject?["timestamp"] as? Int)
            #expect(timestamp > 1_000_000_000_000, "milliseconds, not seconds")
        }
        #expect(run.answers[1].bodyObject?["timestamp"] as? Int == 1_790_000_000_123)
        // Active again after re-registration.
        mock.server.reactivate(live)
        #expect(try await mock.python([H.push()]).answers[0].status == 200)
    }

    @Test func tokensBelongToOneEnvironmentAndTopic() async throws {
        let mock = try await H.start()
        defer { Task { await mock.stop() } }
        mock.server.registerDevice(try DeviceToken(hex: H.otherToken), topic: "com.example.app", environment: .production)
        let run = try await mock.python([
            H.push(token: H.otherToken),
            H.push(),  // binds the token to com.example.app
            H.push(headers: [("apns-topic", "com.other.app"), ("apns-push-type", "alert")]),
        ])
        #expect(run.answers[0].status == 400 && run.answers[0].reason == "BadDeviceToken")
        #expect(run.answers[1].status == 200)
        #expect(run.answers[2].status == 400 && run.answers[2].reason == "DeviceTokenNotForTopic")
    }

    @Test func strictModeRejectsTheUndocumentedCases() async throws {
        let background = [("apns-topic", "com.example.app"), ("apns-push-type", "background"), ("apns-priority", "10")]
        let upper = [("apns-topic", "com.example.app"), ("apns-push-type", "alert"), ("apns-id", "123E4567-E89B-12D3-A456-4266554400A0")]
        let steps: [JSONValue] = [
            H.push(#"{"aps":{"content-available":1}}"#, headers: background),
            H.push(headers: upper),
            H.push(jwt: ["key": "main", "iatString": true], connection: "b"),
        ]
        let lenient = try await H.start()
        // The connection's token is verified once and cached: its second push carries the note too.
        let lenientRun = try await lenient.python(steps + [H.push(jwt: ["key": "main", "iatString": true], connection: "b")])
        #expect(lenientRun.answers.map(\.status) == [200, 200, 200, 200])
        // What leniency let through is written on its record, for the inbox and the API.
        var noted: [[String]] = []
        for answer in lenientRun.answers {
            let id = try #require(answer.header("apns-id"))
            let record = try #require(try await lenient.server.notification(id: id))
            noted.append(record.findings.filter { $0.severity != "info" }.map(\.rule))
        }
        await lenient.stop()
        #expect(noted[0].contains("background-priority") && noted[1].contains("apns-id-not-lowercase"))
        #expect(noted[2] == ["provider-token-iat-string"] && noted[3] == ["provider-token-iat-string"], "\(noted)")

        let strict = try await H.start { $0.strict = true }
        defer { Task { await strict.stop() } }
        let strictRun = try await strict.python(steps)
        #expect(strictRun.answers.map(\.status) == [400, 400, 403])
        #expect(strictRun.answers.map(\.reason) == ["BadPriority", "BadMessageId", "InvalidProviderToken"])
    }

    /// A leniency note comes first on its record, and the record still keeps at most its
    /// maximum of findings, counting the rest.
    @Test func leniencyNotesStayWithinTheRecordsBound() async throws {
        let mock = try await H.start()
        defer { Task { await mock.stop() } }
        let numbers = (0..<1000).map(String.init).joined(separator: ",")
        let run = try await mock.python([
            H.push(#"{"aps":{"alert":{"loc-key":"K","loc-args":[\#(numbers)]}}}"#, jwt: ["key": "main", "iatString": true]),
        ])
        let id = try #require(run.answers.first?.header("apns-id"))
        let record = try #require(try await mock.server.notification(id: id))
        #expect(record.findings.count == NotificationRecord.maximumFindings && record.findings.first?.rule == "provider-token-iat-string")
        // 1,000 numeric loc-args (listed up to the linter's cap, the rest counted), and the note.
        #expect((1001...1005).contains(record.findings.count + record.omittedFindingCount), "\(record.omittedFindingCount) omitted")
    }

    @Test func idleConnectionsAreSentGoAwayIdleTimeout() async throws {
        // The timeout leaves room for a loaded machine between the connection and its first
        // request (at 400 ms, the GOAWAY once came before the push: a two-core CI run).
        let mock = try await H.start { $0.idleTimeout = .milliseconds(1_500) }
        defer { Task { await mock.stop() } }
        let steps: [JSONValue] = [
            H.push(),
            ["connection": "a", "action": "pump", "seconds": 4],
        ]
        var run = try await mock.python(steps)
        // A stall longer than the timeout between connecting and the push (CI once stalled every
        // test for seconds at once) lets the GOAWAY come first, with last-stream-id 0: that
        // attempt says nothing of a connection idle after a request, and is made again, at most
        // twice, on a new connection. A timeout that fires early fails all three.
        for _ in 0..<2 where run.answers.first?.status == nil && run.goAway()?["lastStreamId"] as? Int == 0 {
            run = try await mock.python(steps)
        }
        #expect(run.answers.first?.status == 200)
        let goAway = try #require(run.goAway())
        #expect(goAway["data"] as? String == #"{"reason":"IdleTimeout"}"#)
        #expect(goAway["lastStreamId"] as? Int == 1)
    }
}
