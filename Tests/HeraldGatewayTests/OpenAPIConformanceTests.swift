import Foundation
import HeraldTestSupport
import Testing

/// Schemathesis (PyPI), an outside fuzzer driven by the gateway's own OpenAPI document: for
/// 90 seconds it sends requests the schemas allow and requests they forbid, and checks every answer
/// against the document (no 5xx, documented statuses, content types and bodies, schema-valid
/// requests accepted and invalid ones refused, 405 for undocumented methods) and the stateful
/// links between operations.
@Suite struct OpenAPIConformanceTests {
    @Test(.heavy) func theServerAnswersAsItsOpenAPIDocumentSays() async throws {
        try ExternalTools.requirePython(modules: "schemathesis", package: "schemathesis")
        let python = try ExternalTools.require("python3", package: "python3")
        let harness = try await GatewayHarness.start()
        defer { Task { await harness.stop() } }
        try await harness.registerApp()
        let directory = try TemporaryDirectory()
        // Path parameters name the registered app, so operations reach past the 404. Credentials
        // that parse but do not work are a 422 (JSON Schema cannot say what a P-256 key is).
        try directory.write("schemathesis.toml", """
            [parameters]
            "path.app" = "\(GatewayHarness.bundleID)"

            [checks.positive_data_acceptance]
            expected-statuses = ["2xx", "401", "403", "404", "409", "422"]
            """)
        let run = try await ExternalTools.executeInBackground(python, [
            "-m", "schemathesis.cli", "--config-file", directory.path("schemathesis.toml"), "run",
            "http://127.0.0.1:\(harness.port)/v1/openapi.json", "-H", "Authorization: Bearer \(GatewayHarness.adminKey)",
            "--checks", "all", "--exclude-method", "DELETE",  // revoking the admin's key would end the run early
            "--max-examples", "15", "--workers", "1", "--max-time", "90", "--request-timeout", "20", "--seed", "20261124", "--generation-deterministic",
        ], environment: ProcessInfo.processInfo.environment.merging(["NO_COLOR": "1", "COLUMNS": "120"]) { $1 }, timeout: .seconds(300))
        let output = String(decoding: run.stdout, as: UTF8.self)
        let failures = output.range(of: "FAILURES").map { String(output[$0.lowerBound...].prefix(6_000)) } ?? String(output.suffix(3_000))
        #expect(run.status == 0, "schemathesis exited \(run.status): \(failures) \(run.stderr.suffix(2_000))")
        // Every operation selected (all but the deletes) was tested, and the new ones are there.
        func number(after label: String) -> Int? {
            output.range(of: label).flatMap { Int(output[$0.upperBound...].prefix { $0.isNumber }) }
        }
        let selected = number(after: "Selected: "), tested = number(after: "Tested: ")
        #expect(selected != nil && selected == tested && (selected ?? 0) >= 16, "every operation but the deletes was tested: \(output.suffix(1_500))")
    }
}
