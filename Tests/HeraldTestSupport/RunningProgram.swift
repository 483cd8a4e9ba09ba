import Foundation
import Synchronization

/// A long-running program a test starts (a server command), with its standard output and error
/// collected as they come by a thread of its own, and stopped with SIGTERM. It dies with the
/// test process (``ExternalTools/tethered(_:_:)``).
///
/// Waiting never blocks one of Swift's few cooperative threads (on a two-core machine, two
/// blocked threads would stall every other test's tasks), and every wait has a deadline even
/// when the program prints nothing.
public final class RunningProgram: @unchecked Sendable {  // `process` is used by one test at a time
    /// The child (its pipes its own: ``ChildProcess``).
    public let process: ChildProcess
    private final class Collected: Sendable {
        let state = Mutex<(text: String, ended: Bool)>(("", false))
        func withLock<T>(_ body: (inout (text: String, ended: Bool)) -> T) -> T { state.withLock { body(&$0) } }
    }
    private let collected = Collected()

    /// Starts `executable`; `environment` adds to (or replaces) variables of this process's;
    /// with `input`, its standard input is a pipe ``send(_:)`` writes to.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], input: Bool = false) throws {
        let (command, commandArguments) = ExternalTools.tethered(executable, arguments)
        process = try ChildProcess(
            command, commandArguments,
            environment: environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 },
            stdin: input ? .pipe : .inherit, stdout: .pipe, stderr: .output)
        let handle = process.output!
        let collected = self.collected
        Thread {
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                let text = String(decoding: chunk, as: UTF8.self)
                collected.withLock { $0.text += text }
            }
            collected.withLock { $0.ended = true }
        }.start()
    }

    deinit { process.terminate() }

    /// Writes `line` and a newline to the child's standard input (started with `input`).
    public func send(_ line: String) {
        process.input?.write(Data((line + "\n").utf8))
    }

    /// Everything read so far.
    public var output: String { collected.withLock { $0.text } }

    /// Waits until the output contains `marker`, the program ends its output, or `timeout`
    /// passes; returns the output so far.
    @discardableResult
    public func read(until marker: String, timeout: Duration = .seconds(60)) async -> String {
        await read(untilOutput: { $0.contains(marker) }, timeout: timeout)
    }

    /// Waits until `done` holds for the output so far, the program ends its output, or
    /// `timeout` passes; returns the output so far.
    @discardableResult
    public func read(untilOutput done: (String) -> Bool, timeout: Duration = .seconds(60)) async -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (text, ended) = collected.withLock { ($0.text, $0.ended) }
            if done(text) || ended || ContinuousClock.now >= deadline { return text }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Sends SIGTERM and waits (up to `timeout`) for the exit; returns the exit status (nil if
    /// it is still running) and the output printed after the signal.
    public func stop(timeout: Duration = .seconds(20)) async throws -> (status: Int32?, rest: String) {
        let before = collected.withLock { $0.text.utf8.count }
        process.terminate()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { return (nil, "") }
        // The output ends with the process (unless a child it started keeps the pipe open).
        while !collected.withLock({ $0.ended }), ContinuousClock.now < deadline + .seconds(2) { try await Task.sleep(for: .milliseconds(20)) }
        let text = collected.withLock { $0.text }
        return (process.terminationStatus, String(decoding: Array(text.utf8).dropFirst(before), as: UTF8.self))
    }

    /// Waits (up to `timeout`) for the program to exit by itself; returns its status, or nil.
    public func waitForExit(timeout: Duration = .seconds(20)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return process.isRunning ? nil : process.terminationStatus
    }
}
