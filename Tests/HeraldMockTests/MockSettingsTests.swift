import Foundation
import HeraldAuth
import HeraldMock
import HeraldProtocol
import HeraldTestSupport
import Testing

/// `MockSettings`: the `--config` file and flags as a library reads them, so an embedder gets
/// the file format, the defaults and every check of `herald mock`.
@Suite struct MockSettingsTests {
    static func settings(_ json: String) throws(MockSettingsError) -> MockSettings {
        try MockSettings(json: Array(json.utf8), source: "mock.json")
    }

    @Test func aFileBecomesTheConfigurationHeraldMockWouldRun() throws {
        let directory = try TemporaryDirectory()
        let key = ProviderSigningKey.generate(keyID: try KeyID("ABC123DEFG"), teamID: try TeamID("DEF123GHIJ"))
        try directory.write("key.p8", key.pkcs8PEM)
        let settings = try Self.settings("""
            {"environment": "production", "plaintext": true, "port": 0, "strict": true, "storeLimit": 5,
             "idleTimeout": 1.5, "faults": ["status=503,every=10"], "lang": ["fr", "en"],
             "unregistered": ["740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"],
             "keys": [{"file": "\(directory.path("key.p8"))", "keyId": "ABC123DEFG", "teamId": "DEF123GHIJ"}]}
            """)
        let configuration = try settings.configuration()
        #expect(configuration.environment == .production)
        #expect(configuration.port == 0)
        // herald mock's defaults where the file is silent, not the library's (0 for both).
        #expect(configuration.apiPort == 8197)
        #expect(configuration.channelPort == 2196, "production's channel-management port")
        #expect(configuration.strict && configuration.storeCapacity == 5)
        #expect(configuration.idleTimeout == .milliseconds(1500))
        #expect(configuration.faults.map(\.description) == ["status=503/ServiceUnavailable,every=10"])
        #expect(configuration.languages == ["fr", "en"])
        #expect(configuration.unregisteredTokens.count == 1)
        #expect(configuration.keys.map(\.keyID.rawValue) == ["ABC123DEFG"])
        if case .plaintext = configuration.transport {} else { Issue.record("plaintext expected") }
    }

    @Test func activityTokenReportsTakeAURLAndHeaders() throws {
        let settings = try Self.settings(#"{"reportActivityTokens": "http://127.0.0.1:8080/v1/apps/demo/activity-tokens", "reportHeaders": ["Authorization:  Bearer hgk_x ", "X-Trace: 1"]}"#)
        let report = try #require(try settings.configuration().activityTokenReport)
        #expect(report.url == "http://127.0.0.1:8080/v1/apps/demo/activity-tokens")
        #expect(report.headers.map(\.0) == ["Authorization", "X-Trace"] && report.headers.map(\.1) == ["Bearer hgk_x", "1"])
    }

    @Test func laterSettingsWinAndListsAddUp() throws {
        var settings = try Self.settings(#"{"port": 1000, "faults": ["close,times=1"], "bundle": "App/", "lang": ["de"]}"#)
        var flags = MockSettings()
        flags.port = 0
        flags.faults = ["hang,topic=slow.app"]
        flags.strings = "Localizable.strings"
        settings.merge(flags)
        #expect(settings.port == 0)
        #expect(settings.faults == ["close,times=1", "hang,topic=slow.app"])
        #expect(settings.bundle == nil && settings.strings == "Localizable.strings", "one app's strings, not one of each")
        #expect(settings.languages == ["de"], "a setting the later source leaves out stays")
    }

    @Test func badSettingsSayWhichAndWhatWouldDo() throws {
        let cases: [(String, String)] = [
            (#"{"port": "eighty"}"#, "mock.json: \"port\" must be a whole number"),
            (#"{"prot": 1}"#, "mock.json: unknown setting \"prot\""),
            (#"[1]"#, "mock.json: expected a JSON object of settings"),
            ("{\"port\": 1,\n \"x\" 2}", "mock.json:2:"),
        ]
        for (json, message) in cases {
            let error = #expect(throws: MockSettingsError.self) { try Self.settings(json) }
            #expect(error?.message.hasPrefix(message) == true, "\(String(describing: error))")
        }
        let invalid: [(String, String)] = [
            (#"{"port": 70000}"#, "port must be from 0 to 65535, not 70000"),
            (#"{"idleTimeout": 1e300}"#, "idleTimeout must be a number of seconds above 0, at most 86400"),
            (#"{"dbMaxAge": 1e300, "db": "x.db"}"#, "dbMaxAge must be a positive number of hours, at most 876000"),
            (#"{"dbKeep": 5}"#, "dbKeep needs db FILE"),
            (#"{"plaintext": true, "auth": "certificate"}"#, "auth certificate needs TLS"),
            (#"{"faults": ["status=999"]}"#, "faults: "),
            (#"{"releaseP8": "k.p8"}"#, "need releaseTo"),
            (#"{"releaseTo": "sandbox"}"#, "no credentials for releaseTo"),
            (#"{"reportHeaders": ["Authorization: Bearer x"]}"#, "reportHeaders needs reportActivityTokens URL"),
            (#"{"reportActivityTokens": "ftp://127.0.0.1/x"}"#, "reportActivityTokens is an http or https URL"),
            (#"{"reportActivityTokens": "http://127.0.0.1:8080/x", "reportHeaders": ["no colon"]}"#, "'no colon' is not a header; write it as 'Name: value'"),
        ]
        for (json, message) in invalid {
            let settings = try Self.settings(json)
            let error = #expect(throws: MockSettingsError.self) { try settings.configuration() }
            #expect(error?.message.contains(message) == true, "\(json): \(String(describing: error))")
        }
        // The caller names settings as its users know them.
        let settings = try Self.settings(#"{"dbKeep": 5}"#)
        let error = #expect(throws: MockSettingsError.self) { try settings.configuration { "--" + $0 } }
        #expect(error?.message == "--dbKeep needs --db FILE")
    }
}
