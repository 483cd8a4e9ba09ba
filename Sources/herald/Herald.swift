import ArgumentParser
import HeraldProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `herald`: the command-line front of the toolkit.
struct Herald: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Apple Push Notification tools: format, lint and preview payloads; run a mock APNs server; send; run a push gateway.",
        discussion: """
            A payload is the JSON body of an APNs request: an "aps" dictionary for the system and \
            your own keys beside it. Herald measures payloads in bytes exactly as APNs does.

            Exit status: 0 success; 1 the input has errors, or a push was not accepted (rejected or \
            unanswered); 2 bad arguments or unreadable input. Each command's --help says more.
            """,
        version: HeraldVersion.description,
        subcommands: [FmtCommand.self, LintCommand.self, PreviewCommand.self, MockCommand.self, DemoCommand.self, SendCommand.self, TokenCommand.self, BenchCommand.self, ServeCommand.self]
    )
}

/// The entry point. ArgumentParser would exit with 64 on a usage error; Herald promises 2, the
/// common convention for "bad arguments", so usage errors are mapped here.
@main
enum HeraldMain {
    static func main() async {
        do {
            var command = try Herald.parseAsRoot()
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch let error as UsageError {
            writeStandardError("herald: error: \(error.message)\n")
            exit(ExitStatus.usage)
        } catch {
            let code = Herald.exitCode(for: error)
            if code == .validationFailure {
                writeStandardError(Herald.fullMessage(for: error) + "\n")
                exit(ExitStatus.usage)
            }
            Herald.exit(withError: error)
        }
    }
}
