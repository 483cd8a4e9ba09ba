import Foundation
import HeraldAuth
import HeraldJSON
import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Testing

/// The inspection API, called with Python's `urllib` and read with Python's `json`.
@Suite(.serialized) struct InspectionAPITests {
    typealias H = MockHarness

    /// Calls the API; returns the status and the body as text.
    static func api(_ mock: MockHarness, _ method: String, _ path: String, body: String? = nil) async throws -> (status: Int, body: String) {
        let port = try #require(mock.server.apiPort)
        let script = """
            import sys, urllib.request, urllib.error
            data = sys.stdin.read().encode() if \(body == nil ? "False" : "True") else None
            request = urllib.request.Request('http://127.0.0.1:\(port)\(path)', data=data, method='\(method)')
            if data is not None: request.add_header('content-type', 'application/json')
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    print(response.status); sys.stdout.write(response.read().decode())
            except urllib.error.HTTPError as error:
                print(error.code); sys.stdout.write(error.read().decode())
            """
        let output = String(decoding: try await ExternalTools.python(script, stdin: Array((body ?? "").utf8)), as: UTF8.self)
        let newline = output.firstIndex(of: "\n") ?? output.endIndex
        return (Int(output[..<newline]) ?? -1, newline < output.endIndex ? String(output[output.index(after: newline)...]) : "")
    }

    static func object(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// `herald_mock_requests_total` counts each request once under its kind, status and reason,
    /// whichever connection it came on (each connection keeps its own index of the counters):
    /// the figures equal the answers the Python client saw, grouped by hand.
    @Test func requestCountersAgreeWithTheAnswers() async throws {
        let mock = try await H.start()
        defer { Task { await mock.stop() } }
        var steps: [JSONValue] = []
        for connection in ["a", "b", "c"] {
            for round in 0..<3 {
                steps.append(H.push(#"{"aps":{"alert":"Hello \#(round)"}}"#, connection: connection))
                steps.append(H.push(token: "abc", connection: connection))  // BadDeviceToken
                if round < 2 { steps.append(H.push(headers: [("apns-push-type", "alert")], connection: connection)) }  // MissingTopic
                if round == 0 {  // BadPriority
                    steps.append(H.push(headers: [("apns-topic", "com.example.app"), ("apns-push-type", "alert"), ("apns-priority", "7")], connection: connection))
                }
            }
        }
        let run = try await mock.python(steps)
        var expected: [String: Int] = [:]
        for answer in run.answers {
            let status = try #require(answer.status, "\(answer)")
            expected["status=\"\(status)\",reason=\"\(status == 200 ? "" : answer.reason ?? "?")\"", default: 0] += 1
        }
        #expect(expected.count == 4, "\(expected)")
        let metrics = try await Self.api(mock, "GET", "/metrics")
        var counted: [String: Int] = [:]
        for line in metrics.body.split(separator: "\n") where line.hasPrefix(#"herald_mock_requests_total{kind="device","#) {
            let labels = line.drop { $0 != "," }.dropFirst().prefix { $0 != "}" }
            counted[String(labels), default: 0] += Int(line.split(separator: " ").last ?? "") ?? -1
        }
        #expect(counted == expected, "\(metrics.body)")
    }

    @Test func notificationsWithFiltersAndPaging() async throws {
        let mock = try await H.start()
        defer { Task { await mock.stop() } }
        _ = try await mock.python([
            H.push(#"{"aps":{"alert":"Hello one"}}"#), H.push(#"{"aps":{"alert":"Hello two"}}"#),
            H.push(headers: [("apns-push-type", "alert")]), H.push(#"{"aps":{"alert":"third"}}"#, token: H.otherToken),
        ])
        let all = Self.object(try await Self.api(mock, "GET", "/api/v1/notifications").body)
        let list = try #require(all["notifications"] as? [[String: Any]])
        #expect(all["total"] as? Int == 4)
        try #require(list.count == 4, "the checks below index the four records")
        #expect(list.map { $0["id"] as? Int } == [4, 3, 2, 1], "newest first")
        for key in ["apnsId", "deviceToken", "topic", "pushType", "priority", "status", "reason", "payload", "receivedAt"] {
            #expect(list[0].keys.contains(key), "\(key)")
        }
        #expect(list[0]["deviceToken"] as? String == H.otherToken && list[0]["priority"] as? Int == 10)
        #expect((list[3]["payload"] as? [String: Any])?["aps"] != nil, "the payload is JSON, not a string")
        #expect(list[1]["status"] as? Int == 400 && list[1]["reason"] as? String == "MissingTopic")
        #expect((list[3]["rendered"] as? [String: Any])?["body"] as? String == "Hello one")

        func count(_ query: String) async throws -> Int {
            (Self.object(try await Self.api(mock, "GET", "/api/v1/notifications?" + query).body)["notifications"] as? [Any])?.count ?? -1
        }
        #expect(try await count("limit=2") == 2)
        #expect(try await count("status=400") == 1)
        #expect(try await count("accepted=false") == 1)
        #expect(try await count("token=\(H.otherToken)") == 1)
        #expect(try await count("q=Hello") == 3)
        #expect(try await count("q=hello%20one") == 1)
        #expect(try await count("before=3") == 2)
        #expect(try await count("pushType=alert&accepted=true") == 3)
        #expect(try await Self.api(mock, "GET", "/api/v1/notifications?limit=lots").status == 400)

        let apnsID = try #require(list[0]["apnsId"] as? String)
        let one = try await Self.api(mock, "GET", "/api/v1/notifications/\(apnsID)")
        #expect(one.status == 200 && Self.object(one.body)["apnsId"] as? String == apnsID)
        #expect(try await Self.api(mock, "GET", "/api/v1/notifications/nope").status == 404)
        #expect(try await Self.api(mock, "DELETE", "/api/v1/notifications").status == 204)
        #expect(try await count("") == 0)
    }

    /// What a payload provokes does not decide what a record costs: a thousand findings keep
    /// their first 100 (in order, the rest counted), a 3,000-byte key name is cut to 1 KB in the
    /// pointer and the message, and a page of records stops before 8 MiB and says where the next
    /// begins, so paging with `next` misses nothing and repeats nothing.
    @Test func recordsAndPagesAreBoundedWhateverThePayloadProvokes() async throws {
        let mock = try await H.start()
        defer { Task { await mock.stop() } }
        let numbers = (0..<1000).map(String.init).joined(separator: ",")
        let longKey = "password_" + String(repeating: "y", count: 3000)
        _ = try await mock.python([
            H.push(#"{"aps":{"alert":{"loc-key":"K","loc-args":[\#(numbers)]}}}"#),
            H.push(#"{"aps":{"alert":"hi"},"\#(longKey)":"hunter2hunter2"}"#),
        ])
        let page = Self.object(try await Self.api(mock, "GET", "/api/v1/notifications").body)
        let records = try #require(page["notifications"] as? [[String: Any]])
        try #require(records.count == 2)
        let numeric = try #require(records[1]["findings"] as? [[String: Any]])
        let omitted = try #require(records[1]["findingsOmitted"] as? Int)
        #expect(numeric.count == NotificationRecord.maximumFindings)
        // Each of the 1,000 loc-args is a number where the device expects a string: one finding
        // each, in document order.
        let pointers = numeric.compactMap { $0["pointer"] as? String }.filter { $0.hasPrefix("/aps/alert/loc-args/") }
        #expect(pointers.count >= 99 && pointers == (0..<pointers.count).map { "/aps/alert/loc-args/\($0)" }, "\(pointers.prefix(5))")
        // The linter lists 100 of them and counts the rest (one more finding says how many);
        // the record counts those too.
        #expect(numeric.count + omitted >= 1000 && numeric.count + omitted <= 1004, "\(omitted) omitted")
        let keyed = try #require(records[0]["findings"] as? [[String: Any]])
        let sensitive = try #require(keyed.first { $0["rule"] as? String == "sensitive-key-name" })
        for text in [sensitive["pointer"], sensitive["message"]].compactMap({ $0 as? String }) {
            #expect(text.utf8.count <= NotificationRecord.maximumFindingTextBytes && text.hasSuffix("…"), "\(text.utf8.count) bytes")
        }
        #expect(records[0]["findingsOmitted"] as? Int == 0)

        // About 12 KB per record (a 4,000-byte alert, its rendering and its userInfo): 900 of them
        // pass 8 MiB.
        let body = String(repeating: "z", count: 3980)
        _ = try await mock.python((0..<900).map { _ in H.push(#"{"aps":{"alert":"\#(body)"}}"#) })
        var seen: [Int] = []
        var before: Int?
        var pages = 0
        repeat {
            let answer = try await Self.api(mock, "GET", "/api/v1/notifications" + (before.map { "?before=\($0)" } ?? ""))
            #expect(answer.status == 200)
            #expect(answer.body.utf8.count <= 8 << 20, "a page of \(answer.body.utf8.count) bytes")
            let page = Self.object(answer.body)
            let ids = (page["notifications"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
            #expect(page["count"] as? Int == ids.count && page["total"] as? Int == 902 - seen.count)
            seen += ids
            before = (page["truncated"] as? Bool == true) ? page["next"] as? Int : nil
            #expect(before == nil || before == ids.last)
            pages += 1
        } while before != nil && pages < 10
        #expect(pages >= 2, "900 records of 12 KB fit one page")
        #expect(seen == Array((1...902).reversed()), "paged ids: \(seen.count), first \(seen.prefix(3)), last \(seen.suffix(3))")
    }

    /// A refused request's record says what was sent: a bad device token leaves its push type,
    /// priority and topic known (they were null), as do an unknown push type the others.
    @Test func recordsKeepTheHeadersWhateverTheAnswer() async throws {
        let mock = try await H.start()
        defer { Task { await mock.stop() } }
        _ = try await mock.python([
            H.push(headers: [("apns-topic", "com.example.app"), ("apns-push-type", "alert"), ("apns-priority", "5")], path: "/3/device/not-hex"),
            H.push(headers: [("apns-topic", "com.example.app"), ("apns-push-type", "sometimes"), ("apns-priority", "5"), ("apns-collapse-id", "group")]),
        ])
        let list = try #require(Self.object(try await Self.api(mock, "GET", "/api/v1/notifications").body)["notifications"] as? [[String: Any]])
        let badToken = try #require(list.first { $0["reason"] as? String == "BadDeviceToken" }, "\(list)")
        #expect(badToken["pushType"] as? String == "alert" && badToken["priority"] as? Int == 5 && badToken["topic"] as? String == "com.example.app", "\(badToken)")
        let badType = try #require(list.first { $0["reason"] as? String == "InvalidPushType" }, "\(list)")
        #expect(badType["pushType"] is NSNull && badType["priority"] as? Int == 5 && badType["collapseId"] as? String == "group", "\(badType)")
        let headers = try #require(badType["headers"] as? [[String: String]])
        #expect(headers.contains(["name": "apns-push-type", "value": "sometimes"]), "the headers as received: \(headers)")
    }

    @Test func devicesAndFaultsFromTheAPI() async throws {
        let mock = try await H.start()
        defer { Task { await mock.stop() } }
        let registered = try await Self.api(mock, "POST", "/api/v1/devices", body: #"{"token":"\#(H.token)","topic":"com.example.app"}"#)
        #expect(registered.status == 201 && Self.object(registered.body)["state"] as? String == "active")
        #expect(try await Self.api(mock, "POST", "/api/v1/devices", body: #"{"token":"xyz"}"#).status == 400)
        for timestamp in ["1e300", "-1", "253402300800000", "\"soon\""] {
            let refused = try await Self.api(mock, "POST", "/api/v1/devices/\(H.token)/unregister", body: #"{"timestamp":\#(timestamp)}"#)
            #expect(refused.status == 400 && refused.body.contains("the year 9999"), "\(timestamp)")
        }
        #expect(try await Self.api(mock, "POST", "/api/v1/devices/\(H.token)/unregister", body: #"{"timestamp":1790000000000}"#).status == 200)
        let dead = try await mock.python([H.push()])
        #expect(dead.answers[0].status == 410 && dead.answers[0].bodyObject?["timestamp"] as? Int == 1_790_000_000_000)
        #expect(try await Self.api(mock, "POST", "/api/v1/devices/\(H.token)/register").status == 200)

        let fault = try await Self.api(mock, "POST", "/api/v1/faults", body: #"{"rule":"status=500"}"#)
        #expect(fault.status == 201)
        let id = try #require(Self.object(fault.body)["id"] as? Int)
        let bad = try await Self.api(mock, "POST", "/api/v1/faults", body: #"{"rule":"status=900"}"#)
        #expect(bad.status == 400 && bad.body.contains("between 200 and 599"))
        let failing = try await mock.python([H.push()])
        #expect(failing.answers[0].status == 500 && failing.answers[0].reason == "InternalServerError")
        #expect(try await Self.api(mock, "DELETE", "/api/v1/faults/\(id)").status == 204)
        let working = try await mock.python([H.push(#"{"aps":{"alert":"Hi","badge":3}}"#)])
        #expect(working.answers[0].status == 200)

        let device = Self.object(try await Self.api(mock, "GET", "/api/v1/devices/\(H.token)").body)
        #expect(device["badge"] as? Int == 3 && device["notificationCount"] as? Int == 1)
        let groups = try #require(device["groups"] as? [[String: Any]])
        let content = (groups.first?["notifications"] as? [[String: Any]])?.first?["content"] as? [String: Any]
        #expect(content?["body"] as? String == "Hi")
        #expect(try await Self.api(mock, "DELETE", "/api/v1/devices/\(H.token)").status == 204)
        #expect(try await Self.api(mock, "GET", "/api/v1/devices/\(H.token)").status == 404)
    }

    @Test func eventStreamOpenAPIAndMetrics() async throws {
        let mock = try await H.start()
        defer { Task { await mock.stop() } }
        let port = try #require(mock.server.apiPort)
        // A reader of the event stream; pushes are sent until it has seen one.
        let reader = Task.detached {
            try ExternalTools.python("""
                import urllib.request, json
                with urllib.request.urlopen('http://127.0.0.1:\(port)/api/v1/events', timeout=20) as stream:
                    assert stream.headers['content-type'].startswith('text/event-stream')
                    event = None
                    for raw in stream:
                        line = raw.decode().rstrip('\\n')
                        if line.startswith('event: '): event = line[7:]
                        if line.startswith('data: ') and event == 'notification':
                            print(json.loads(line[6:])['deviceToken']); break
                """)
        }
        let pusher = Task.detached {
            for _ in 0..<60 where !Task.isCancelled {
                _ = try? await mock.python([H.push()])
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        let seen = String(decoding: try await reader.value, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        pusher.cancel()
        #expect(seen == H.token)

        // The OpenAPI document lists every route the API answers.
        let document = Self.object(try await Self.api(mock, "GET", "/api/v1/openapi.json").body)
        #expect(document["openapi"] as? String == "3.1.0")
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        for (path, operations) in paths where operations["get"] != nil && !path.contains("{") && path != "/api/v1/events" {
            #expect(try await Self.api(mock, "GET", path).status == 200, "\(path)")
        }
        #expect(paths.count >= 14)

        let metrics = try await Self.api(mock, "GET", "/metrics")
        #expect(metrics.status == 200)
        let accepted = metrics.body.split(separator: "\n").first { $0.hasPrefix("herald_mock_requests_total{") && $0.contains(#"status="200""#) }
        #expect(accepted.map { Int($0.split(separator: " ").last ?? "") ?? 0 } ?? 0 >= 1, "\(metrics.body)")
        #expect(accepted?.contains(#"kind="device""#) == true && accepted?.contains(#"reason="""#) == true, "\(metrics.body)")
        #expect(metrics.body.contains("herald_mock_connections_total"))
        // The client connections above were opened and logged: one counter per kind and code.
        let opened = metrics.body.split(separator: "\n").first { $0.hasPrefix(#"herald_mock_connection_events_total{kind="opened",code=""}"#) }
        #expect(opened.map { Int($0.split(separator: " ").last ?? "") ?? 0 } ?? 0 >= 1, "\(metrics.body)")
    }
}

