#if canImport(Glibc)
import Glibc
/// `read(2)` (the name `read` is taken by the types that read).
let systemRead = Glibc.read
#elseif canImport(Darwin)
import Darwin
/// `read(2)` (the name `read` is taken by the types that read).
let systemRead = Darwin.read
#endif

/// A file named on the command line, or standard input for `-` (or no name).
struct InputFile {
    /// What to call it in messages: the path as given, or `<stdin>`.
    let displayName: String
    let path: String?

    init(argument: String?) {
        if let argument, argument != "-" {
            displayName = argument
            path = argument
        } else {
            displayName = "<stdin>"
            path = nil
        }
    }

    /// Reads the whole input.
    ///
    /// - Throws: ``UsageError`` with the system's reason (`No such file or directory`, `Is a
    ///   directory`, …), so the command exits with status 2.
    func read() throws(UsageError) -> [UInt8] {
        let descriptor: Int32
        if let path {
            descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else {
                throw UsageError(message: "cannot read '\(displayName)': \(String(cString: strerror(errno)))")
            }
        } else {
            descriptor = STDIN_FILENO
        }
        defer { if path != nil { close(descriptor) } }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = try readChunk(from: descriptor, into: &chunk)
            if count == 0 { return result }
            result.append(contentsOf: chunk[0..<count])
        }
    }

    /// One `read(2)` into `chunk`, retried when a signal interrupts it: the number of bytes
    /// read, 0 at the end of the input.
    func readChunk(from descriptor: Int32, into chunk: inout [UInt8]) throws(UsageError) -> Int {
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count >= 0 { return count }
            if errno != EINTR {
                throw UsageError(message: "cannot read '\(displayName)': \(String(cString: strerror(errno)))")
            }
        }
    }
}
