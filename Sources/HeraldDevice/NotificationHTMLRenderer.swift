import HeraldJSON
import HeraldLocalization

/// Renders a notification as one self-contained HTML page (no scripts, fonts or images from the
/// network) that looks like an iOS lock-screen notification, in light and dark appearance side
/// by side, with the full content and the diagnostics below.
///
/// Elements carry `data-field` attributes (`app-name`, `title`, `subtitle`, `body`, `action`)
/// and each appearance a `data-appearance` attribute, so tools and tests can find them.
public struct NotificationHTMLRenderer: Sendable {
    /// Creates a renderer.
    public init() {}

    /// The page.
    public func render(_ notification: RenderedNotification, appName fallbackName: String? = nil) -> String {
        let appName = notification.appName ?? fallbackName ?? "App"
        var html = """
            <!DOCTYPE html>
            <html lang="\(escape(notification.language))">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(appName)): notification preview</title>
            <style>\(Self.styleSheet)</style>
            </head>
            <body>
            <main>
            <div class="screens">

            """
        for appearance in ["light", "dark"] {
            html += """
                <section class="screen \(appearance)" data-appearance="\(appearance)" aria-label="\(appearance) appearance">
                <div class="clock">9:41</div>
                \(card(notification, appName: appName))
                </section>

                """
        }
        html += "</div>\n"
        html += details(notification)
        html += diagnostics(notification)
        html += "</main>\n</body>\n</html>\n"
        return html
    }

    private func card(_ notification: RenderedNotification, appName: String) -> String {
        let initial = appName.first.map { String($0).uppercased() } ?? "A"
        var header = """
            <header><span class="icon" aria-hidden="true">\(escape(initial))</span>\
            <span class="app" data-field="app-name">\(escape(appName))</span>
            """
        if let level = notification.interruptionLevel, level == "time-sensitive" || level == "critical" {
            header += "<span class=\"level\">\(level == "critical" ? "CRITICAL" : "TIME SENSITIVE")</span>"
        }
        header += "<span class=\"time\">now</span></header>"
        switch notification.presentation {
        case .alert, .shownDespiteSilent:
            var body = ""
            if let title = notification.title, !title.isEmpty { body += "<div class=\"title\" data-field=\"title\">\(escape(title))</div>" }
            if let subtitle = notification.subtitle, !subtitle.isEmpty { body += "<div class=\"subtitle\" data-field=\"subtitle\">\(escape(subtitle))</div>" }
            if let text = notification.body, !text.isEmpty { body += "<div class=\"body\" data-field=\"body\">\(escape(text))</div>" }
            var actions = ""
            if let action = notification.actionTitle {
                actions = "<div class=\"actions\"><span class=\"button\">Close</span><span class=\"button primary\" data-field=\"action\">\(escape(action))</span></div>"
            }
            return "<article class=\"card\">\(header)\(body)</article>\(actions)"
        case .liveActivity:
            var rows = ""
            if let activity = notification.activity {
                rows += "<div class=\"title\">Live Activity · \(escape(activity.event ?? "update"))</div>"
                for member in activity.contentState?.members ?? [] {
                    rows += "<div class=\"state\"><span>\(escape(member.key))</span><span>\(escape(member.value.compactString))</span></div>"
                }
            }
            if let title = notification.title, !title.isEmpty { rows += "<div class=\"title\" data-field=\"title\">\(escape(title))</div>" }
            if let text = notification.body, !text.isEmpty { rows += "<div class=\"body\" data-field=\"body\">\(escape(text))</div>" }
            return "<article class=\"card activity\">\(header)\(rows)</article>"
        case .soundBadge:
            var parts: [String] = []
            if let sound = notification.sound { parts.append("plays \(sound.playsDefault ? "the default sound" : sound.name)") }
            if let badge = notification.badge { parts.append(badge == 0 ? "clears the badge" : "sets the badge to \(badge)") }
            return "<div class=\"placeholder\">No banner: \(escape(parts.joined(separator: " and ")))</div>"
        case .silent:
            return "<div class=\"placeholder\">Silent: \(escape(appName)) is woken in the background; nothing is shown</div>"
        case .none:
            return "<div class=\"placeholder\">Nothing is shown</div>"
        }
    }

    private func details(_ notification: RenderedNotification) -> String {
        var rows: [(String, String)] = [("Presentation", notification.presentation.rawValue)]
        if let title = notification.title { rows.append(("Title", title)) }
        if let subtitle = notification.subtitle { rows.append(("Subtitle", subtitle)) }
        if let body = notification.body { rows.append(("Body", body)) }
        if let action = notification.actionTitle { rows.append(("Action", action)) }
        if notification.hidesActionButton { rows.append(("Action", "none (OK button only)")) }
        if let sound = notification.sound {
            rows.append(("Sound", sound.name + (sound.critical ? " (critical)" : "") + (sound.playsDefault && sound.name != "default" ? ": missing, the default sound plays" : "")))
        }
        rows.append(("Badge", notification.badge.map(String.init) ?? "unchanged"))
        rows.append(("Interruption level", notification.effectiveInterruptionLevel))
        if let thread = notification.threadIdentifier { rows.append(("Thread", thread)) }
        if let category = notification.categoryIdentifier { rows.append(("Category", category)) }
        if let score = notification.relevanceScore { rows.append(("Relevance score", String(score))) }
        rows.append(("Language", notification.language))
        var html = "<section class=\"details\"><h2>Content</h2><table>\n"
        for (label, value) in rows {
            html += "<tr><th>\(escape(label))</th><td>\(escape(value))</td></tr>\n"
        }
        html += "</table>"
        if let badge = notification.badge, badge > 0 {
            html += "<div class=\"home\"><span class=\"icon big\">\(escape(String((notification.appName ?? "A").prefix(1)).uppercased()))<span class=\"badge\" data-field=\"badge\">\(badge)</span></span></div>"
        }
        html += "</section>\n"
        return html
    }

    private func diagnostics(_ notification: RenderedNotification) -> String {
        guard !notification.diagnostics.isEmpty else { return "" }
        var html = "<section class=\"diagnostics\"><h2>Diagnostics</h2><ul>\n"
        for diagnostic in notification.diagnostics {
            html += "<li class=\"\(diagnostic.severity.rawValue)\"><strong>\(diagnostic.severity.rawValue)</strong> \(escape(diagnostic.description.replacingFirst("\(diagnostic.severity.rawValue): ", with: "")))</li>\n"
        }
        html += "</ul></section>\n"
        return html
    }

    private func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }

    static let styleSheet = """

        :root { font-family: -apple-system, "SF Pro Text", system-ui, "Helvetica Neue", Arial, sans-serif; }
        body { margin: 0; background: #f2f2f7; color: #1c1c1e; }
        main { padding: 24px; }
        .screens { display: flex; flex-wrap: wrap; gap: 24px; }
        .screen { width: 390px; min-height: 320px; box-sizing: border-box; border-radius: 44px; padding: 40px 14px 28px; }
        .screen.light { background: linear-gradient(165deg, #9ec5f8 0%, #d8e8f7 100%); }
        .screen.dark { background: linear-gradient(165deg, #1b2540 0%, #07090f 100%); }
        .clock { text-align: center; font-size: 72px; font-weight: 600; color: #fff; height: 96px; line-height: 96px; margin-bottom: 28px; letter-spacing: -1px; }
        .light .clock { color: #ffffff; text-shadow: 0 1px 3px rgba(0,0,0,.15); }
        .card { border-radius: 22px; padding: 12px 14px 14px; font-size: 15px; line-height: 1.3; }
        .light .card { background: rgba(255,255,255,.82); color: #000; }
        .dark .card { background: rgba(44,44,46,.88); color: #fff; }
        .card header { display: flex; align-items: center; gap: 8px; margin-bottom: 4px; font-size: 13px; }
        .icon { display: inline-flex; align-items: center; justify-content: center; width: 22px; height: 22px; border-radius: 6px;
                background: linear-gradient(160deg, #34c759, #0a84ff); color: #fff; font-weight: 700; font-size: 13px; position: relative; }
        .icon.big { width: 60px; height: 60px; border-radius: 14px; font-size: 28px; }
        .badge { position: absolute; top: -8px; right: -10px; min-width: 22px; height: 22px; padding: 0 6px; box-sizing: border-box;
                 border-radius: 11px; background: #ff3b30; color: #fff; font-size: 14px; font-weight: 600; display: flex; align-items: center; justify-content: center; }
        .app { flex: 1; text-transform: uppercase; letter-spacing: .02em; opacity: .6; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
        .level { font-size: 11px; font-weight: 700; color: #ff9f0a; }
        .time { opacity: .6; }
        .title, .subtitle { font-weight: 600; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
        .body { display: -webkit-box; -webkit-line-clamp: 4; -webkit-box-orient: vertical; overflow: hidden; white-space: pre-wrap; overflow-wrap: anywhere; }
        .state { display: flex; justify-content: space-between; gap: 12px; font-variant-numeric: tabular-nums; }
        .actions { display: flex; gap: 8px; margin-top: 8px; }
        .button { flex: 1; text-align: center; padding: 10px; border-radius: 14px; font-weight: 600; font-size: 15px; }
        .light .button { background: rgba(255,255,255,.82); color: #007aff; }
        .dark .button { background: rgba(44,44,46,.88); color: #0a84ff; }
        .placeholder { border: 2px dashed rgba(255,255,255,.7); border-radius: 22px; padding: 18px; color: #fff; text-align: center; font-size: 15px; }
        .details, .diagnostics { max-width: 804px; margin-top: 24px; background: #fff; border-radius: 16px; padding: 8px 20px 16px; }
        h2 { font-size: 17px; }
        table { border-collapse: collapse; width: 100%; }
        th { text-align: left; font-weight: 500; color: #6e6e73; width: 170px; vertical-align: top; padding: 4px 0; }
        td { padding: 4px 0; white-space: pre-wrap; overflow-wrap: anywhere; }
        .home { margin-top: 16px; }
        ul { padding-left: 0; list-style: none; }
        li { padding: 6px 0; border-top: 1px solid #e5e5ea; overflow-wrap: anywhere; }
        li strong { display: inline-block; width: 70px; }
        li.error strong { color: #d70015; } li.warning strong { color: #b25000; } li.info strong { color: #0071a4; }

        """
}

extension String {
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        var copy = self
        copy.replaceSubrange(range, with: replacement)
        return copy
    }
}
