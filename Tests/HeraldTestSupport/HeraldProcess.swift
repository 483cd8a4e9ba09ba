import Foundation

/// The built `herald`, run as a user runs it, always with a deadline and tied to the test
/// process's life: ``run(_:stdin:environment:timeout:)`` to completion on the caller's thread,
/// ``runInBackground(_:stdin:environment:timeout:)`` on a thread of its own (for async tests:
/// a cooperative thread must not block), ``start(_:environment:)`` for a server command.
public enum HeraldProcess {
    /// What a run printed and how it ended.
    public typealias Result = ExternalTools.Output

    /// The `herald` binary next to the test bundle (SwiftPM builds executables the tests depend
    /// on into the same directory).
    public static var executable: URL { URL(fileURLWithPath: Fixtures.heraldBinary) }

    /// The test process's environment with `environment` over it, and no colours.
    static func environment(_ environment: [String: String]) -> [String: String] {
        var merged = ProcessInfo.processInfo.environment
        merged["NO_COLOR"] = "1"
        for (key, value) in environment { merged[key] = value }
        return merged
    }

    /// Runs `herald` with `arguments` (killed, and the call failed, if it runs past `timeout`).
    public static func run(
        _ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String] = [:], timeout: Duration = ExternalTools.defaultTimeout
    ) throws -> Result {
        try ExternalTools.execute(Fixtures.heraldBinary, arguments, stdin: stdin ?? [], environment: Self.environment(environment), timeout: timeout)
    }

    /// ``run(_:stdin:environment:timeout:)`` on a thread of its own.
    public static func runInBackground(
        _ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String] = [:], timeout: Duration = ExternalTools.defaultTimeout
    ) async throws -> Result {
        try await ExternalTools.executeInBackground(
            Fixtures.heraldBinary, arguments, stdin: stdin ?? [], environment: Self.environment(environment), timeout: timeout)
    }

    /// ``run(_:stdin:environment:timeout:)`` from async code: on a thread of its own.
    public static func run(
        _ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String] = [:], timeout: Duration = ExternalTools.defaultTimeout
    ) async throws -> Result {
        try await runInBackground(arguments, stdin: stdin, environment: environment, timeout: timeout)
    }

    /// Starts a server command (`herald mock`, `herald serve`, `herald demo`): read it until a
    /// marker with a deadline, stop it with SIGTERM (``RunningProgram``).
    public static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> RunningProgram {
        try RunningProgram(Fixtures.heraldBinary, arguments, environment: environment)
    }
}

extension ExternalTools.Output {
    /// Standard output as text.
    public var output: String { String(decoding: stdout, as: UTF8.self) }
}
