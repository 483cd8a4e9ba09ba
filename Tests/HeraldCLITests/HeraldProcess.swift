import Foundation

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
    static let executable: URL = {
        let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // On Linux the test runner is `<build>/HeraldPackageTests.xctest`.
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("herald").path),
              directory.path != "/" {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent("herald")
    }()

    static func run(_ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["NO_COLOR"] = "1"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let outPipe = Pipe()
        let errPipe = Pipe()
        let inPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = inPipe
        try process.run()
        // Feed stdin and drain both outputs concurrently so a large output cannot block.
        let writer = Thread {
            if let stdin { inPipe.fileHandleForWriting.write(Data(stdin)) }
            try? inPipe.fileHandleForWriting.close()
        }
        writer.start()
        final class Box: @unchecked Sendable { var data = Data() } // Written by one thread, read after join.
        let errBox = Box()
        let errReader = Thread { errBox.data = errPipe.fileHandleForReading.readDataToEndOfFile() }
        errReader.start()
        let out = outPipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while errReader.isExecuting || !errReader.isFinished { usleep(1000) }
        return Result(status: process.terminationStatus, stdout: Array(out), stderr: String(decoding: errBox.data, as: UTF8.self))
    }
}
