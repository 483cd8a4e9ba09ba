import HeraldTestSupport
import Testing

/// The runner every test uses for child processes keeps its promise: a deadline.
@Suite("Child processes", .ownThreads)
struct ChildProcessTests {
    @Test("a child process that runs past its timeout is killed, and the call fails")
    func timeout() throws {
        let sleep = try ExternalTools.require("sleep", package: "coreutils")
        let start = ContinuousClock.now
        #expect(throws: ExternalTools.Failure.self) {
            try ExternalTools.run(sleep, ["30"], timeout: .milliseconds(300))
        }
        #expect(ContinuousClock.now - start < .seconds(20))
        #expect(try ExternalTools.execute(sleep, ["0"], timeout: .seconds(30)).status == 0)
    }
}
