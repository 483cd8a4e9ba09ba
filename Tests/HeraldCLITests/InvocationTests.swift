import Foundation
@testable import herald
import HeraldTestSupport
import Testing

/// How the commands Herald prints for pasting name herald: as installed, as built in a checkout,
/// or by path, with the shell's quoting.
@Suite(.ownThreads) struct InvocationTests {
    @Test func heraldAsThePathFindsItAsBuiltOrByPath() throws {
        let directory = try TemporaryDirectory()
        try directory.write("opt/herald", "#!/bin/sh\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path("opt/herald"))
        try FileManager.default.createDirectory(atPath: directory.path("bin"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.path("bin/herald"), withDestinationPath: directory.path("opt/herald"))
        let real = URL(fileURLWithPath: directory.path("opt/herald")).resolvingSymlinksInPath().path
        // On the PATH through a link: plain `herald`.
        #expect(Invocation.command(executable: real, path: "/nonexistent:" + directory.path("bin")) == "herald")
        // Not on the PATH: its path.
        #expect(Invocation.command(executable: real, path: "/usr/bin:/bin") == real)
        // Another herald first on the PATH is not this one.
        try directory.write("other/herald", "#!/bin/sh\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path("other/herald"))
        #expect(Invocation.command(executable: real, path: directory.path("other")) == real)
        // Built in a checkout: swift run from any folder.
        #expect(Invocation.command(executable: "/src/my herald/.build/debug/herald", path: "") == "swift run --package-path '/src/my herald' herald")
        #expect(Invocation.command(executable: "/src/herald/.build/x86_64-unknown-linux-gnu/release/herald", path: "") == "swift run --package-path /src/herald herald")
    }

    @Test func shellQuotingSurvivesTheShell() throws {
        let sh = try ExternalTools.require("sh", package: "dash")
        for text in ["plain/path-1.2_x", "with space", "it's", "$(echo no)", "`no`", "a\"b", "back\\slash", "*?[]", "", "tab\there"] {
            let quoted = shellQuoted(text)
            let echoed = try ExternalTools.execute(sh, ["-c", "printf '%s' " + quoted])
            #expect(String(decoding: echoed.stdout, as: UTF8.self) == text, "\(text) quoted as \(quoted)")
        }
        #expect(shellQuoted("/tmp/a.pem") == "/tmp/a.pem", "plain paths stay as they are")
    }
}
