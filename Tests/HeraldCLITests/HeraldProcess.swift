import Foundation
import HeraldTestSupport

/// Runs the built `herald` executable, as a user would.
struct HeraldProcess {
    struct Result {
        var status: Int32
        var stdout: [UInt8]
        var stderr: String
        var output: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// The `herald` binary next to the test bundle (SwiftPM builds executables the tests
    /// depend on into the same directory).
    static let executable = URL(fileURLWithPath: Fixtures.heraldBinary)

    /// Runs `herald` with `arguments` (killed, and the test failed, if it runs past the timeout).
    static func run(_ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String] = [:]) throws -> Result {
        var env = ProcessInfo.processInfo.environment
        env["NO_COLOR"] = "1"
        for (key, value) in environment { env[key] = value }
        let output = try ExternalTools.execute(executable.path, arguments, stdin: stdin ?? [], environment: env)
        return Result(status: output.status, stdout: output.stdout, stderr: output.stderr)
    }
}

import Testing

@Suite("Child processes")
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
