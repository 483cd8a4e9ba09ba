import Foundation

/// What the browser tests of Herald's web pages (the mock's inbox, the gateway's console) share:
/// the tools they drive Chromium with, and the checks of an embedded page against its sources.
public enum WebPageChecks {
    /// The browser tests' tools: Chromium, Python with `websockets` (DevTools), and axe-core's
    /// script (from `axe-playwright-python`). Skips, or fails under CI, naming what is missing.
    public static func browserTools() throws -> (chromium: String, python: String, axe: String) {
        let chromium = try ExternalTools.require("chromium", "chromium-browser", "google-chrome", package: "chromium")
        try ExternalTools.requirePython(modules: "websockets", package: "websockets")
        try ExternalTools.requirePython(modules: "axe_playwright_python", package: "axe-playwright-python --no-deps (it carries axe-core)")
        let python = try ExternalTools.require("python3", package: "python3")
        let axe = String(decoding: try ExternalTools.python(
            "import axe_playwright_python, os; print(os.path.join(os.path.dirname(axe_playwright_python.__file__), 'axe.min.js'))"),
            as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return (chromium, python, axe)
    }

    /// Why `html` breaks a strict Content-Security-Policy (no inline code): inline styles, more
    /// than the one script at `script`, inline event handlers. Empty when it keeps to it.
    public static func inlineCodeProblems(html: String, script: String) -> [String] {
        var problems: [String] = []
        if html.contains("<style") || html.contains("style=\"") { problems.append("an inline style (styles come from the stylesheet)") }
        if !html.contains("<script src=\"\(script)\"></script>") || html.components(separatedBy: "<script").count != 2 {
            problems.append("a script other than \(script)")
        }
        if html.range(of: #"\son[a-z]+="#, options: .regularExpression) != nil { problems.append("an inline event handler") }
        return problems
    }
}
