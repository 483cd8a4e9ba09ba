import Foundation
import HeraldTestSupport
import Testing

/// The runner every test uses for child processes keeps its promises: a deadline, outputs of
/// its own, and an end that does not wait on anybody else's child.
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

    /// Foundation's `Process` left a pipe made by one thread open in a child another thread
    /// started meanwhile, so a short `psql` waited for a long-lived server's end (124 s in a
    /// CI run). A child here holds no descriptor of this process's but its own 0, 1 and 2,
    /// whatever else is open: checked while another child's pipes (and a server's) are open.
    @Test("a child inherits no descriptor but its own standard streams")
    func noInheritedDescriptors() throws {
        let sleep = try ExternalTools.require("sleep", package: "coreutils")
        let sh = try ExternalTools.require("sh", package: "dash")
        let server = try RunningProgram(sleep, ["30"], input: true)
        defer { server.process.signal(SIGKILL) }
        // The shell says it is ready once its start is over (a program's start opens and
        // closes files of its own), then waits on its standard input.
        let (command, arguments) = ExternalTools.tethered(sh, ["-c", "echo ready; read line"])
        let child = try ChildProcess(command, arguments, stdin: .pipe, stdout: .pipe, stderr: .pipe)
        defer { child.signal(SIGKILL) }
        #expect(child.output!.availableData == Data("ready\n".utf8))
        // Read from outside, making sure the number is still this child's: a thread of this
        // process may take the number of a child that ended (process and thread numbers share
        // one space).
        let proc = "/proc/\(child.processIdentifier)"
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: proc + "/fd")
        let status = try String(contentsOfFile: proc + "/status", encoding: .utf8)
        try #require(child.isRunning && status.contains("\nPPid:\t\(getpid())\n"), "not this test's child (running: \(child.isRunning), status \(child.terminationStatus)): \(status.prefix(200))")
        let inherited = Set(descriptors).subtracting(["0", "1", "2"]).sorted().map { "\($0) → " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: proc + "/fd/" + $0)) ?? "?") }
        #expect(Set(descriptors) == ["0", "1", "2"], "inherited: \(inherited)")
    }

    @Test("a child's output ends with it even when a child of its own still holds the pipe")
    func outputEndsWithTheChild() throws {
        let sh = try ExternalTools.require("sh", package: "dash")
        let start = ContinuousClock.now
        let result = try ExternalTools.execute(sh, ["-c", "sleep 60 & echo started"], timeout: .seconds(40))
        #expect(result.status == 0)
        #expect(String(decoding: result.stdout, as: UTF8.self) == "started\n")
        #expect(ContinuousClock.now - start < .seconds(40), "waited for the grandchild")
    }

    @Test("exit statuses, the signal that ended a child, and a megabyte both ways")
    func statusesAndLargeStreams() throws {
        let sh = try ExternalTools.require("sh", package: "dash")
        #expect(try ExternalTools.execute(sh, ["-c", "exit 3"]).status == 3)
        #expect(try ExternalTools.execute(sh, ["-c", "kill -9 $$"]).status == 9)
        // A megabyte in, echoed on both outputs: a runner that drained one output at a time,
        // or wrote all of standard input before reading, would block against the pipes' 64 KB.
        let input = (0..<1_000_000).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        let result = try ExternalTools.execute(sh, ["-c", "tee /dev/stderr"], stdin: input, timeout: .seconds(60))
        #expect(result.status == 0)
        #expect(result.stdout == input)
        #expect(Array(result.stderr.utf8) == input)
        #expect(throws: (any Error).self) { try ChildProcess("/nonexistent/program", []) }
    }
}
