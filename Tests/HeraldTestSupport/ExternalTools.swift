import Foundation

/// Independent programs the tests check Herald against (installed by `.ci/run`).
public enum ExternalTools {
    /// Why a tool could not be used.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The first executable named `name` on `PATH` or in the usual places.
    public static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin", "/bin"] {
            let candidate = directory + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs a program and returns its standard output; throws with its standard error when it
    /// exits non-zero.
    public static func run(_ executable: String, _ arguments: [String], stdin: [UInt8] = []) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe(), errors = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input
        try process.run()
        let writer = Thread {
            input.fileHandleForWriting.write(Data(stdin))
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        final class Box: @unchecked Sendable { var data = Data() } // Written by one thread, read after it finishes.
        let errorBox = Box()
        let errorReader = Thread { errorBox.data = errors.fileHandleForReading.readDataToEndOfFile() }
        errorReader.start()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errorReader.isFinished { usleep(1000) }
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(executable) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(String(decoding: errorBox.data, as: UTF8.self))")
        }
        return Array(data)
    }

    /// Runs a Python 3 script (given on the command line) with `stdin`, returning its output.
    public static func python(_ script: String, stdin: [UInt8] = []) throws -> [UInt8] {
        guard let python = find("python3") else {
            throw Failure(description: "python3 is not installed; .ci/run installs it (apt-get install python3)")
        }
        return try run(python, ["-c", script], stdin: stdin)
    }

    /// A property list written by Python's `plistlib` from JSON text: `format` is `BINARY` or `XML`.
    /// Python is an independent writer for the property-list readers' tests.
    public static func plistlib(json: String, format: String, sortKeys: Bool = true) throws -> [UInt8] {
        try python("""
            import sys, json, plistlib, datetime, base64
            def convert(v):
                if isinstance(v, dict):
                    if set(v) == {"$data"}: return base64.b64decode(v["$data"])
                    if set(v) == {"$date"}: return datetime.datetime.fromtimestamp(v["$date"], datetime.timezone.utc).replace(tzinfo=None)
                    return {k: convert(x) for k, x in v.items()}
                if isinstance(v, list): return [convert(x) for x in v]
                return v
            value = convert(json.load(sys.stdin))
            sys.stdout.buffer.write(plistlib.dumps(value, fmt=plistlib.FMT_\(format), sort_keys=\(sortKeys ? "True" : "False")))
            """, stdin: Array(json.utf8))
    }
}
