import Foundation
import HeraldAuth
import HeraldJSON
@testable import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Testing

/// The clients people use, against the mock, changing only host, port and trust: aioapns and
/// apns2-up from PyPI, and python-h2 as strict (and as lazy) as real peers are. Every push is
/// accounted for: the mock accepted each push the client reports delivered exactly once, and
/// nothing else.
@Suite(.serialized, .heavy) struct InteropTests {
    typealias H = MockHarness

    struct Report {
        var accepted: [String]
        var rejected: [(token: String, status: Int, reason: String)]
        var errors: [String]
        var resent: Int
        var goAways: Int
        var raw: [String: Any]
    }

    /// Runs Tests/Fixtures/mock/peers.py against `mock`.
    static func peer(_ mode: String, _ mock: MockHarness, count: Int, modules: [String], package: String) async throws -> Report {
        for module in modules { try ExternalTools.requirePython(modules: module, package: package) }
        let python = try ExternalTools.require("python3", package: "python3")
        try mock.directory.write("key.p8", mock.key.pkcs8PEM)
        let arguments = [
            Fixtures.url("mock/peers.py").path, mode, "127.0.0.1", String(mock.server.port), String(count),
            mock.directory.path("ca.pem"), mock.directory.path("key.p8"), H.keyID.rawValue, H.teamID.rawValue,
        ]
        let output = try await ExternalTools.executeInBackground(python, arguments, timeout: .seconds(240))
        let text = String(decoding: output.stdout, as: UTF8.self)
        guard output.status == 0, let line = text.split(separator: "\n").last,
              let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw ExternalTools.Failure(description: "peers.py \(mode) exited \(output.status): \(text)\n\(output.stderr.suffix(3_000))")
        }
        return Report(
            accepted: object["accepted"] as? [String] ?? [],
            rejected: (object["rejected"] as? [[Any]] ?? []).map { ($0[0] as? String ?? "", $0[1] as? Int ?? 0, $0[2] as? String ?? "") },
            errors: object["errors"] as? [String] ?? [], resent: object["resent"] as? Int ?? 0, goAways: object["goaways"] as? Int ?? 0,
            raw: object)
    }

    /// Each token the client calls delivered was accepted by the mock exactly once; no other
    /// token was accepted.
    static func checkAccounted(_ report: Report, _ mock: MockHarness, sourceLocation: Testing.SourceLocation = #_sourceLocation) async throws {
        var query = NotificationQuery()
        query.limit = 1_000_000
        query.accepted = true
        var acceptedByMock: [String: Int] = [:]
        for record in try await mock.server.notifications(query) { acceptedByMock[record.deviceToken ?? "", default: 0] += 1 }
        let clientAccepted = Set(report.accepted)
        #expect(clientAccepted.count == report.accepted.count, "the client reports each token once", sourceLocation: sourceLocation)
        let twice = acceptedByMock.filter { $0.value > 1 }
        #expect(twice.isEmpty, "\(twice.count) pushes accepted twice", sourceLocation: sourceLocation)
        let unknown = Set(acceptedByMock.keys).subtracting(clientAccepted)
        #expect(unknown.isEmpty, "\(unknown.count) pushes accepted by the mock that the client calls failed", sourceLocation: sourceLocation)
        let missing = clientAccepted.subtracting(acceptedByMock.keys)
        #expect(missing.isEmpty, "\(missing.count) pushes the client calls delivered that the mock never accepted", sourceLocation: sourceLocation)
    }

    @Test func aioapnsIsAnsweredAsAppleDocuments() async throws {
        let mock = try await H.start(tls: true)
        defer { Task { await mock.stop() } }
        let report = try await Self.peer("aioapns", mock, count: 500, modules: ["aioapns"], package: "aioapns")
        #expect(report.accepted.count == 500 && report.errors.isEmpty, "\(report.rejected.prefix(3)) \(report.errors.prefix(3))")
        try await Self.checkAccounted(report, mock)
    }

    /// aioapns closes a connection as soon as it reads a GOAWAY: every answer up to the GOAWAY's
    /// last-stream-id must come before it, and no reset after it (python-h2 raises on those and
    /// drops the rest of the read; aioapns then sent again pushes the mock had accepted).
    @Test func aioapnsThroughGOAWAYsSendsNothingTwice() async throws {
        let mock = try await H.start(tls: true) { $0.faults = [try! FaultRule(parsing: "goaway=Shutdown,every=200")] }
        defer { Task { await mock.stop() } }
        let report = try await Self.peer("aioapns", mock, count: 2_000, modules: ["aioapns"], package: "aioapns")
        try await Self.checkAccounted(report, mock)
        #expect(mock.server.connectionEvents().contains { $0.kind == .goAwaySent })
    }

    /// apns2-up signs `iat` with `time.time()`, a fraction: accepted by default (its whole
    /// seconds), refused in strict mode as the other leniencies are.
    @Test(arguments: [false, true])
    func apns2UpWithItsFractionalIssuedAt(strict: Bool) async throws {
        let mock = try await H.start(tls: true) { $0.leniency = strict ? .strict : .default }
        defer { Task { await mock.stop() } }
        let report = try await Self.peer("apns2", mock, count: 200, modules: ["apns2", "hyper"], package: "apns2-up")
        if strict {
            #expect(report.accepted.isEmpty && report.rejected.count == 200 && report.rejected.allSatisfy { $0.reason.contains("InvalidProviderToken") },
                    "\(report.rejected.prefix(3)) \(report.errors)")
        } else {
            #expect(report.accepted.count == 200 && report.errors.isEmpty, "\(report.rejected.prefix(3)) \(report.errors)")
        }
        try await Self.checkAccounted(report, mock)
    }

    /// AsyncHTTPClient resets (CANCEL) a stream whose body it does not read, after the answer: a
    /// reset of an answered stream is not an attack, and the connection is not cut off (NIOHTTP2's
    /// limit of 200 resets in 30 seconds sent GOAWAY ENHANCE_YOUR_CALM with last-stream-id 0).
    @Test func aClientResettingAnsweredStreamsIsNotCutOff() async throws {
        let mock = try await H.start()
        defer { Task { await mock.stop() } }
        let report = try await Self.peer("reset-answered", mock, count: 2_000, modules: ["h2", "jwt"], package: "h2 PyJWT")
        #expect(report.accepted.count == 2_000 && report.errors.isEmpty && report.goAways == 0, "\(report.errors.prefix(3)), \(report.goAways) GOAWAYs")
        try await Self.checkAccounted(report, mock)
        #expect(!mock.server.connectionEvents().contains { $0.kind == .goAwaySent })
    }

    /// python-h2 through the mock's GOAWAY faults: no frame for a stream at or below the
    /// last-stream-id after the GOAWAY, no reset for one above it, streams above it sent again.
    @Test func strictPeersSeeNothingAfterAGOAWAY() async throws {
        let mock = try await H.start { $0.faults = [try! FaultRule(parsing: "goaway=Shutdown,every=200")] }
        defer { Task { await mock.stop() } }
        let report = try await Self.peer("strict", mock, count: 2_000, modules: ["h2", "jwt"], package: "h2 PyJWT")
        #expect(report.errors.isEmpty, "\(report.errors.prefix(5))")
        #expect(report.accepted.count == 2_000 && report.goAways >= 5, "\(report.accepted.count) accepted, \(report.goAways) GOAWAYs, \(report.resent) sent again")
        try await Self.checkAccounted(report, mock)
        let sent = mock.server.connectionEvents().filter { $0.kind == .goAwaySent }
        #expect(!sent.isEmpty && sent.allSatisfy { $0.code == "NO_ERROR" && $0.detail == "Shutdown" && ($0.lastStreamID ?? 0) > 0 }, "\(sent.prefix(2).map(\.jsonValue))")
        // Every stream the peer opened above a last-stream-id (and sent again) is one the mock
        // says it did not process: the peer's own count is the oracle.
        let lost = mock.server.connectionEvents().filter { $0.kind == .streamsNotProcessed }
        let counted = lost.compactMap { event in event.detail?.split(separator: " ").first.flatMap { Int($0) } }.reduce(0, +)
        #expect(report.resent > 0 && counted == report.resent, "the mock counted \(counted), the peer sent again \(report.resent): \(lost.prefix(3).map(\.jsonValue))")
        let metrics = try await InspectionAPITests.api(mock, "GET", "/metrics").body
        #expect(metrics.contains("herald_mock_streams_not_processed_total \(report.resent)"), "\(metrics.split(separator: "\n").filter { $0.contains("not_processed") })")
    }

    /// The rapid-reset defence still holds: resets of streams the mock has not answered (their
    /// answers delayed) end the connection with ENHANCE_YOUR_CALM, and the GOAWAY's last-stream-id
    /// covers the stream the mock processed.
    @Test func aRapidResetFloodStillEndsTheConnection() async throws {
        let mock = try await H.start { $0.faults = [try! FaultRule(parsing: "delay=2s")] }
        defer { Task { await mock.stop() } }
        let report = try await Self.peer("rapid-reset", mock, count: 400, modules: ["h2", "jwt"], package: "h2 PyJWT")
        let goAway = try #require(report.raw["goaway"] as? [String: Any], "\(report.raw)")
        #expect(goAway["code"] as? Int == 11, "ENHANCE_YOUR_CALM: \(goAway)")
        #expect((goAway["lastStreamId"] as? Int ?? 0) >= 1, "never below a processed stream: \(goAway)")
        let events = mock.server.connectionEvents()
        #expect(events.contains { $0.kind == .protocolError && ($0.detail ?? "").contains("rapid-reset") })
        #expect(events.filter { $0.kind == .resetReceived }.count > APNsConnectionHandler.rapidResetLimit)
    }
}
