import Foundation
import HeraldAuth
import HeraldJSON
import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Testing

/// Fault rules: the grammar, and each action as a Python `h2` client sees it.
@Suite(.serialized) struct FaultTests {
    typealias H = MockHarness

    @Test func grammarRoundTripsAndExplainsMistakes() throws {
        let rule = try FaultRule(parsing: "status=429/TooManyRequests, token=\(H.token), times=2")
        #expect(rule.action == .respond(status: 429, reason: .tooManyRequests) && rule.times == 2)
        #expect(try FaultRule(parsing: rule.description) == rule)
        #expect(try FaultRule(parsing: "status=503").action == .respond(status: 503, reason: .serviceUnavailable))
        #expect(try FaultRule(parsing: "delay=250ms,every=3").delay == .milliseconds(250))
        #expect(try FaultRule(parsing: "goaway=Shutdown/before").action == .goAway(reason: .shutdown, beforeAnswering: true))
        #expect(try FaultRule(parsing: "reset=refused-stream").action == .resetStream(code: 7))
        let mistakes: [(String, String)] = [
            ("", "empty"), ("token=abc", "token"), ("every=3", "no action"), ("status=700", "200 and 599"),
            ("status=500,close", "one action"), ("colour=red,close", "unknown item"), ("probability=2,close", "0 to 1"),
            ("delay=soon", "duration"), ("push-type=email,close", "push-type"), ("reset=explode", "reset code"),
            // Numbers that parse but would overflow when the rule runs (a crash of the server).
            ("delay=inf", "at most a day"), ("delay=1e300s", "at most a day"), ("delay=-5ms", "duration"), ("delay=25h", "duration"),
            ("max-streams=4294967296", "0 to 2147483647"), ("max-streams=-1", "0 to 2147483647"),
        ]
        for (text, problem) in mistakes {
            let error = try #require(throws: FaultRuleError.self) { try FaultRule(parsing: text) }
            #expect(error.description.contains(problem), "\(text): \(error)")
        }
    }

    @Test func respondEveryNthAndTimes() async throws {
        let mock = try await H.start {
            $0.faults = [
                try! FaultRule(parsing: "status=429/TooManyRequests,token=\(H.otherToken),times=2"),
                try! FaultRule(parsing: "status=503,every=3,path=device"),
            ]
        }
        defer { Task { await mock.stop() } }
        let run = try await mock.python([
            H.push(token: H.otherToken), H.push(token: H.otherToken), H.push(token: H.otherToken),
            H.push(), H.push(), H.push(), H.push(),
        ])
        // The token rule matches twice, then is spent. The every-3 rule counts only the
        // requests the first rule let through (3rd, 4th, 5th… overall: its 3rd is the 5th).
        #expect(run.answers.map(\.status) == [429, 429, 200, 200, 503, 200, 200], "\(run.answers.map(\.status))")
        #expect(run.answers[0].reason == "TooManyRequests" && run.answers[4].reason == "ServiceUnavailable")
        let faulted = try await mock.server.notifications(NotificationQuery()).filter { $0.fault != nil }
        #expect(faulted.count == 3)
        #expect(mock.server.faults.count == 1, "the spent rule is gone")
    }

    /// A rule made in code is not range-checked as a parsed one is: the mock keeps its values
    /// within what HTTP/2 and arithmetic allow instead of trapping on its event loop.
    @Test func rulesMadeInCodeWithValuesOutOfRange() async throws {
        let mock = try await H.start {
            $0.faults = [FaultRule(action: .lowerMaximumStreams(Int.max), every: 0, times: 1)]
        }
        defer { Task { await mock.stop() } }
        let run = try await mock.python([H.push(), H.push()])
        #expect(run.answers.map(\.status) == [200, 200], "\(run.answers.map(\.status))")
        #expect(mock.server.faults.isEmpty, "the rule matched once and is spent")
    }

    @Test func goAwayResetCloseHangAndStreamLimits() async throws {
        let mock = try await H.start()
        defer { Task { await mock.stop() } }
        mock.server.addFault(try FaultRule(parsing: "goaway=Shutdown,topic=after.app,times=1"))
        mock.server.addFault(try FaultRule(parsing: "goaway=Shutdown/before,topic=before.app,times=1"))
        mock.server.addFault(try FaultRule(parsing: "reset=refused-stream,topic=reset.app"))
        mock.server.addFault(try FaultRule(parsing: "close,topic=close.app"))
        mock.server.addFault(try FaultRule(parsing: "hang,topic=hang.app"))
        mock.server.addFault(try FaultRule(parsing: "max-streams=2,topic=limit.app,times=1"))
        mock.server.addFault(try FaultRule(parsing: "delay=400ms,topic=slow.app"))
        func topic(_ name: String, _ connection: String, token: String = H.token) -> JSONValue {
            H.push(token: token, headers: [("apns-topic", name), ("apns-push-type", "alert")], connection: connection)
        }
        let started = ContinuousClock.now
        let run = try await mock.python([
            topic("after.app", "after"), topic("com.example.app", "after"),
            topic("before.app", "before", token: H.otherToken),
            topic("reset.app", "reset", token: "11" + String(H.token.dropFirst(2))),
            topic("reset.app", "reset", token: "11" + String(H.token.dropFirst(2))),
            topic("close.app", "close", token: "22" + String(H.token.dropFirst(2))),
            ["connection": "hang", "timeout": 1, "method": "POST", "path": .string("/3/device/33" + String(H.token.dropFirst(2))),
             "headers": [["apns-topic", "hang.app"], ["apns-push-type", "alert"]], "body": #"{"aps":{"alert":"x"}}"#, "jwt": ["key": "main"]],
            topic("limit.app", "limit", token: "44" + String(H.token.dropFirst(2))),
            ["connection": "limit", "action": "pump", "seconds": 0.3],
            topic("slow.app", "slow", token: "55" + String(H.token.dropFirst(2))),
        ])
        let answers = run.answers
        // GOAWAY after answering: the answer arrives, then GOAWAY with the JSON reason.
        #expect(answers[0].status == 200)
        let after = try #require(run.goAway("after"))
        #expect(after["data"] as? String == #"{"reason":"Shutdown"}"#)
        #expect(after["lastStreamId"] as? Int == 1)
        #expect(answers[1].status == nil, "no new stream is served after GOAWAY: \(answers[1])")
        // GOAWAY before answering: the request is left unprocessed (above last-stream-id).
        #expect(answers[2].status == nil && answers[2].error == "goaway", "\(answers[2]) \(run.connections)")
        #expect(run.goAway("before")?["lastStreamId"] as? Int == 0)
        // Reset: RST_STREAM with REFUSED_STREAM (7), and the connection stays usable.
        #expect(answers[3].error == "reset:7" && answers[4].error == "reset:7")
        #expect(answers[5].status == nil && answers[5].error == "closed")
        #expect(answers[6].error == "timeout")
        #expect(answers[7].status == 200)
        // The fault lowers the limit even below the raise a first valid token would bring.
        #expect(run.settings("limit") == [1, 2], "\(run.settings("limit"))")
        #expect(answers[8].status == 200)
        #expect(ContinuousClock.now - started >= .milliseconds(400 + 1000), "the delay and the hang were waited out")
    }
}

/// Broadcast channels (Apple's "Sending channel management requests to APNs" and "Sending
/// broadcast push notification requests to APNs") over the channel port and the APNs port.
@Suite(.serialized) struct BroadcastTests {
    typealias H = MockHarness

    static func channelRequest(_ method: String, _ path: String, headers: [(String, String)] = [], body: String = "") -> JSONValue {
        H.push(body, headers: headers, connection: "manage", method: method, path: path)
    }

    @Test func channelLifecycleAndBroadcastDelivery() async throws {
        let mock = try await H.start()
        defer { Task { await mock.stop() } }
        let channelPort = try #require(mock.server.channelPort)
        let create = try await mock.python([
            Self.channelRequest("POST", "/1/apps/com.example.app/channels", headers: [("apns-request-id", "0C8E3B1E-7F2A-4B8E-9E7A-2E5B0E1A9C11")], body: #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#),
            Self.channelRequest("POST", "/1/apps/com.example.app/channels", body: #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#),
            Self.channelRequest("POST", "/1/apps/com.example.app/channels", body: #"{"message-storage-policy":0,"push-type":"LiveActivity","colour":"red"}"#),
            Self.channelRequest("POST", "/1/apps/com.example.app/channels", body: "not json"),
            Self.channelRequest("GET", "/1/apps/com.example.app/all-channels"),
            Self.channelRequest("PUT", "/1/apps/com.example.app/channels"),
            Self.channelRequest("GET", "/1/apps/com.example.app/everything"),
            Self.channelRequest("GET", "/1/apps/com.example.app/channels"),
        ], port: channelPort)
        let answers = create.answers
        #expect(answers[0].status == 201 && answers[0].body.isEmpty)
        #expect(answers[0].header("apns-request-id") == "0c8e3b1e-7f2a-4b8e-9e7a-2e5b0e1a9c11")
        let stored = try #require(answers[0].header("apns-channel-id"))
        let unstored = try #require(answers[1].header("apns-channel-id"))
        #expect(Data(base64Encoded: stored)?.count == 16)
        #expect(answers[2].status == 400 && answers[2].reason == "BadRequestParams")
        #expect(answers[3].status == 400 && answers[3].reason == "BadRequestPayload")
        #expect(answers[4].status == 200 && Set(answers[4].bodyObject?["channels"] as? [String] ?? []) == [stored, unstored])
        #expect(answers[5].status == 405 && answers[5].reason == "MethodNotAllowed")
        #expect(answers[6].status == 404 && answers[6].reason == "BadPath")
        #expect(answers[7].status == 400 && answers[7].reason == "MissingChannelId")

        let read = try await mock.python([
            Self.channelRequest("GET", "/1/apps/com.example.app/channels", headers: [("apns-channel-id", stored)]),
            Self.channelRequest("GET", "/1/apps/com.example.app/channels", headers: [("apns-channel-id", "dW5rbm93bg==")]),
        ], port: channelPort)
        #expect(read.answers[0].status == 200)
        #expect(read.answers[0].bodyObject?["message-storage-policy"] as? Int == 1 && read.answers[0].bodyObject?["push-type"] as? String == "LiveActivity")
        #expect(read.answers[1].status == 400 && read.answers[1].reason == "ChannelNotRegistered")

        // Broadcast to the stored channel, reaching a subscribed device's Live Activity.
        let subscriber = try DeviceToken(hex: H.otherToken)
        mock.server.subscribe(subscriber, toChannel: stored)
        let update = #"{"aps":{"event":"update","timestamp":1790000000,"content-state":{"score":"2-1"}}}"#
        func broadcast(_ bundle: String, channel: String?, headers: [(String, String)] = [("apns-push-type", "liveactivity")], body: String = update) -> JSONValue {
            var all = headers
            if let channel { all.append(("apns-channel-id", channel)) }
            return H.push(body, headers: all, path: "/4/broadcasts/apps/\(bundle)")
        }
        let sent = try await mock.python([
            broadcast("com.example.app", channel: stored),
            broadcast("com.example.app", channel: nil),
            broadcast("com.example.app", channel: "dW5rbm93bg=="),
            broadcast("com.example.app.push-type.liveactivity", channel: stored),
            broadcast("com.example.app", channel: stored, headers: [("apns-push-type", "alert")]),
            broadcast("com.example.app", channel: stored, headers: []),
            broadcast("com.example.app", channel: unstored, headers: [("apns-push-type", "liveactivity"), ("apns-expiration", "1790000000")]),
            broadcast("com.example.app", channel: unstored, headers: [("apns-push-type", "liveactivity"), ("apns-expiration", "0")]),
        ])
        let results = sent.answers.map { "\($0.status ?? -1) \($0.reason ?? "")" }
        #expect(results == [
            "200 ", "400 MissingChannelId", "400 ChannelNotRegistered", "400 TopicDisallowed", "400 InvalidPushType",
            "400 MissingPushType", "400 BadExpirationDate", "200 ",
        ], "\(results)")
        #expect(sent.answers[0].header("apns-request-id") != nil && sent.answers[0].header("apns-id") == nil)
        let device = try #require(mock.server.device(subscriber))
        #expect(device.device.activities[stored]?.latest.contentState?["score"]?.stringValue == "2-1")

        // Delete: 204, then the channel is gone.
        let deleted = try await mock.python([
            Self.channelRequest("DELETE", "/1/apps/com.example.app/channels", headers: [("apns-channel-id", stored)]),
            Self.channelRequest("DELETE", "/1/apps/com.example.app/channels", headers: [("apns-channel-id", stored)]),
        ], port: channelPort)
        #expect(deleted.answers.map(\.status) == [204, 400])
        #expect(deleted.answers[1].reason == "ChannelNotRegistered")
    }
}
