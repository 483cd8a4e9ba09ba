import Foundation

/// A long-running program a test starts (a server command), with its standard output and error
/// read as they come, and stopped with SIGTERM.
public final class RunningProgram: @unchecked Sendable {  // used by one test at a time
    public let process = Process()
    private let handle: FileHandle
    /// Everything read so far.
    public private(set) var output = ""

    /// Starts `executable`; `environment` adds to (or replaces) variables of this process's.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        handle = pipe.fileHandleForReading
        try process.run()
    }

    deinit { if process.isRunning { process.terminate() } }

    /// Reads until the output contains `marker`, the program ends its output, or `timeout`
    /// passes; returns the output so far.
    @discardableResult
    public func read(until marker: String, timeout: Duration = .seconds(60)) -> String {
        read(untilOutput: { $0.contains(marker) }, timeout: timeout)
    }

    /// Reads until `done` holds for the output so far, the program ends its output, or
    /// `timeout` passes; returns the output so far.
    @discardableResult
    public func read(untilOutput done: (String) -> Bool, timeout: Duration = .seconds(60)) -> String {
        let deadline = ContinuousClock.now + timeout
        while !done(output), ContinuousClock.now < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            output += String(decoding: chunk, as: UTF8.self)
        }
        return output
    }

    /// Sends SIGTERM and waits (up to `timeout`) for the exit; returns the exit status (nil if
    /// it is still running) and the output read after the signal.
    public func stop(timeout: Duration = .seconds(20)) async throws -> (status: Int32?, rest: String) {
        process.terminate()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { return (nil, "") }
        return (process.terminationStatus, String(decoding: handle.readDataToEndOfFile(), as: UTF8.self))
    }
}
