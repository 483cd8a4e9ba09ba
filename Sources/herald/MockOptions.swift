import ArgumentParser
import HeraldMock

// The flags of `herald mock`, in the groups its help shows. Each group puts what was given into
// `MockSettings`; what was not given stays unset, so the config file or the default applies.

/// Where the mock listens, and its TLS.
struct MockListenOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The address to bind (default 127.0.0.1; 0.0.0.0 for every interface).", valueName: "HOST"))
    var host: String?

    @Option(help: ArgumentHelp("The APNs port (default 2197; 0 picks one).", valueName: "PORT"))
    var port: Int?

    @Option(name: .customLong("api-port"), help: ArgumentHelp("The web inbox (at /), API, event stream and metrics port (default 8197; 0 picks one).", valueName: "PORT"))
    var apiPort: Int?

    @Option(name: .customLong("channel-port"), help: ArgumentHelp("The broadcast channel-management port (default 2195 in sandbox, 2196 in production; 0 picks one).", valueName: "PORT"))
    var channelPort: Int?

    @Flag(help: "Serve HTTP/2 without TLS (prior knowledge), for local tests.")
    var plaintext = false

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("The server certificate chain (PEM), instead of a generated one.", valueName: "PEM"))
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The server certificate's private key (PEM).", valueName: "PEM"))
    var tlsKey: String?

    @Option(name: .customLong("ca-out"), help: ArgumentHelp("Where to write the generated CA certificate for clients to trust.", valueName: "FILE"))
    var caOut: String?

    func apply(to settings: inout MockSettings) {
        settings.host = host
        settings.port = port
        settings.apiPort = apiPort
        settings.channelPort = channelPort
        settings.plaintext = plaintext ? true : nil
        settings.tlsCert = tlsCert
        settings.tlsKey = tlsKey
        settings.caOut = caOut
    }
}

/// How providers authenticate: tokens signed by known keys, or client certificates.
struct MockAuthenticationOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Provider authentication: token (default) or certificate (mutual TLS; topics from the client certificate).", valueName: "MODE"))
    var auth: String?

    @Option(name: .customLong("client-ca"), help: ArgumentHelp("With --auth certificate: a CA (PEM) client certificates must chain to (repeatable).", valueName: "PEM"))
    var clientCA: [String] = []

    @Flag(name: .customLong("accept-any-client-certificate"), help: "With --auth certificate: accept client certificates without verifying them (for Apple-issued certificates).")
    var acceptAnyClientCertificate = false

    @Option(name: .customLong("key"), help: ArgumentHelp("A provider key file (.p8 or public-key PEM) whose signatures are verified (repeatable).", valueName: "FILE"))
    var keys: [String] = []

    @Option(name: .customLong("key-id"), help: ArgumentHelp("The key ID of the matching --key.", valueName: "ID"))
    var keyIDs: [String] = []

    @Option(name: .customLong("team-id"), help: ArgumentHelp("The team ID of the matching --key.", valueName: "ID"))
    var teamIDs: [String] = []

    func validate() throws {
        if keys.count != keyIDs.count || keys.count != teamIDs.count {
            throw ValidationError("each --key needs its --key-id and --team-id, in the same order")
        }
    }

    func apply(to settings: inout MockSettings) {
        settings.auth = auth
        settings.clientCA = clientCA
        settings.acceptAnyClientCertificate = acceptAnyClientCertificate ? true : nil
        settings.keys = zip(keys, zip(keyIDs, teamIDs)).map { MockSettings.KeyFile(file: $0, keyID: $1.0, teamID: $1.1) }
    }
}

/// What the mock answers: the environment it plays, unregistered tokens, faults, strictness.
struct MockAnswerOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The environment played: sandbox (answers carry apns-unique-id) or production.", valueName: "ENV"))
    var environment: String?

    @Option(help: ArgumentHelp("A device token that answers 410 Unregistered (repeatable).", valueName: "TOKEN"))
    var unregistered: [String] = []

    @Option(help: ArgumentHelp("A fault rule (repeatable; grammar above).", valueName: "RULE"))
    var fault: [String] = []

    @Flag(help: "Reject where Apple's behaviour is undocumented (listed above).")
    var strict = false

    @Option(name: .customLong("idle-timeout"), help: ArgumentHelp("Send GOAWAY {\"reason\":\"IdleTimeout\"} and close a connection idle this many seconds (default: never).", valueName: "SECONDS"))
    var idleTimeout: Double?

    func apply(to settings: inout MockSettings) {
        settings.environment = environment
        settings.unregistered = unregistered
        settings.faults = fault
        settings.strict = strict ? true : nil
        settings.idleTimeout = idleTimeout
    }
}

/// What the mock keeps: requests in memory for the API, or every request in SQLite.
struct MockStorageOptions: ParsableArguments {
    @Option(name: .customLong("store-limit"), help: ArgumentHelp("How many requests to keep for the API (default 10000; the newest are kept).", valueName: "N"))
    var storeLimit: Int?

    @Option(name: .customLong("device-histories"), help: ArgumentHelp("How many devices keep what they showed (Notification Center and event log) for the inbox (default 1000; the most recently reached). Others keep their token, badge and Live Activities: memory stays flat under a load test over many devices.", valueName: "N"))
    var deviceHistories: Int?

    @Option(name: .customLong("db"), help: ArgumentHelp("Keep every request in this SQLite file across restarts (created if missing); each answer waits until its request is committed.", valueName: "FILE"))
    var db: String?

    @Option(name: .customLong("db-keep"), help: ArgumentHelp("With --db: how many requests the file keeps (default 100000; the newest).", valueName: "N"))
    var dbKeep: Int?

    @Option(name: .customLong("db-max-age"), help: ArgumentHelp("With --db: delete requests older than this many hours (default: kept whatever their age).", valueName: "HOURS"))
    var dbMaxAge: Double?

    func apply(to settings: inout MockSettings) {
        settings.storeLimit = storeLimit
        settings.deviceHistories = deviceHistories
        settings.db = db
        settings.dbKeep = dbKeep
        settings.dbMaxAge = dbMaxAge
    }
}

/// Live Activities: where the device reports the update tokens it makes.
struct MockActivityOptions: ParsableArguments {
    @Option(name: .customLong("report-activity-tokens"), help: ArgumentHelp("Post each new Live Activity update token to URL, as the app reports it to its backend (a start with input-push-token: 1 makes one). The body is {\"token\", \"startToken\", \"attributesType\", \"attributes\", \"topic\"}; herald serve takes it at /v1/apps/APP/activity-tokens.", valueName: "URL"))
    var reportActivityTokens: String?

    @Option(name: .customLong("report-header"), help: ArgumentHelp("A header on those posts, 'Name: value' (repeatable), such as 'Authorization: Bearer hgk_…'.", valueName: "HEADER"))
    var reportHeaders: [String] = []

    func apply(to settings: inout MockSettings) {
        settings.reportActivityTokens = reportActivityTokens
        settings.reportHeaders = reportHeaders
    }
}

/// Where the inbox's Release button sends a stored notification.
struct MockReleaseOptions: ParsableArguments {
    @Option(name: .customLong("release-to"), help: ArgumentHelp("Where the inbox's Release sends a notification: sandbox, production or HOST:PORT.", valueName: "TARGET"))
    var releaseTo: String?

    @Option(name: .customLong("release-p8"), help: ArgumentHelp("The release target's provider key (.p8).", valueName: "FILE"))
    var releaseP8: String?

    @Option(name: .customLong("release-key-id"), help: ArgumentHelp("The --release-p8 key's ID.", valueName: "ID"))
    var releaseKeyID: String?

    @Option(name: .customLong("release-team-id"), help: ArgumentHelp("The --release-p8 key's team ID.", valueName: "ID"))
    var releaseTeamID: String?

    @Option(name: .customLong("release-cert"), help: ArgumentHelp("A .p12 certificate for the release target (password in $HERALD_RELEASE_CERT_PASSWORD).", valueName: "FILE"))
    var releaseCert: String?

    @Option(name: .customLong("release-ca-file"), help: ArgumentHelp("Also trust this CA (PEM) when releasing, such as another mock's.", valueName: "PEM"))
    var releaseCAFile: String?

    @Flag(name: .customLong("release-plaintext"), help: "Release over HTTP/2 without TLS (to a herald mock --plaintext).")
    var releasePlaintext = false

    func apply(to settings: inout MockSettings) {
        settings.releaseTo = releaseTo
        settings.releaseP8 = releaseP8
        settings.releaseKeyID = releaseKeyID
        settings.releaseTeamID = releaseTeamID
        settings.releaseCert = releaseCert
        settings.releaseCAFile = releaseCAFile
        settings.releasePlaintext = releasePlaintext ? true : nil
    }
}
