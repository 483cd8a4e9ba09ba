import Foundation
import Synchronization
import Testing

/// Independent programs the tests check Herald against (installed by `.ci/run`).
///
/// A test that needs a program the machine may lack calls ``require(_:package:)``: without the
/// program the test is skipped with a message naming the Debian package, unless `CI=true`, where
/// it fails (CI installs every such program, so a missing one is a broken CI script). Every child
/// process runs under a timeout, so a hang fails one test instead of stopping the suite.
public enum ExternalTools {
    /// Why a tool could not be used.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// What a finished child process left behind.
    public struct Output: Sendable {
        /// The exit status (or the signal number, when killed).
        public var status: Int32
        /// Standard output.
        public var stdout: [UInt8]
        /// Standard error, as text.
        public var stderr: String
    }

    /// How long a child process may run before it is killed and the test fails.
    public static let defaultTimeout: Duration = .seconds(120)

    /// Whether this is a CI run (`CI=true`), where a missing tool is a failure.
    public static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// The first executable named `name` on `PATH` or in the usual places.
    public static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin", "/bin"] {
            let candidate = directory + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// The path of `tool` (the first of `names` found); without it, skips the current test with
    /// a message naming the Debian `package`, or fails it when `CI=true`.
    public static func require(_ names: String..., package: String) throws -> String {
        if let path = names.lazy.compactMap(find).first { return path }
        try unavailable("\(names[0]) is not installed: apt-get install \(package) (.ci/run installs it)")
    }

    /// Skips the current test, saying `message` (what is missing and how to install it), or fails
    /// it when `CI=true`, where `.ci/run` has installed everything the tests need.
    public static func unavailable(_ message: String) throws -> Never {
        if isCI { throw Failure(description: message) }
        try Test.cancel(Comment(rawValue: "skipped: " + message))
    }

    /// `executable` and `arguments` run under `setpriv --pdeathsig KILL` (util-linux) when the
    /// machine has it: the child is killed when the thread that started it ends, so a test
    /// process that dies (a crash, a kill, a timeout) leaves no server behind. The starting
    /// thread must live as long as the child: ``ChildProcess`` starts each child from a thread
    /// that waits for its end.
    public static func tethered(_ executable: String, _ arguments: [String]) -> (executable: String, arguments: [String]) {
        guard let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return (executable, arguments)
        }
        return (setpriv, ["--pdeathsig", "KILL", "--", executable] + arguments)
    }

    /// Runs a program to completion, feeding `stdin` and draining both outputs concurrently (so
    /// a large output cannot block it), and kills it after `timeout` (or when this process dies).
    /// Its pipes are its own (``ChildProcess``): a server another test starts meanwhile cannot
    /// hold them open. Output still open 5 s after the exit (a grandchild of its own holding
    /// it) is left unread.
    public static func execute(
        _ executable: String, _ arguments: [String], stdin: [UInt8] = [], environment: [String: String]? = nil,
        timeout: Duration = defaultTimeout
    ) throws -> Output {
        let (command, commandArguments) = tethered(executable, arguments)
        let child = try ChildProcess(command, commandArguments, environment: environment, stdin: .pipe, stdout: .pipe, stderr: .pipe)
        let input = child.input!
        Thread {
            input.write(Data(stdin))
            try? input.close()
        }.start()
        final class Drained: @unchecked Sendable {  // written by the reader before `done` signals
            var stdout: [UInt8] = [], stderr: [UInt8] = []
            let done = DispatchSemaphore(value: 0)
            let exitedAt = Mutex<ContinuousClock.Instant?>(nil)
        }
        let drained = Drained()
        let (outputFD, errorsFD) = (child.output!.fileDescriptor, child.errors!.fileDescriptor)
        Thread {
            var open: [(fd: Int32, isOutput: Bool)] = [(outputFD, true), (errorsFD, false)]
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while !open.isEmpty {
                if let exitedAt = drained.exitedAt.withLock({ $0 }), ContinuousClock.now - exitedAt > .seconds(5) { break }
                var fds = open.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
                guard poll(&fds, nfds_t(fds.count), 100) > 0 else { continue }
                for (index, polled) in fds.enumerated().reversed() where polled.revents != 0 {
                    let count = read(polled.fd, &buffer, buffer.count)
                    if count > 0 {
                        if open[index].isOutput { drained.stdout += buffer[..<count] } else { drained.stderr += buffer[..<count] }
                    } else if count == 0 || errno != EINTR {
                        open.remove(at: index)
                    }
                }
            }
            drained.done.signal()
        }.start()
        let exited = child.wait(timeout: timeout)
        if !exited {
            child.signal(SIGKILL)
            child.waitUntilExit()
        }
        drained.exitedAt.withLock { $0 = .now }
        drained.done.wait()
        withExtendedLifetime(child) {}
        let stderr = String(decoding: drained.stderr, as: UTF8.self)
        if !exited {
            throw Failure(description: "\(executable) \(arguments.joined(separator: " ")) did not finish within \(timeout); killed. Standard error: \(stderr)")
        }
        return Output(status: child.terminationStatus, stdout: drained.stdout, stderr: stderr)
    }

    /// `body` (a blocking call: a child process, a Python oracle) on a thread of its own, awaited.
    /// Waiting on one of Swift's few cooperative threads would starve every other test's tasks,
    /// the in-process servers' among them.
    public static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// ``execute(_:_:stdin:environment:timeout:)`` on a thread of its own (``onOwnThread(_:)``),
    /// for a program that runs while the test goes on.
    public static func executeInBackground(
        _ executable: String, _ arguments: [String], stdin: [UInt8] = [], environment: [String: String]? = nil, timeout: Duration = defaultTimeout
    ) async throws -> Output {
        try await onOwnThread { try execute(executable, arguments, stdin: stdin, environment: environment, timeout: timeout) }
    }

    /// ``run(_:_:stdin:timeout:)`` on a thread of its own (``onOwnThread(_:)``).
    public static func runInBackground(_ executable: String, _ arguments: [String], stdin: [UInt8] = [], timeout: Duration = defaultTimeout) async throws -> [UInt8] {
        try await onOwnThread { try run(executable, arguments, stdin: stdin, timeout: timeout) }
    }

    /// Runs a program and returns its standard output; throws with its standard error when it
    /// exits non-zero or runs past `timeout`.
    public static func run(_ executable: String, _ arguments: [String], stdin: [UInt8] = [], timeout: Duration = defaultTimeout) throws -> [UInt8] {
        let result = try execute(executable, arguments, stdin: stdin, timeout: timeout)
        guard result.status == 0 else {
            throw Failure(description: "\(executable) \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)")
        }
        return result.stdout
    }

    /// Requires Python 3 with `modules` installed; skips (or fails under CI) naming the PyPI
    /// `package` otherwise.
    public static func requirePython(modules: String..., package: String) throws {
        let python = try require("python3", package: "python3")
        // Once per set of modules and test process, and without importing them: dozens of tests
        // start at once, and each probe holds the thread it runs on (importing `cryptography`
        // takes a second on a loaded machine), so the probe only finds the modules.
        let key = modules.joined(separator: ", ")
        let installed: Bool
        if let known = pythonProbes.withLock({ $0[key] }) {
            installed = known
        } else {
            let names = modules.map { "'\($0)'" }.joined(separator: ", ")
            let probe = "import importlib.util, sys; sys.exit(any(importlib.util.find_spec(m) is None for m in [\(names)]))"
            installed = try execute(python, ["-c", probe], timeout: .seconds(60)).status == 0
            pythonProbes.withLock { $0[key] = installed }
        }
        guard !installed else { return }
        try unavailable("the Python module \(key) is missing: pip install \(package) (.ci/run installs it)")
    }

    /// What each set of modules probed gave.
    private static let pythonProbes = Mutex<[String: Bool]>([:])

    /// Runs a Python 3 script (given on the command line) with `stdin`, returning its output.
    public static func python(_ script: String, arguments: [String] = [], stdin: [UInt8] = []) throws -> [UInt8] {
        try run(require("python3", package: "python3"), ["-c", script] + arguments, stdin: stdin)
    }

    /// Parses `json` with Python's `json` module (strict: no trailing data, `NaN` refused) and
    /// returns, for each Python expression over the parsed value `d`, its value as
    /// `json.dumps(…, sort_keys=True, ensure_ascii=False)`. An independent reader for Herald's
    /// JSON output: `["d['files'][0]['bytes']"]` gives `["216"]`.
    public static func pythonJSON(_ json: [UInt8], _ expressions: [String]) throws -> [String] {
        let list = expressions.map { "lambda d: " + $0 }.joined(separator: ", ")
        let output = try python("""
            import sys, json
            def refuse(name): raise ValueError("not JSON: " + name)
            d = json.loads(sys.stdin.buffer.read().decode("utf-8"), parse_constant=refuse)
            for f in [\(list)]:
                print(json.dumps(f(d), sort_keys=True, ensure_ascii=False))
            """, stdin: json)
        return String(decoding: output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
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

extension ExternalTools {
    /// The RGB colours of a PNG (8-bit RGB or RGBA, not interlaced, as Chromium writes them) at
    /// the given points, decoded by Python's `zlib` so the test does not trust Herald code. A
    /// screenshot takes Python seconds: waited for on a thread of its own.
    public static func pngPixels(_ png: [UInt8], at points: [(x: Int, y: Int)]) async throws -> [[Int]] {
        let list = points.map { "(\($0.x),\($0.y))" }.joined(separator: ",")
        let output = try await runInBackground(try require("python3", package: "python3"), ["-c", """
            import sys, zlib, struct
            data = sys.stdin.buffer.read()
            assert data[:8] == b'\\x89PNG\\r\\n\\x1a\\n', 'not a PNG'
            pos, idat = 8, b''
            while pos < len(data):
                length, kind = struct.unpack('>I4s', data[pos:pos+8])
                body = data[pos+8:pos+8+length]
                if kind == b'IHDR':
                    width, height, depth, color, _, _, interlace = struct.unpack('>IIBBBBB', body)
                    assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
                elif kind == b'IDAT':
                    idat += body
                pos += 12 + length
            bpp = 4 if color == 6 else 3
            raw = zlib.decompress(idat)
            stride = width * bpp
            rows, prev, i = [], bytearray(stride), 0
            for _ in range(height):
                f = raw[i]; line = bytearray(raw[i+1:i+1+stride]); i += 1 + stride
                for x in range(stride):
                    a = line[x-bpp] if x >= bpp else 0
                    b = prev[x]
                    c = prev[x-bpp] if x >= bpp else 0
                    if f == 1: line[x] = (line[x] + a) & 255
                    elif f == 2: line[x] = (line[x] + b) & 255
                    elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
                    elif f == 4:
                        p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                        line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
                rows.append(line); prev = line
            for (x, y) in [\(list)]:
                print(' '.join(str(v) for v in rows[y][x*bpp:x*bpp+3]))
            """], stdin: png)
        return String(decoding: output, as: UTF8.self).split(separator: "\n").map { $0.split(separator: " ").compactMap { Int($0) } }
    }

    /// Runs headless Chromium (Debian's `chromium`, installed by `.ci/run`), waited for on a
    /// thread of its own: a browser takes seconds, and every test's tasks would wait with it on
    /// a blocked cooperative thread.
    public static func chromium(_ arguments: [String]) async throws -> [UInt8] {
        let browser = try require("chromium", "chromium-browser", "google-chrome", package: "chromium")
        return try await runInBackground(browser, ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--disable-dev-shm-usage"] + arguments)
    }
}

/// The same calls from async code, each on a thread of its own (``ExternalTools/onOwnThread(_:)``):
/// in an async test the compiler picks these, so no test waits for a child process on one of
/// Swift's few cooperative threads, which every other test's tasks and the in-process servers share.
extension ExternalTools {
    /// ``execute(_:_:stdin:environment:timeout:)``, awaited off the cooperative threads.
    public static func execute(
        _ executable: String, _ arguments: [String], stdin: [UInt8] = [], environment: [String: String]? = nil,
        timeout: Duration = defaultTimeout
    ) async throws -> Output {
        try await executeInBackground(executable, arguments, stdin: stdin, environment: environment, timeout: timeout)
    }

    /// ``run(_:_:stdin:timeout:)``, awaited off the cooperative threads.
    public static func run(_ executable: String, _ arguments: [String], stdin: [UInt8] = [], timeout: Duration = defaultTimeout) async throws -> [UInt8] {
        try await runInBackground(executable, arguments, stdin: stdin, timeout: timeout)
    }

    /// ``python(_:arguments:stdin:)``, awaited off the cooperative threads.
    public static func python(_ script: String, arguments: [String] = [], stdin: [UInt8] = []) async throws -> [UInt8] {
        try await onOwnThread { try python(script, arguments: arguments, stdin: stdin) as [UInt8] }
    }

    /// ``pythonJSON(_:_:)``, awaited off the cooperative threads.
    public static func pythonJSON(_ json: [UInt8], _ expressions: [String]) async throws -> [String] {
        try await onOwnThread { try pythonJSON(json, expressions) as [String] }
    }
}
