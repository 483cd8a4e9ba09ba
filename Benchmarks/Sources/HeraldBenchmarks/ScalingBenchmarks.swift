import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HeraldDevice
import HeraldJSON
import HeraldLint
import HeraldLocalization
import HeraldPayload

/// Cost growth: every input Herald reads must cost time linear in its size. Each family builds
/// an adversarial input at size n and at 4n (runs of one byte class in a value or a key, many
/// keys, many findings, many syntax errors, deep and wide nesting, format amplification, tables
/// with repeats) and times the same work on both; linear work grows about 4x, quadratic 16x.
/// A family fails when it grows more than ``limit`` times.
enum ScalingBenchmarks {
    /// The growth allowed from n to 4n.
    static let limit = 6.0

    struct Family {
        var name: String
        /// What n counts, for the report.
        var unit: String
        var n: Int
        /// The work on the input of size `n` (the input is built before timing).
        var make: (Int) -> () -> Void
    }

    struct Result {
        var family: Family
        var small: Double
        var large: Double
        var growth: Double { large / max(small, 1) }
        var passed: Bool { growth <= ScalingBenchmarks.limit }
    }

    // MARK: Inputs

    static let linter = Linter()

    static func lint(_ text: String, context: LintContext = .bodyOnly) -> () -> Void {
        let bytes = Array(text.utf8)
        return { blackHole(linter.lint(bytes, context: context)) }
    }

    static func jsonString(_ text: String) -> String {
        var writer = JSONWriter(output: JSONBytes())
        writer.value(.string(text))
        return String(decoding: writer.output.bytes, as: UTF8.self)
    }

    static let renderer = NotificationRenderer(bundle: nil, preferredLanguages: ["en"])

    static func render(_ text: String) -> () -> Void {
        let bytes = Array(text.utf8)
        return {
            guard let document = try? JSONDocument(parsing: bytes) else { return }
            blackHole(try? renderer.render(document: document))
        }
    }

    static func stringsTable(_ text: String) -> () -> Void {
        let bytes = Array(text.utf8)
        return {
            var table = StringsTable(name: "Localizable", entries: [:])
            table.addStringsFile(bytes: bytes, path: "Localizable.strings")
            blackHole(table)
        }
    }

    /// Every family; `quick` uses smaller sizes (CI).
    static func families(quick: Bool) -> [Family] {
        let scale = quick ? 1 : 2
        var families: [Family] = []
        // Runs of one byte class in a custom value: what the credential and e-mail scanners, the
        // string writer and the size rules read.
        let classes: [(String, String)] = [
            ("x", "x"), ("s", "s"), ("r", "r"), ("g", "g"), ("A", "A"), ("e", "e"), ("0", "digits"), ("/", "slashes"),
            ("+", "plus signs"), ("=", "equals signs"), ("@", "at signs"), (".", "dots"), (" ", "spaces"), ("-", "dashes"),
            ("_", "underscores"), ("é", "é (2-byte UTF-8)"), ("😀", "emoji (4-byte UTF-8)"), ("ab", "ab"), ("pa", "pa"),
            ("sk_", "sk_"), ("ghp_", "ghp_"), ("AKIA", "AKIA"), ("eyJ", "eyJ"), ("a@b.", "a@b."),
        ]
        for (unit, label) in classes {
            families.append(Family(name: "lint: a custom value of n × \(label)", unit: "repeats", n: 1_024 * scale) { n in
                lint(#"{"aps":{"alert":"Hi"},"data":\#(jsonString(String(repeating: unit, count: n)))}"#)
            })
        }
        families.append(Family(name: "lint: a custom value of n random base64 characters", unit: "characters", n: 2_048 * scale) { n in
            var generator = SplitMix(seed: 7)
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
            let value = String((0..<n).map { _ in alphabet[Int(generator.next() % 64)] })
            return lint(#"{"aps":{"alert":"Hi"},"blob":"\#(value)"}"#)
        })
        families.append(Family(name: "lint: an alert body of n × \\u00e9 escapes", unit: "escapes", n: 512 * scale) { n in
            lint(#"{"aps":{"alert":{"body":"\#(String(repeating: "\\u00e9", count: n))"}}}"#)
        })
        // Key names: the secret-name matcher and the key suggestions.
        for (unit, label) in [("pa", "pa"), ("x", "x"), ("é", "é"), ("Pass", "Pass"), ("_", "_"), ("token", "token")] {
            families.append(Family(name: "lint: a custom key of n × \(label)", unit: "repeats", n: 1_024 * scale) { n in
                lint(#"{"aps":{"alert":"Hi"},\#(jsonString(String(repeating: unit, count: n))):1}"#)
            })
            families.append(Family(name: "lint: an aps key of n × \(label) (suggestions)", unit: "repeats", n: 1_024 * scale) { n in
                lint(#"{"aps":{"alert":"Hi",\#(jsonString(String(repeating: unit, count: n))):1}}"#)
            })
        }
        // Many findings, each with a pointer and a line and column.
        families.append(Family(name: "lint: n custom keys with null values", unit: "keys", n: 512 * scale) { n in
            lint(#"{"aps":{"alert":"Hi"},"# + (0..<n).map { #""k\#($0)":null"# }.joined(separator: ",") + "}")
        })
        families.append(Family(name: "lint: n repeats of one key", unit: "keys", n: 512 * scale) { n in
            lint(#"{"aps":{"alert":"Hi"},"# + Array(repeating: #""k":1"#, count: n).joined(separator: ",") + "}")
        })
        families.append(Family(name: "lint: n unknown aps keys", unit: "keys", n: 512 * scale) { n in
            lint(#"{"aps":{"alert":"Hi","# + (0..<n).map { #""custom\#($0)":1"# }.joined(separator: ",") + "}}")
        })
        families.append(Family(name: "lint: n × \"alert\" beside aps", unit: "keys", n: 512 * scale) { n in
            lint(#"{"aps":{"alert":"Hi"},"# + Array(repeating: #""alert":"x""#, count: n).joined(separator: ",") + "}")
        })
        families.append(Family(name: "lint: n numeric loc-args", unit: "arguments", n: 512 * scale) { n in
            lint(#"{"aps":{"alert":{"loc-key":"K","loc-args":[\#((0..<n).map(String.init).joined(separator: ","))]}}}"#)
        })
        families.append(Family(name: "lint: n e-mail addresses in custom values", unit: "values", n: 256 * scale) { n in
            lint(#"{"aps":{"alert":"Hi"},"people":[\#((0..<n).map { #""user\#($0)@example.com""# }.joined(separator: ","))]}"#)
        })
        families.append(Family(name: "lint: n findings on separate lines", unit: "keys", n: 512 * scale) { n in
            lint("{\"aps\":{\"alert\":\"Hi\"},\n" + (0..<n).map { "\"k\($0)\":null" }.joined(separator: ",\n") + "\n}")
        })
        // Syntax errors: recovery, each error's line and column.
        families.append(Family(name: "lint: n members missing their commas", unit: "members", n: 512 * scale) { n in
            lint(#"{"aps":{"alert":"Hi"} "# + (0..<n).map { #""k\#($0)":1"# }.joined(separator: " ") + "}")
        })
        families.append(Family(name: "parse (recovering): n missing commas on one line", unit: "members", n: 512 * scale) { n in
            let bytes = Array((#"{"aps":{"alert":"Hi"} "# + (0..<n).map { #""k\#($0)":1"# }.joined(separator: " ") + "}").utf8)
            return { blackHole(JSONParser().parseRecovering(bytes)) }
        })
        // Shapes.
        families.append(Family(name: "lint: nesting n deep in a custom value", unit: "levels", n: 64) { n in
            lint(#"{"aps":{"alert":"Hi"},"deep":"# + String(repeating: "[", count: n) + String(repeating: "]", count: n) + "}")
        })
        families.append(Family(name: "lint: n custom keys", unit: "keys", n: 512 * scale) { n in
            lint(#"{"aps":{"alert":"Hi"},"# + (0..<n).map { #""key\#($0)":"value \#($0)""# }.joined(separator: ",") + "}")
        })
        // The renderer and the formatter: one decode per render, output bounded.
        families.append(Family(name: "render: loc-key of n × %1$@ with a 2 KB argument", unit: "specifiers", n: 64 * scale) { n in
            render(#"{"aps":{"alert":{"loc-key":"\#(String(repeating: "%1$@", count: n))","loc-args":["\#(String(repeating: "y", count: 2_048))"]}}}"#)
        })
        families.append(Family(name: "render: a payload with n custom keys", unit: "keys", n: 256 * scale) { n in
            render(#"{"aps":{"alert":{"title":"T","body":"B"}},"# + (0..<n).map { #""key\#($0)":"value""# }.joined(separator: ",") + "}")
        })
        families.append(Family(name: "render: n values the device cannot read (objects among the loc-args)", unit: "values", n: 128 * scale) { n in
            render(#"{"aps":{"alert":{"loc-key":"K","loc-args":["# + (0..<n).map { #"{"o":\#($0)}"# }.joined(separator: ",") + "]}}}")
        })
        families.append(Family(name: "render: n numeric loc-args", unit: "arguments", n: 256 * scale) { n in
            render(#"{"aps":{"alert":{"loc-key":"K","loc-args":["# + (0..<n).map(String.init).joined(separator: ",") + "]}}}")
        })
        families.append(Family(name: "format: n × %@ with n arguments", unit: "specifiers", n: 512 * scale) { n in
            let format = String(repeating: "%@ ", count: n)
            let arguments = (0..<n).map { "a\($0)" }
            let formatter = LocalizedStringFormatter()
            return { blackHole(formatter.format(format, arguments: arguments)) }
        })
        // Tables.
        families.append(Family(name: ".strings: n entries, every key repeated", unit: "entries", n: 1_024 * scale) { n in
            stringsTable((0..<n).map { "\"k\($0 % 2)\" = \"v\($0)\";" }.joined(separator: "\n"))
        })
        families.append(Family(name: ".strings: n lone surrogates", unit: "entries", n: 1_024 * scale) { n in
            stringsTable((0..<n).map { "\"k\($0)\" = \"\\UD800x\";" }.joined(separator: "\n"))
        })
        families.append(Family(name: ".xcstrings: n entries with warnings", unit: "entries", n: 512 * scale) { n in
            // Each localization has neither stringUnit nor variations: a warning, located, per entry.
            let entries = (0..<n).map { #""k\#($0)":{"localizations":{"en":{}}}"# }
            let bytes = Array((#"{"sourceLanguage":"en","version":"1.0","strings":{"# + entries.joined(separator: ",") + "}}").utf8)
            return { blackHole(try? StringCatalog(bytes: bytes, path: "Localizable.xcstrings")) }
        })
        return families
    }

    // MARK: Work per finding

    /// A payload of at most `size` bytes: `head`, then as many items (`item(i)`, joined by
    /// `separator`) as fit before `tail`.
    static func filled(_ head: String, _ tail: String, size: Int = 4_096, separator: String = ",", item: (Int) -> String) -> String {
        var text = head
        var index = 0
        while true {
            let next = (index == 0 ? "" : separator) + item(index)
            guard text.utf8.count + next.utf8.count + tail.utf8.count <= size else { break }
            text += next
            index += 1
        }
        return text + tail
    }

    static let liveActivityUpdate = LintContext(pushType: "liveactivity", priority: "10", topic: "com.example.app.push-type.liveactivity")
    static let alertPush = LintContext(pushType: "alert", priority: "10", topic: "com.example.app")

    /// 4 KB payloads that provoke as many findings as fit, each against a plain 4 KB alert: what
    /// a sender's worst 4 KB costs the door, the mock and `herald lint`. The cap on findings per
    /// rule and findings' work paid only when listed bound each; ``perFindingLimit`` is the target.
    static func fourKilobytePayloads() -> [(name: String, text: String, context: LintContext)] {
        let body = String(repeating: "x", count: 4_096 - #"{"aps":{"alert":""}}"#.utf8.count)
        var shapes: [(String, String, LintContext)] = [("a plain alert (the baseline)", #"{"aps":{"alert":"\#(body)"}}"#, .bodyOnly)]
        shapes.append(("n custom keys (no finding: the shape's own cost)", filled(#"{"aps":{"alert":"Hi"},"#, "}") { #""k\#($0)":"v""# }, .bodyOnly))
        shapes.append(("n unknown keys inside aps", filled(#"{"aps":{"alert":"Hi","#, "}}") { #""custom\#($0)":1"# }, .bodyOnly))
        shapes.append(("n unknown keys inside alert", filled(#"{"aps":{"alert":{"title":"Hi","#, "}}}") { #""custom\#($0)":1"# }, .bodyOnly))
        shapes.append(("n misspelt aps keys (suggestions)", filled(#"{"aps":{"alert":"Hi","#, "}}") { #""soud\#($0)":1"# }, .bodyOnly))
        shapes.append(("n start-only keys in a Live Activity update", filled(#"{"aps":{"event":"update","timestamp":1700000000,"content-state":{},"#, "}}") { _ in #""attributes-type":"A""# }, liveActivityUpdate))
        shapes.append(("n Live Activity keys on an alert push", filled(#"{"aps":{"alert":"Hi","#, "}}") { index in
            [#""content-state":{}"#, #""event":"update""#, #""dismissal-date":1"#, #""stale-date":1"#][index % 4]
        }, alertPush))
        shapes.append(("n numeric loc-args", filled(#"{"aps":{"alert":{"loc-key":"K","loc-args":["#, "]}}}") { "\($0)" }, .bodyOnly))
        shapes.append(("n × \"alert\" beside aps", filled(#"{"aps":{"alert":"Hi"},"#, "}") { _ in #""alert":"x""# }, .bodyOnly))
        shapes.append(("n custom keys with null values", filled(#"{"aps":{"alert":"Hi"},"#, "}") { #""k\#($0)":null"# }, .bodyOnly))
        shapes.append(("n e-mail addresses", filled(#"{"aps":{"alert":"Hi"},"people":["#, "]}") { #""u\#($0)@example.com""# }, .bodyOnly))
        shapes.append(("n secret-looking key names", filled(#"{"aps":{"alert":"Hi"},"#, "}") { #""password\#($0)":"x""# }, .bodyOnly))
        shapes.append(("n members missing their commas", filled(#"{"aps":{"alert":"Hi"} "#, "}", separator: " ") { #""k\#($0)":1"# }, .bodyOnly))
        shapes.append(("n findings on separate lines", filled("{\"aps\":{\"alert\":\"Hi\"},\n", "\n}", separator: ",\n") { "\"k\($0)\":null" }, .bodyOnly))
        return shapes
    }

    /// The target: the most a 4 KB payload should cost against a plain 4 KB alert. Reported,
    /// not enforced, until every shape meets it.
    static let perFindingLimit = 25.0

    /// Times each 4 KB payload beside the plain alert, alternating; prints the table and returns
    /// whether every one is within the target ``perFindingLimit``.
    static func runPerFinding(quick: Bool, filter: String?) -> Bool {
        let rounds = quick ? 5 : 15
        let minimum: UInt64 = quick ? 2_000_000 : 10_000_000
        let shapes = fourKilobytePayloads()
        let baseline = shapes[0]
        let chosen = shapes.dropFirst().filter { filter == nil || $0.name.localizedCaseInsensitiveContains(filter!) || "4 KB".localizedCaseInsensitiveContains(filter!) }
        guard !chosen.isEmpty else { return true }
        print("\n## Work per finding: 4 KB payloads against a plain 4 KB alert\n")
        print("- each payload holds as many items as fit in 4,096 bytes; \(rounds) rounds, each timing the plain alert and the payload in alternating batches; medians. The target is at most \(format(perFindingLimit))x (in two measurements).\n")
        print("| payload | bytes | findings | plain alert | payload | ratio |")
        print("|---|---:|---:|---:|---:|---:|")
        var failed: [String] = []
        for shape in chosen {
            let report = linter.lint(Array(shape.text.utf8), context: shape.context)
            var (plain, heavy) = measurePair(lint(baseline.text, context: baseline.context), lint(shape.text, context: shape.context), rounds: rounds, minimum: minimum)
            if heavy / plain > perFindingLimit {
                let again = measurePair(lint(baseline.text, context: baseline.context), lint(shape.text, context: shape.context), rounds: rounds * 2, minimum: minimum * 2)
                if again.1 / again.0 < heavy / plain { (plain, heavy) = again }
            }
            let ratio = heavy / plain
            let mark = ratio <= perFindingLimit ? "" : " **over \(format(perFindingLimit))x**"
            let findings = report.diagnostics.count + report.unlistedCount
            print("| \(shape.name) | \(shape.text.utf8.count) | \(findings) (\(report.diagnostics.count) listed) | \(nanoseconds(plain)) | \(nanoseconds(heavy)) | \(format(ratio))x\(mark) |")
            fflush(nil)
            if ratio > perFindingLimit { failed.append(shape.name) }
        }
        print("\n\(chosen.count - failed.count) of \(chosen.count) payloads cost at most \(format(perFindingLimit))x a plain 4 KB alert.")
        if !failed.isEmpty { print("Over the target: \(failed.joined(separator: "; "))") }
        return failed.isEmpty
    }

    /// Lints each 4 KB payload whose name contains `filter` (every one when nil) `times` times,
    /// printing its name and findings once: the loop `valgrind --tool=callgrind` counts. With
    /// `reading`, each finding's message and pointer are read as text too.
    static func repeatFourKilobyte(filter: String?, times: Int, reading: Bool = false) {
        for shape in fourKilobytePayloads() where filter == nil || shape.name.localizedCaseInsensitiveContains(filter!) {
            let bytes = Array(shape.text.utf8)
            var findings = 0
            for _ in 0..<max(times, 1) {
                let report = linter.lint(bytes, context: shape.context)
                findings = report.diagnostics.count + report.unlistedCount
                if reading {
                    for diagnostic in report.diagnostics { blackHole((diagnostic.message, diagnostic.pointer?.description)) }
                }
            }
            print("\(shape.name): \(findings) findings, \(max(times, 1)) lints")
        }
    }

    /// Medians per operation of `first` and `second`, timed in alternating batches of one size
    /// (sized to `minimum` on `first`).
    static func measurePair(_ first: () -> Void, _ second: () -> Void, rounds: Int, minimum: UInt64) -> (Double, Double) {
        var batch = 1
        while true {
            let begin = now()
            for _ in 0..<batch { first() }
            if now() - begin >= minimum || batch >= 1 << 16 { break }
            batch *= 2
        }
        var times: ([UInt64], [UInt64]) = ([], [])
        for round in 0..<rounds {
            for which in round % 2 == 0 ? [0, 1] : [1, 0] {
                let begin = now()
                for _ in 0..<batch { which == 0 ? first() : second() }
                let elapsed = now() - begin
                if which == 0 { times.0.append(elapsed) } else { times.1.append(elapsed) }
            }
        }
        func median(_ values: [UInt64]) -> Double { Double(values.sorted()[values.count / 2]) / Double(batch) }
        return (median(times.0), median(times.1))
    }

    // MARK: Timing

    /// Times `family` at n and 4n: batches sized to `minimum` at n, alternating, medians.
    static func measure(_ family: Family, rounds: Int, minimum: UInt64) -> Result {
        let small = family.make(family.n)
        let large = family.make(family.n * 4)
        // One run of each first: the large one may already be far too slow.
        let start = now()
        large()
        let single = now() - start
        if single > 3_000_000_000 {
            return Result(family: family, small: 1, large: Double(single))
        }
        var batch = 1
        while true {
            let begin = now()
            for _ in 0..<batch { small() }
            if now() - begin >= minimum || batch >= 1 << 16 { break }
            batch *= 2
        }
        var smallTimes: [UInt64] = []
        var largeTimes: [UInt64] = []
        for round in 0..<rounds {
            for which in round % 2 == 0 ? [0, 1] : [1, 0] {
                let body = which == 0 ? small : large
                let begin = now()
                for _ in 0..<batch { body() }
                (which == 0 ? { smallTimes.append(now() - begin) } : { largeTimes.append(now() - begin) })()
            }
        }
        func median(_ values: [UInt64]) -> Double {
            let sorted = values.sorted()
            return Double(sorted[sorted.count / 2]) / Double(batch)
        }
        return Result(family: family, small: median(smallTimes), large: median(largeTimes))
    }

    /// Runs every family, prints the table, and returns whether all grew within the limit.
    static func run(quick: Bool, filter: String?) -> Bool {
        #if canImport(Glibc)
        // glibc gives the top of its heap back to the kernel once 128 KB there are free, and
        // takes it back on the next allocation. A family whose one large input is made and freed
        // every iteration then times page faults, not Herald: "an aps key of n × token" grew
        // 5.9-6.1x after the families before it had shaped the heap, 1.9x alone or with this
        // (a long-running mock or gateway keeps its heap grown). The growth limit is for
        // Herald's own work, so the heap keeps 64 MB.
        // (mallopt, with M_TRIM_THRESHOLD = -1, as <malloc.h> has them: Glibc's module has not.)
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        if let mallopt = dlsym(nil, "mallopt") { _ = unsafeBitCast(mallopt, to: Mallopt.self)(-1, 64 << 20) }
        #endif
        let rounds = quick ? 5 : 15
        let minimum: UInt64 = quick ? 2_000_000 : 10_000_000
        let families = families(quick: quick).filter { filter == nil || $0.name.localizedCaseInsensitiveContains(filter!) }
        guard !families.isEmpty else { return true }
        print("## Cost growth: each input at n and 4n\n")
        print("- command: `swift run -c release --package-path Benchmarks HeraldBenchmarks scaling\(quick ? " --quick" : "")`")
        print("- machine: \(Machine.description)")
        print("- method: \(rounds) rounds of alternating batches (each ≥ \(minimum / 1_000_000) ms at n); medians per operation. Linear work grows ~4x from n to 4n, quadratic ~16x; more than \(format(limit))x in two measurements fails; glibc's heap is not trimmed between iterations (M_TRIM_THRESHOLD 64 MB).\n")
        print("| family | n | time at n | time at 4n | growth |")
        print("|---|---:|---:|---:|---:|")
        var failed: [String] = []
        for family in families {
            var result = measure(family, rounds: rounds, minimum: minimum)
            if !result.passed {
                // Noise on a busy machine can push one measurement over; a family fails only
                // when a second, longer one agrees (the lower growth is reported).
                let again = measure(family, rounds: rounds * 2, minimum: minimum * 2)
                if again.growth < result.growth { result = again }
            }
            let mark = result.passed ? "" : " **over \(format(limit))x**"
            print("| \(family.name) | \(family.n) \(family.unit) | \(nanoseconds(result.small * 10 / 10)) | \(nanoseconds(result.large)) | \(format(result.growth))x\(mark) |")
            fflush(nil)
            if !result.passed { failed.append(family.name) }
        }
        print("\n\(families.count - failed.count) of \(families.count) families grew at most \(format(limit))x.")
        if !failed.isEmpty { print("Over the target: \(failed.joined(separator: "; "))") }
        return failed.isEmpty
    }
}

/// A small deterministic generator (SplitMix64), for reproducible inputs.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
