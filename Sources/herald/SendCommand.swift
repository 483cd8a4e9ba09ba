import ArgumentParser
import Foundation
import HeraldAuth
import HeraldClient
import HeraldJSON
import HeraldLint
import HeraldPayload
import HeraldProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a payload to devices through APNs (or a herald mock).",
        discussion: """
            The payload is linted first, with the request's headers, and not sent if it has \
            errors (--no-lint sends it anyway). Then it goes to every token over HTTP/2, and one \
            line per token says what happened: accepted with its apns-id, rejected with APNs' \
            reason and what to do about it, or unanswered (the connection failed, the timeout \
            passed). A server that cannot be reached (a name that does not resolve, a refused \
            port, an untrusted TLS certificate) is said once, at once, with the flag that fixes it.

            Credentials: --p8 AuthKey_ABC123DEFG.p8 --key-id ABC123DEFG --team-id DEF123GHIJ \
            (token auth), or --cert cert.p12 with the password in $HERALD_CERT_PASSWORD \
            (certificate auth). HERALD_P8, HERALD_KEY_ID, HERALD_TEAM_ID and HERALD_CERT may \
            stand in for the flags.

            A .apns file (Xcode's simulator format) works as is: its "Simulator Target Bundle" \
            gives the topic when --topic is absent, and is not sent.

            Exit status: 0 every token accepted, 1 any rejected or unanswered (or the payload has \
            lint errors), 2 bad arguments, unreadable files or missing credentials.

            Examples:
              herald send alert.json --token 740f4707… --topic com.example.app --sandbox \\
                  --p8 AuthKey_ABC123DEFG.p8 --key-id ABC123DEFG --team-id DEF123GHIJ
              herald send alert.json --tokens-file tokens.txt --topic com.example.app \\
                  --host 127.0.0.1 --port 2197 --ca-file herald-mock-ca.pem --p8 demo.p8 …
            """
    )

    @Argument(help: ArgumentHelp("The payload (JSON, or a .apns file); '-' or nothing reads standard input.", valueName: "FILE"))
    var file: String?

    @Option(name: .customLong("token"), help: ArgumentHelp("A device token in hex (repeatable).", valueName: "HEX"))
    var tokens: [String] = []

    @Option(name: .customLong("tokens-file"), help: ArgumentHelp("A file of device tokens, one per line ('#' comments).", valueName: "FILE"))
    var tokensFile: String?

    @OptionGroup var headers: HeaderOptions

    @Option(help: ArgumentHelp("Connections to open (default 1 for one token, 4 for more: APNs, and the mock, spread connections over their cores).", valueName: "N"))
    var connections: Int?

    @Flag(name: .customLong("no-lint"), help: "Send even when lint finds errors.")
    var noLint = false

    @Option(help: ArgumentHelp("The longest wait for each token's answer, retries included.", valueName: "SECONDS"))
    var timeout: Double = 30

    @OptionGroup var credentials: CredentialOptions
    @OptionGroup var server: ServerOptions

    func run() async throws {
        guard timeout > 0, timeout <= 86_400 else {
            throw UsageError(message: "--timeout is a number of seconds above 0, at most 86400 (a day)")
        }
        let input = InputFile(argument: file)
        var body = try input.read()
        let isSimulatorFile = input.path?.lowercased().hasSuffix(".apns") == true
        var topic = headers.topic
        if isSimulatorFile {
            let stripped = SimulatorFile.strippingSimulatorKeys(body)
            body = stripped.payload
            topic = topic ?? stripped.bundleID
        }
        guard let topic else {
            throw UsageError(message: "no topic: pass --topic com.example.app (the app's bundle ID)")
        }
        let requestHeaders = try headers.request(topic: topic)
        let tokens = try TokenList.read(tokens: tokens, file: tokensFile)
        if requestHeaders.apnsID != nil, tokens.count > 1 {
            throw UsageError(message: "--apns-id names one notification; with \(tokens.count) tokens leave it out (each gets its own)")
        }
        var configuration = try server.configuration(credentials: try credentials.credentials())
        configuration.requestTimeout = .milliseconds(Int64(timeout * 1000))
        // Each token's line says what happened; the client's own warnings would say it twice.
        configuration.logger.logLevel = .error
        if let connections, !(1...64).contains(connections) {
            throw UsageError(message: "--connections \(connections): give 1 to 64")
        }
        configuration.maximumConnections = connections ?? (tokens.count > 1 ? 4 : 1)

        // Lint with the first token's complete request.
        var first = requestHeaders
        first.target = .device(tokens[0])
        let report = Linter().lint(body, context: LintContext(request: first))
        if !report.diagnostics.isEmpty {
            var text: [UInt8] = []
            LintTextRenderer(colors: Styler(descriptor: STDERR_FILENO).enabled).render(LintFileResult(path: input.displayName, report: report), into: &text)
            writeStandardError(String(decoding: text, as: UTF8.self))
        }
        if report.hasErrors, !noLint {
            writeStandardError("herald: not sent: the payload has lint errors (--no-lint sends it anyway)\n")
            throw ExitStatus.failure
        }

        let client: APNsClient
        do {
            client = try APNsClient(configuration: configuration)
        } catch {
            throw UsageError(message: error.message)
        }
        let request = APNsRequest(headers: requestHeaders, body: body)
        // A connection first: what no retry mends within the timeout (a name that does not
        // resolve, an untrusted certificate, a refused port) is said once, with the flag that
        // fixes it, rather than after the whole timeout for every token. With several tokens,
        // every connection opens now, so the requests spread over them from the start.
        do {
            try await client.prewarm()
        } catch let error where error.connectionFailure != nil {
            await client.shutdown()
            let failure = error.connectionFailure!
            writeStandardError("herald: not sent: \(failure)\n  \(Self.advice(for: failure))\n")
            throw ExitStatus.failure
        } catch {
            // Some connections opened; a token whose connection fails says so on its line.
        }
        var rejected = 0
        var output = LineOutput(progress: Progress(total: tokens.count))
        if tokens.count == 1 {
            let outcome = await client.outcome(of: request.to(tokens[0]))
            if !Self.line(tokens[0], outcome, into: &output.pending) { rejected += 1 }
        } else {
            for await result in client.send(request, to: tokens) {
                if !Self.line(result.token, result.result, into: &output.pending) { rejected += 1 }
                output.advance()
            }
        }
        output.finish()
        await client.shutdown()
        if tokens.count > 1 {
            writeStandardError("\(tokens.count - rejected) of \(tokens.count) accepted\n")
        }
        if rejected > 0 { throw ExitStatus.failure }
    }

    /// What to do about a connection that cannot be made, naming this command's flags.
    static func advice(for failure: ConnectionFailure) -> String {
        switch failure.cause {
        case .nameNotResolved: "check --host (leave it out, with --sandbox or --production, for Apple's servers)"
        case .refused: "nothing listens there: check --host and --port (Apple's are 443 and 2197; herald mock prints its port), and that the server runs"
        case .unreachable, .timeout: "check --host and --port, the network and the firewall"
        case .tlsUntrusted: "trust the server's CA with --ca-file FILE (herald mock writes its CA with --ca-out FILE and prints the path), or check that --host matches its certificate"
        case .tls: "check the credentials (--cert, --p8) and that the server is APNs or a herald mock"
        case .notHTTP2: "APNs speaks HTTP/2 over TLS; for a herald mock started with --plaintext, add --plaintext"
        case .proxy: "check the proxy's address and credentials"
        case .closed: "the server closed the connection: check --host and --port, and --plaintext for a mock without TLS"
        }
    }

    /// One line: `TOKEN accepted apns-id ID`, `TOKEN rejected STATUS REASON: message (advice)`
    /// when APNs answered with an error, or `TOKEN not sent` / `TOKEN unanswered` with why when
    /// it did not; appended to `output`. Whether it was accepted.
    static func line(_ token: DeviceToken, _ outcome: Result<APNsResponse, APNsClientError>, into output: inout [UInt8]) -> Bool {
        output.append(contentsOf: token.hex.utf8)
        switch outcome {
        case .success(let response):
            output.append(contentsOf: " accepted apns-id ".utf8)
            output.append(contentsOf: response.apnsID.utf8)
            if let unique = response.uniqueID {
                output.append(contentsOf: " apns-unique-id ".utf8)
                output.append(contentsOf: unique.utf8)
            }
            output.append(UInt8(ascii: "\n"))
            return true
        case .failure(let error):
            var line: String
            switch error.kind {
            case .rejected: line = " rejected"
            case .refusedByLint, .payloadTooLarge, .shutDown: line = " not sent"
            case .connectionFailed, .deadlineExceeded: line = error.attempts == 0 ? " not sent" : " unanswered"
            }
            if let status = error.status { line += " \(status)" }
            if let reason = error.reason { line += " \(reason)" }
            line += ": \(error.message)"
            if let failure = error.connectionFailure {
                line += " (\(advice(for: failure)))"
            } else if let advice = error.advice {
                line += " (\(advice))"
            }
            output.append(contentsOf: line.utf8)
            output.append(UInt8(ascii: "\n"))
            return false
        }
    }
}

/// Per-token lines for standard output, written in blocks: at 64 KB or every 100 ms, whichever
/// comes first (a write per line cost as much as a send with 100,000 tokens), with the
/// progress bar redrawn after each block.
struct LineOutput {
    var pending: [UInt8] = []
    var progress: Progress
    private var lastWrite = ContinuousClock.now

    init(progress: Progress) {
        self.progress = progress
        pending.reserveCapacity(1 << 16)
    }

    /// One more token done: writes what is pending when it is due.
    mutating func advance() {
        progress.done += 1
        guard pending.count >= 1 << 16 || ContinuousClock.now - lastWrite >= .milliseconds(100) else { return }
        write()
        progress.draw()
    }

    /// Writes what is left and clears the progress bar.
    mutating func finish() {
        write()
        progress.clear()
    }

    private mutating func write() {
        lastWrite = ContinuousClock.now
        guard !pending.isEmpty else { return }
        progress.clear()
        writeStandardOutput(pending)
        pending.removeAll(keepingCapacity: true)
    }
}

/// A progress bar on standard error, when it is a terminal.
struct Progress {
    let total: Int
    /// Tokens done.
    var done = 0
    private let enabled: Bool
    private var lastDrawn = ContinuousClock.now

    init(total: Int) {
        self.total = total
        enabled = total > 1 && isTerminal(STDERR_FILENO)
    }

    /// Redraws the bar (at most every 100 ms).
    mutating func draw() {
        guard enabled, ContinuousClock.now - lastDrawn > .milliseconds(100) || done == total else { return }
        lastDrawn = ContinuousClock.now
        let width = 30
        let filled = done * width / max(total, 1)
        writeStandardError("\r[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] \(done)/\(total)")
    }

    func clear() {
        if enabled { writeStandardError("\r\u{1B}[K") }
    }
}

struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a provider token (JWT) for curl or another client.",
        discussion: """
            The token is signed now with the .p8 key (ES256) and is valid for an hour; APNs \
            refuses tokens older than that.

            Example:
              TOKEN=$(herald token --p8 AuthKey_ABC123DEFG.p8 \\
                  --key-id ABC123DEFG --team-id DEF123GHIJ)
              curl --http2 -H "authorization: bearer $TOKEN" \\
                  -H "apns-topic: com.example.app" -d '{"aps":{"alert":"Hello"}}' \\
                  https://api.sandbox.push.apple.com/3/device/<token>
            """
    )

    @OptionGroup var credentials: CredentialOptions

    func run() throws {
        guard let key = try credentials.signingKey() else {
            throw UsageError(message: "herald token needs a .p8 key (--p8 FILE --key-id ID --team-id ID); certificates need no token")
        }
        writeStandardOutput(ProviderTokenSigner(key: key).token().rawValue + "\n")
    }
}
