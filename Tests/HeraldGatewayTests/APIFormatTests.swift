import Foundation
@testable import HeraldGateway
import HeraldHTTPAPI
import HeraldJSON
@testable import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Testing

/// Both HTTP APIs (the gateway's and the mock's) say things one way: times as RFC 3339 in UTC
/// with milliseconds, numbers as numbers, errors as `{"error": {"message", …}}`.
@Suite struct APIFormatTests {
    /// Names of members that hold a moment.
    static func isTime(_ name: String) -> Bool {
        name == "at" || name == "since" || name == "retryUntil" || name == "notValidAfter" || name.hasSuffix("At") || name == "lastSeen"
    }

    /// Every property schema in `value`, with its name.
    static func properties(_ value: JSONValue, into found: inout [(String, JSONValue)]) {
        switch value {
        case .object(let object):
            if let properties = object["properties"]?.objectValue {
                for member in properties.members { found.append((member.key, member.value)) }
            }
            for member in object.members { Self.properties(member.value, into: &found) }
        case .array(let elements):
            for element in elements { Self.properties(element, into: &found) }
        default:
            break
        }
    }

    @Test(arguments: ["gateway", "mock"])
    func bothDocumentsGiveTimesAsStringsAndOneErrorShape(_ api: String) throws {
        let document = api == "gateway" ? GatewayAPI.openAPIDocument : InspectionAPI.openAPIDocument
        var found: [(String, JSONValue)] = []
        Self.properties(document, into: &found)
        let times = found.filter { Self.isTime($0.0) }
        #expect(!times.isEmpty)
        for (name, schema) in times {
            // A value that may be given several ways (a schedule: a time or a local time) gives
            // the time as a string.
            let branches = schema["oneOf"]?.arrayValue ?? [schema]
            let types = branches.flatMap { branch in branch["type"].map { $0.arrayValue ?? [$0] } ?? [] }
            #expect(types.contains("string") && !types.contains("integer") && !types.contains("number"), "\(api): \(name) is \(schema)")
        }
        // One error shape: {"error": {"message", "pointer"?, …}}.
        let error = try #require(document["components"]?["schemas"]?["Error"])
        #expect(error["required"] == ["error"] && error["properties"]?["error"]?["required"] == ["message"], "\(api): \(error)")
        #expect(error["properties"]?["error"]?["properties"]?["pointer"] != nil)
    }

    /// What the servers send: every time member of real answers, read by Python's
    /// `datetime.fromisoformat` (an outside reader), is UTC with three digits of milliseconds;
    /// the gateway's headers echo numbers as numbers.
    @Test func theServersWriteTimesAsRFC3339WithMilliseconds() async throws {
        let python = try ExternalTools.require("python3", package: "python3")
        let harness = try await GatewayHarness.start()
        defer { Task { await harness.stop() } }
        try await harness.registerApp()
        let tokens = GatewayHarness.tokens(3, salt: 40)
        harness.mock.unregister(tokens[0], at: Date(timeIntervalSince1970: 1_790_000_000.25))
        #expect(try await harness.call("POST", "/v1/apps/\(GatewayHarness.bundleID)/devices", #"{"tokens":["\#(tokens[1].hex)"]}"#).0 == 200)
        let job = try await harness.submit(tokens: tokens, extra: #","priority":5,"expiration":0"#)
        let summary = try await harness.waitUntilDone(job)
        let headers = summary.root["headers"]
        #expect(headers?["priority"]?.kind == .number && headers?["expiration"]?.kind == .number, "\(summary.root.value)")

        var answers: [JSONValue] = [summary.root.value]
        for path in ["/v1/apps/\(GatewayHarness.bundleID)", "/v1/keys", "/v1/apps/\(GatewayHarness.bundleID)/devices",
                     "/v1/apps/\(GatewayHarness.bundleID)/notifications/\(job)/deliveries", "/v1/apps/\(GatewayHarness.bundleID)/notifications"] {
            answers.append(try #require(try await harness.call("GET", path).1).root.value)
        }
        answers.append(.array(try await harness.mock.notifications().map(\.jsonValue)))
        answers.append(.array(harness.mock.devices.map(\.jsonValue)))
        answers.append(.array(harness.mock.connectionEvents().map(\.jsonValue)))

        var times: [String] = []
        func collect(_ value: JSONValue) {
            switch value {
            case .object(let object):
                for member in object.members {
                    if Self.isTime(member.key), member.value.kind != .null {
                        if let text = member.value.stringValue { times.append(text) } else { Issue.record("\(member.key) is \(member.value)") }
                    }
                    collect(member.value)
                }
            case .array(let elements): elements.forEach(collect)
            default: break
            }
        }
        answers.forEach(collect)
        #expect(times.count >= 10, "\(times)")
        #expect(times.contains("2026-09-21T14:13:20.250Z"), "the 410's moment, to the millisecond")
        let script = """
            import datetime, json, sys
            bad = []
            for text in json.load(sys.stdin):
                moment = datetime.datetime.fromisoformat(text)
                if moment.utcoffset() != datetime.timedelta(0) or not text.endswith("Z") or len(text.split(".")[-1]) != 4:
                    bad.append(text)
            print(json.dumps(bad))
            """
        let input = "[" + times.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        let run = try await ExternalTools.executeInBackground(python, ["-c", script], stdin: Array(input.utf8), timeout: .seconds(60))
        #expect(run.status == 0 && String(decoding: run.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "[]",
                "\(String(decoding: run.stdout, as: UTF8.self)) \(run.stderr)")
    }

    /// The formatter against Foundation's from 1600 to 9999 (before the Gregorian reform
    /// Foundation counts Julian days; RFC 3339's calendar is the proleptic Gregorian), and its
    /// parser back.
    @Test(.ownThreads) func apiTimeAgreesWithFoundation() {
        var generator = SystemRandomNumberGenerator()
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        let year1600: Int64 = -11_676_096_000_000
        for sample in [Int64(0), -1, 1_790_000_000_250, 253_402_300_799_999, year1600, 951_782_400_000] + (0..<2_000).map({ _ in Int64.random(in: year1600...253_402_300_799_999, using: &generator) }) {
            let text = APITime.format(milliseconds: sample)
            #expect(formatter.string(from: Date(timeIntervalSince1970: Double(sample) / 1000)) == text, "\(sample)")
            #expect(APITime.parse(text) == sample, "\(text)")
        }
        #expect(APITime.parse("2026-12-01T09:00:00+01:00") == APITime.parse("2026-12-01T08:00:00Z"))
        for bad in ["2026-02-30T00:00:00Z", "2026-12-01 09:00:00Z", "2026-12-01T09:00:00", "2026-12-01T25:00:00Z", "", "2026-12-01T09:00:00.Z"] {
            #expect(APITime.parse(bad) == nil, "\(bad)")
        }
    }
}
