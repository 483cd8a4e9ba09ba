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

extension ExternalTools {
    /// The RGB colours of a PNG (8-bit RGB or RGBA, not interlaced, as Chromium writes them) at
    /// the given points, decoded by Python's `zlib` so the test does not trust Herald code.
    public static func pngPixels(_ png: [UInt8], at points: [(x: Int, y: Int)]) throws -> [[Int]] {
        let list = points.map { "(\($0.x),\($0.y))" }.joined(separator: ",")
        let output = try python("""
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
            """, stdin: png)
        return String(decoding: output, as: UTF8.self).split(separator: "\n").map { $0.split(separator: " ").compactMap { Int($0) } }
    }

    /// Runs headless Chromium (Debian's `chromium`, installed by `.ci/run`).
    public static func chromium(_ arguments: [String]) throws -> [UInt8] {
        guard let browser = find("chromium") ?? find("chromium-browser") ?? find("google-chrome") else {
            throw Failure(description: "Chromium is not installed; .ci/run installs it (apt-get install chromium)")
        }
        return try run(browser, ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--disable-dev-shm-usage"] + arguments)
    }
}
