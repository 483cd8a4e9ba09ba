import HeraldMockTestSupport
import HeraldTestSupport
import Testing

/// The mock's provider connection driven by scripted clients (``MockConnectionChecks``): the
/// same checks the `FuzzMockConnection` fuzzer runs, over seeded random scripts and the inputs
/// it saved.
@Suite struct ConnectionScriptTests {
    @Test func aWellFormedRequestIsAccepted() {
        // op 0 (HEADERS): stream byte 0 (new: 1), flags 0, shape 0 (every pseudo-header, first
        // path), token 0, 1 extra field: name 0 (apns-topic), value 1 (com.example.app).
        // op 3 (DATA): stream byte 160 (the newest opened: 1), flags 1 (END_STREAM), body 0.
        let script: [UInt8] = [0, 0, 0, 0, 0, 1, 0, 1, 3, 160, 1, 0]
        let report = MockConnectionChecks.run(script)
        #expect(report.violations == [])
        #expect(report.statuses == [1: "200"], "the request is answered 200")
    }

    @Test func aRequestWithoutATokenIsRefused() {
        // As above, with shape 8: no authorization header.
        let script: [UInt8] = [0, 0, 0, 8, 0, 1, 0, 1, 3, 160, 1, 0]
        let report = MockConnectionChecks.run(script)
        #expect(report.violations == [])
        #expect(report.statuses == [1: "403"], "MissingProviderToken is 403")
    }

    /// A client that stops reading while it sends: NIOHTTP2 buffers the mock's control frames
    /// (PING acknowledgements here) and, past 10,000, fails the connection from inside the
    /// mock's own write of a WINDOW_UPDATE for a large body. The connection closes there and
    /// then, its streams with it: the handler must not count on the stream it was reading.
    @Test func aConnectionFailingInsideTheMocksOwnWrite() {
        // Stream 1: HEADERS without END_STREAM, then the client stops reading.
        var script: [UInt8] = [0, 0, 0, 0, 0, 1, 0, 1, 13, 0]
        // 9,999 PINGs: their acknowledgements fill NIOHTTP2's buffer to its last place (the
        // SETTINGS acknowledgement takes one).
        for _ in 0..<9_999 { script += [8, 0, 1, 2, 3, 4, 5, 6, 7, 8] }
        // DATA of 5,000 bytes, 7 times, without END_STREAM: at 32,768 the mock returns them.
        for _ in 0..<7 { script += [3, 160, 0, 5] }
        let report = MockConnectionChecks.run(script, maximumSteps: 20_000)
        #expect(report.violations == [])
        print("STEPS", report.steps, report.sawGoAway, report.statuses)
    }

    @Test(.heavy, .ownThreads) func seededRandomScripts() {
        var generator = SeededGenerator(seed: 20_261_124)
        var answered = 0, accepted = 0, goAways = 0
        for round in 0..<2_000 {
            let bytes = MockConnectionChecks.randomScript(using: &generator)
            let report = MockConnectionChecks.run(bytes)
            #expect(report.violations == [], "script \(round): \(bytes)")
            answered += report.statuses.count
            accepted += report.statuses.values.filter { $0 == "200" }.count
            if report.sawGoAway { goAways += 1 }
        }
        // The scripts reach the mock's judgement, not only NIOHTTP2's refusals.
        #expect(answered > 1_000 && accepted > 500 && goAways > 50, "answered \(answered), accepted \(accepted), GOAWAY in \(goAways)")
    }

    @Test("saved fuzz inputs", arguments: Fixtures.fuzzInputs("FuzzMockConnection"))
    func savedFuzzInputs(_ path: String) throws {
        let bytes = try Fixtures.bytes(path)
        let violations = MockConnectionChecks.check(bytes)
        #expect(violations == [], "\(bytes)")
    }
}
