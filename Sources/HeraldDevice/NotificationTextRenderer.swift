import HeraldLocalization

/// Draws a rendered notification for a terminal: a banner as the lock screen shows it (title
/// and subtitle on one line each, the body cut after four lines), the full text below it, then
/// sound, badge, interruption level and the diagnostics.
///
/// ```
/// ╭──────────────────────────────────────────╮
/// │ ▣ GAMES                              now │
/// │ Game Request                             │
/// │ Bob wants to play poker                  │
/// ╰──────────────────────────────────────────╯
/// ```
public struct NotificationTextRenderer: Sendable {
    /// Columns inside the banner's frame.
    public var width: Int
    /// Use ANSI bold and colours.
    public var usesColor: Bool
    /// The most body lines a banner shows before cutting with `…`.
    public static let bannerBodyLines = 4

    /// Creates a renderer.
    public init(width: Int = 42, usesColor: Bool = false) {
        self.width = max(20, width)
        self.usesColor = usesColor
    }

    /// The whole text view.
    public func render(_ notification: RenderedNotification, appName fallbackName: String? = nil) -> String {
        var out = ""
        let appName = notification.appName ?? fallbackName ?? "App"
        switch notification.presentation {
        case .alert, .shownDespiteSilent:
            out += banner(notification, appName: appName)
        case .liveActivity:
            out += activityCard(notification, appName: appName)
        case .soundBadge:
            out += "(no banner: only \([notification.sound != nil ? "a sound" : nil, notification.badge != nil ? "a badge" : nil].compactMap { $0 }.joined(separator: " and ")))\n"
        case .silent:
            out += "(no banner: a silent background wake of \(appName))\n"
        case .none:
            out += "(nothing shown)\n"
        }
        out += "\n"
        var rows: [(String, String)] = [("Presentation", "\(notification.presentation.rawValue) (\(describe(notification.presentation)))")]
        if notification.hasVisibleText {
            if let title = notification.title { rows.append(("Title", title)) }
            if let subtitle = notification.subtitle { rows.append(("Subtitle", subtitle)) }
            if let body = notification.body { rows.append(("Body", body)) }
        }
        if let action = notification.actionTitle { rows.append(("Action", action)) }
        if notification.hidesActionButton { rows.append(("Action", "none (action-loc-key is null: OK button only)")) }
        if let image = notification.launchImage { rows.append(("Launch image", image)) }
        if let sound = notification.sound {
            var text = sound.name
            if sound.critical { text += " (critical\(sound.volume.map { ", volume \(formatNumber($0))" } ?? ""))" }
            if sound.playsDefault, sound.name != "default" { text += ": not in the bundle, the default sound plays" }
            rows.append(("Sound", text))
        } else {
            rows.append(("Sound", "none"))
        }
        rows.append(("Badge", notification.badge.map { $0 == 0 ? "0 (clears the badge)" : String($0) } ?? "unchanged"))
        rows.append(("Level", notification.interruptionLevel ?? "active (default)"))
        if let thread = notification.threadIdentifier { rows.append(("Thread", thread)) }
        if let category = notification.categoryIdentifier { rows.append(("Category", category)) }
        if let target = notification.targetContentIdentifier { rows.append(("Target content", target)) }
        if let score = notification.relevanceScore { rows.append(("Relevance", formatNumber(score))) }
        if let filter = notification.filterCriteria { rows.append(("Filter", filter)) }
        if let summary = notification.summaryArgument { rows.append(("Summary arg", summary + (notification.summaryArgumentCount.map { " ×\($0)" } ?? ""))) }
        if notification.serviceExtensionWillRun { rows.append(("Extension", "the Notification Service Extension runs first")) }
        if notification.wakesApp { rows.append(("Background", "the app is woken (content-available: 1)")) }
        rows.append(("Language", notification.language))
        let labelWidth = rows.map { DisplayWidth.of($0.0) }.max() ?? 0
        for (label, value) in rows {
            let lines = value.split(separator: "\n", omittingEmptySubsequences: false)
            out += "\(dim(DisplayWidth.pad(label, to: labelWidth)))  \(lines.first ?? "")\n"
            for line in lines.dropFirst() { out += String(repeating: " ", count: labelWidth + 2) + line + "\n" }
        }
        if !notification.diagnostics.isEmpty {
            out += "\n"
            for diagnostic in notification.diagnostics {
                out += colored(diagnostic) + "\n"
            }
        }
        return out
    }

    /// The banner alone.
    public func banner(_ notification: RenderedNotification, appName: String) -> String {
        var lines: [String] = []
        let time = "now"
        let header = DisplayWidth.truncate("▣ " + appName.uppercased(), width: width - DisplayWidth.of(time) - 1)
        lines.append(DisplayWidth.pad(header, to: width - DisplayWidth.of(time)) + time)
        if let title = notification.title, !title.isEmpty {
            lines.append(bold(DisplayWidth.truncate(firstLine(title), width: width)))
        }
        if let subtitle = notification.subtitle, !subtitle.isEmpty {
            lines.append(bold(DisplayWidth.truncate(firstLine(subtitle), width: width)))
        }
        if let body = notification.body, !body.isEmpty {
            var wrapped = DisplayWidth.wrap(body, width: width)
            if wrapped.count > Self.bannerBodyLines {
                wrapped = Array(wrapped.prefix(Self.bannerBodyLines))
                wrapped[Self.bannerBodyLines - 1] = DisplayWidth.truncate(wrapped[Self.bannerBodyLines - 1] + " …", width: width)
                if !wrapped[Self.bannerBodyLines - 1].hasSuffix("…") { wrapped[Self.bannerBodyLines - 1] += "…" }
            }
            lines += wrapped
        }
        if let action = notification.actionTitle {
            lines.append(DisplayWidth.pad("", to: max(0, width - DisplayWidth.of(action) - 4)) + "[ \(action) ]")
        }
        return frame(lines)
    }

    private func activityCard(_ notification: RenderedNotification, appName: String) -> String {
        var lines: [String] = [DisplayWidth.truncate("◉ LIVE ACTIVITY · " + appName.uppercased(), width: width)]
        if let activity = notification.activity {
            lines.append("event: \(activity.event ?? "(none)")")
            if let state = activity.contentState {
                for member in state.members {
                    lines.append(DisplayWidth.truncate("\(member.key): \(member.value.compactString)", width: width))
                }
            }
            if let stale = activity.staleDate { lines.append("stale: \(date(stale))") }
            if let dismissal = activity.dismissalDate { lines.append("dismissal: \(date(dismissal))") }
        }
        if let title = notification.title, !title.isEmpty { lines.append(bold(DisplayWidth.truncate(title, width: width))) }
        if let body = notification.body, !body.isEmpty { lines += DisplayWidth.wrap(body, width: width).prefix(Self.bannerBodyLines) }
        return frame(lines)
    }

    private func frame(_ lines: [String]) -> String {
        var out = "╭" + String(repeating: "─", count: width + 2) + "╮\n"
        for line in lines {
            // Bold markers take no columns; pad by the visible text.
            let visible = DisplayWidth.of(stripANSI(line))
            out += "│ " + line + String(repeating: " ", count: max(0, width - visible)) + " │\n"
        }
        out += "╰" + String(repeating: "─", count: width + 2) + "╯\n"
        return out
    }

    private func describe(_ presentation: RenderedNotification.Presentation) -> String {
        switch presentation {
        case .alert: "a visible alert"
        case .soundBadge: "sound and/or badge only"
        case .silent: "background wake, nothing shown"
        case .shownDespiteSilent: "meant silent, shown to the user"
        case .liveActivity: "Live Activity update"
        case .none: "nothing for the system to do"
        }
    }

    private func firstLine(_ text: String) -> String {
        String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }

    private func date(_ seconds: Double) -> String {
        CivilDate.iso8601(unixSeconds: seconds) ?? formatNumber(seconds)
    }

    private func formatNumber(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    private func bold(_ text: String) -> String { usesColor ? "\u{1B}[1m\(text)\u{1B}[22m" : text }
    private func dim(_ text: String) -> String { usesColor ? "\u{1B}[2m\(text)\u{1B}[22m" : text }

    private func colored(_ diagnostic: LocalizationDiagnostic) -> String {
        guard usesColor else { return diagnostic.description }
        let code = switch diagnostic.severity {
        case .error: "31"
        case .warning: "33"
        case .info: "36"
        }
        let text = diagnostic.description
        let marker = diagnostic.severity.rawValue + ":"
        guard let range = text.firstRange(of: marker) else { return text }
        var result = text
        result.replaceSubrange(range, with: "\u{1B}[\(code)m\(marker)\u{1B}[39m")
        return result
    }

    private func stripANSI(_ text: String) -> String {
        var result = ""
        var skipping = false
        for character in text {
            if character == "\u{1B}" { skipping = true; continue }
            if skipping { if character.isLetter { skipping = false }; continue }
            result.append(character)
        }
        return result
    }
}
