import ArgumentParser
import HeraldJSON

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `herald fmt`: a payload in its compact canonical form, exactly as Herald sends it.
struct FmtCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fmt",
        abstract: "Write a payload in the compact form Herald sends, byte for byte.",
        discussion: """
            Reads JSON (pretty or compact) from FILE, or from standard input when FILE is '-' or \
            absent, and writes its compact canonical form: no whitespace, keys in their original \
            order (duplicates kept), numbers as written, non-ASCII as raw UTF-8 and only the \
            escapes JSON requires. A '\\u00e9' escape becomes 'é', since APNs does not support \
            \\u notation in alert text.

            Piped to a file or a program, the output is exactly the request body (no trailing \
            newline); on a terminal a newline is added. Malformed input is reported as \
            FILE:LINE:COLUMN: error: MESSAGE on standard error, every error found in one pass.

            Examples:
              herald fmt payload.json
              herald fmt --size payload.json          # the bytes APNs will count
              echo '{ "aps" : { "badge" : 1 } }' | herald fmt
              herald fmt --pretty payload.json
            """
    )

    @Argument(help: ArgumentHelp("The payload file; '-' or nothing reads standard input.", valueName: "FILE"))
    var file: String?

    @Flag(help: "Write the indented form for people instead of the compact form.")
    var pretty = false

    @Flag(help: "Print only the size in bytes of the compact form.")
    var size = false

    func validate() throws {
        if pretty && size {
            throw ValidationError("--pretty and --size cannot be used together; --size always measures the compact form.")
        }
    }

    func run() throws {
        let input = InputFile(argument: file)
        let bytes = try input.read()
        let document: JSONDocument
        do {
            document = try JSONDocument(parsing: bytes)
        } catch {
            let styler = Styler(descriptor: STDERR_FILENO)
            for problem in JSONParser().diagnose(bytes) {
                writeStandardError("\(styler.bold("\(input.displayName):\(problem.location)")): \(styler.red("error:")) \(problem.message)\n")
            }
            throw ExitStatus.failure
        }
        if size {
            writeStandardOutput("\(document.compactByteCount)\n")
        } else if pretty {
            writeStandardOutput(document.prettyBytes() + [UInt8(ascii: "\n")])
        } else {
            var output = document.compactBytes()
            if isTerminal(STDOUT_FILENO) { output.append(UInt8(ascii: "\n")) }
            writeStandardOutput(output)
        }
    }
}
