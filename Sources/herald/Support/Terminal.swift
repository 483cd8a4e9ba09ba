import ArgumentParser

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Herald's exit statuses.
enum ExitStatus {
    /// The input has errors (a malformed payload, lint errors).
    static let inputErrors: Int32 = 1
    /// Bad arguments, or an input that cannot be read.
    static let usage: Int32 = 2

    /// Leave with status 1 after the diagnostics have been printed.
    static let failure = ExitCode(inputErrors)
    /// Leave with status 2.
    static let usageFailure = ExitCode(usage)
}

/// A problem with the command line or the files it names: printed as `herald: error: …`, exit 2.
struct UsageError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Writes everything in `bytes` to a file descriptor, retrying short writes; `errno` of the
/// failure when a write fails.
func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32? {
    var offset = 0
    while offset < bytes.count {
        let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            return errno
        }
        offset += written
    }
    return nil
}

/// Writes to standard output, unbuffered. Output that cannot be written (a full disk, a closed
/// stream) ends the command with status 2 and the system's reason: a result that was not
/// delivered is not a success.
func writeStandardOutput(_ bytes: UnsafeRawBufferPointer) {
    guard let failure = writeAll(bytes, to: STDOUT_FILENO) else { return }
    writeStandardError("herald: error: cannot write to standard output: \(String(cString: strerror(failure)))\n")
    exit(ExitStatus.usage)
}

/// Writes a string to standard output; see ``writeStandardOutput(_:)-(UnsafeRawBufferPointer)``.
func writeStandardOutput(_ text: String) {
    var text = text
    text.withUTF8 { writeStandardOutput(UnsafeRawBufferPointer($0)) }
}

/// Writes bytes to standard output; see ``writeStandardOutput(_:)-(UnsafeRawBufferPointer)``.
func writeStandardOutput(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { writeStandardOutput($0) }
}

/// Writes a string to standard error.
func writeStandardError(_ text: String) {
    var text = text
    // Nowhere left to report a failure to write the report of a failure.
    text.withUTF8 { _ = writeAll(UnsafeRawBufferPointer($0), to: STDERR_FILENO) }
}

/// Whether a descriptor is a terminal (for colours and the trailing newline).
func isTerminal(_ descriptor: Int32) -> Bool {
    isatty(descriptor) == 1
}

/// ANSI styling, only when the stream is a terminal and `NO_COLOR` is unset.
struct Styler {
    let enabled: Bool

    init(descriptor: Int32) {
        enabled = isTerminal(descriptor) && getenv("NO_COLOR") == nil
    }

    func apply(_ code: String, _ text: String) -> String {
        enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    func bold(_ text: String) -> String { apply("1", text) }
    func red(_ text: String) -> String { apply("1;31", text) }
    func yellow(_ text: String) -> String { apply("1;33", text) }
    func cyan(_ text: String) -> String { apply("1;36", text) }
    func dim(_ text: String) -> String { apply("2", text) }
}
