import Foundation

/// How a person runs this same `herald` from any folder, and paths as they work from any
/// folder: what the commands Herald prints for pasting (the demo's, the mock's banner, the
/// inbox's) are made of.
enum Invocation {
    /// `herald` when the `PATH` finds this very binary (installed); `swift run --package-path
    /// ROOT herald` when it runs from a checkout's build folder (started with `swift run`);
    /// otherwise its absolute path.
    static let herald: String = command(executable: executablePath, path: ProcessInfo.processInfo.environment["PATH"] ?? "")

    /// The running binary, symbolic links resolved.
    static var executablePath: String {
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: link).resolvingSymlinksInPath().path
    }

    /// ``herald`` for a binary at `executable` (resolved) with `path` as `PATH`.
    static func command(executable: String, path: String) -> String {
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = URL(fileURLWithPath: String(directory)).appending(path: "herald")
            if FileManager.default.isExecutableFile(atPath: candidate.path), candidate.resolvingSymlinksInPath().path == executable {
                return "herald"
            }
        }
        if let build = executable.range(of: "/.build/") {
            return "swift run --package-path \(shellQuoted(String(executable[..<build.lowerBound]))) herald"
        }
        return shellQuoted(executable)
    }

    /// `path` made absolute against the current folder, and tidied (`a/../b` is `b`).
    static func absolute(_ path: String) -> String {
        let url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appending(path: path)
        return url.standardizedFileURL.path
    }
}

/// `text` as one shell word: unchanged when it holds only characters no shell treats
/// specially, otherwise in single quotes.
func shellQuoted(_ text: String) -> String {
    let plain = !text.isEmpty && text.utf8.allSatisfy { byte in
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || "/._-+=:,@%".utf8.contains(byte)
    }
    return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}
