import HeraldJSON
import HeraldLint
import HeraldLocalization
import HeraldPayload
import HeraldProtocol

/// Turns a payload into what the device shows, for one app bundle and one user's languages.
///
/// ```swift
/// let bundle = try LocalizationBundle.load(path: "MyApp.app")
/// let renderer = NotificationRenderer(bundle: bundle, preferredLanguages: ["fr-CA", "en"])
/// let notification = renderer.render(payload)
/// notification.body        // "Jenna et Frank vous invitent à jouer au Monopoly"
/// ```
///
/// Rendering never fails: a missing key shows the key itself, a missing argument shows
/// nothing, a missing sound plays the default, and each such choice is recorded in
/// ``RenderedNotification/diagnostics``.
public struct NotificationRenderer: Sendable {
    /// The lookups and formatting.
    public let localizer: Localizer

    /// Creates a renderer from a localizer.
    public init(localizer: Localizer) {
        self.localizer = localizer
    }

    /// Creates a renderer for `bundle` (or none: keys then show as themselves) and a user who
    /// prefers `preferredLanguages`.
    public init(bundle: LocalizationBundle?, preferredLanguages: [String], options: Localizer.Options = .init()) {
        self.init(localizer: Localizer(bundle: bundle, preferredLanguages: preferredLanguages, options: options))
    }

    /// Renders a payload delivered with `headers`.
    public func render(_ payload: Payload, headers: APNsRequestHeaders = APNsRequestHeaders()) -> RenderedNotification {
        render(payload, headers: headers, userInfo: nil)
    }

    /// Renders `payload`; `userInfo` is the payload as received, when the caller has it parsed
    /// already (otherwise it is rebuilt from the payload).
    func render(_ payload: Payload, headers: APNsRequestHeaders, userInfo: JSONObject?) -> RenderedNotification {
        // Read in place, through its address: an `APS` copied out (as a borrowed argument is,
        // too) retains every one of its strings and objects.
        payload.withAPS { aps in render(aps: aps, of: payload, headers: headers, userInfo: userInfo) }
    }

    /// Renders `payload`, whose `aps` (an empty one when it has none) is at `aps`, valid for
    /// the call.
    private func render(aps: UnsafePointer<APS>, of payload: Payload, headers: APNsRequestHeaders, userInfo: JSONObject?) -> RenderedNotification {
        var diagnostics: [LocalizationDiagnostic] = []
        if !payload.hasAPS {
            diagnostics.append(LocalizationDiagnostic(.warning, "the payload has no \"aps\" dictionary; the system has nothing to show and only the app sees the custom keys"))
        }
        var content: AlertContent?
        var body: String?
        switch aps.pointee.alert {
        case .body(let text)?:
            body = text
        case .content(let alert)?:
            content = alert
        case nil:
            break
        }

        var title: String?
        var subtitle: String?
        var actionTitle: String?
        var hidesActionButton = false
        if let alert = content {
            title = text(
                field: "title", plain: alert.title, plainKey: "title", locKey: alert.titleLocKey?.wrapped, locKeyName: "title-loc-key",
                locArgs: alert.titleLocArgs?.wrapped, locArgsName: "title-loc-args", diagnostics: &diagnostics)
            subtitle = text(
                field: "subtitle", plain: alert.subtitle, plainKey: "subtitle", locKey: alert.subtitleLocKey, locKeyName: "subtitle-loc-key",
                locArgs: alert.subtitleLocArgs, locArgsName: "subtitle-loc-args", diagnostics: &diagnostics)
            body = text(
                field: "body", plain: alert.body, plainKey: "body", locKey: alert.locKey, locKeyName: "loc-key",
                locArgs: alert.locArgs, locArgsName: "loc-args", diagnostics: &diagnostics)
            switch alert.actionLocKey {
            case .value(let key)?:
                let looked = localizer.localizedString(forKey: key, arguments: nil)
                actionTitle = looked.text
                diagnostics += looked.diagnostics.map { $0.prefixed("action-loc-key \"\(key)\"") }
            case .null?:
                hidesActionButton = true
                diagnostics.append(LocalizationDiagnostic(.info, "action-loc-key is null: the alert has only an OK button, no action button (Apple's \(AppleDocument.legacyProgrammingGuide))"))
            case nil:
                break
            }
        }

        let sound = playedSound(aps.pointee.sound ?? content?.sound, diagnostics: &diagnostics)
        let badge = aps.pointee.badge
        let contentAvailable = aps.pointee.contentAvailable == 1
        let isActivity: Bool = if headers.pushType == .liveactivity { true } else if case .some = aps.pointee.event { true } else { false }
        let visible = [title, subtitle, body].contains { !($0 ?? "").isEmpty }
        let noticeable = visible || sound != nil || badge != nil
        let meantSilent = headers.pushType == .background || (contentAvailable && headers.pushType != .alert)

        let presentation: RenderedNotification.Presentation
        if isActivity {
            presentation = .liveActivity
        } else if meantSilent && noticeable {
            presentation = .shownDespiteSilent
            diagnostics.append(Self.finding(headers.pushType == .background ? .backgroundWithVisibleContent : .silentWithVisibleContent))
        } else if visible {
            presentation = .alert
        } else if sound != nil || badge != nil {
            presentation = .soundBadge
        } else if contentAvailable {
            presentation = .silent
        } else {
            presentation = .none
            if headers.pushType == .background {
                diagnostics.append(Self.finding(.backgroundWithoutContentAvailable))
            } else if case .some = aps.pointee.alert {
                diagnostics.append(LocalizationDiagnostic(.warning, "the alert has no text to show (no title, subtitle or body)"))
            }
        }
        if aps.pointee.mutableContent == 1 {
            diagnostics.append(LocalizationDiagnostic(.info, "mutable-content: 1: the app's Notification Service Extension runs first and may change this content"))
        }

        var interruptionLevel: String?
        if let level = aps.pointee.interruptionLevel {
            interruptionLevel = level.rawValue
            if !level.isKnown {
                diagnostics.append(LocalizationDiagnostic(.warning, "interruption-level \"\(level.rawValue)\" is not passive, active, time-sensitive or critical; the device uses active"))
            } else if level == .critical || sound.map(\.critical) == true {
                diagnostics.append(LocalizationDiagnostic(.info, "critical alerts need Apple's critical-alert entitlement; without it the device treats this as an ordinary alert"))
            }
        }

        var activity: RenderedNotification.ActivityUpdate?
        if isActivity {
            activity = RenderedNotification.ActivityUpdate(
                event: aps.pointee.event?.rawValue, timestamp: aps.pointee.timestamp, contentStateStorage: aps.pointee.contentStateStorage, staleDate: aps.pointee.staleDate,
                dismissalDate: aps.pointee.dismissalDate, attributesType: aps.pointee.attributesType, attributes: aps.pointee.attributes)
            if aps.pointee.timestamp == nil {
                diagnostics.append(LocalizationDiagnostic(.warning, "a Live Activity update without timestamp cannot be ordered; ActivityKit may ignore it"))
            }
        }

        return RenderedNotification(
            presentation: presentation, language: localizer.language, appName: localizer.appName,
            title: title, subtitle: subtitle, body: body, actionTitle: actionTitle, hidesActionButton: hidesActionButton,
            launchImage: content?.launchImage, sound: sound, badge: badge, threadIdentifier: aps.pointee.threadID,
            categoryIdentifier: aps.pointee.category, targetContentIdentifier: aps.pointee.targetContentID, interruptionLevel: interruptionLevel,
            relevanceScore: aps.pointee.relevanceScore, filterCriteria: aps.pointee.filterCriteria, summaryArgument: content?.summaryArg,
            summaryArgumentCount: content?.summaryArgCount, serviceExtensionWillRun: aps.pointee.mutableContent == 1,
            wakesApp: contentAvailable && (presentation == .silent || presentation == .alert || presentation == .none),
            activity: activity, userInfo: userInfo ?? Self.userInfo(of: payload), diagnostics: diagnostics)
    }

    /// One of title, subtitle and body: the `*-loc-key` when given (with its args), otherwise
    /// the plain value (which may itself be a Live Activity `{"loc-key", "loc-args"}`).
    private func text(
        field: String, plain: AlertText?, plainKey: String, locKey: String?, locKeyName: String, locArgs: [String]?, locArgsName: String,
        diagnostics: inout [LocalizationDiagnostic]
    ) -> String? {
        if let locKey {
            if plain != nil {
                diagnostics.append(LocalizationDiagnostic(.info, "\(field): both \(plainKey) and \(locKeyName) are given; Herald shows \(locKeyName), as CloudKit documents (Apple's “Generating a remote notification” does not say which one the device prefers)"))
            }
            let looked = localizer.localizedString(forKey: locKey, arguments: locArgs)
            diagnostics += looked.diagnostics.map { $0.prefixed("\(field) (\(locKeyName) \"\(locKey)\")") }
            return looked.text
        }
        if let locArgs, !locArgs.isEmpty {
            diagnostics.append(LocalizationDiagnostic(.warning, "\(field): \(locArgsName) without \(locKeyName) is ignored"))
        }
        switch plain {
        case .text(let value)?:
            return value
        case .localized(let key, let arguments)?:
            let looked = localizer.localizedString(forKey: key, arguments: arguments)
            diagnostics += looked.diagnostics.map { $0.prefixed("\(field) (loc-key \"\(key)\")") }
            return looked.text
        case nil:
            return nil
        }
    }

    private func playedSound(_ sound: Sound?, diagnostics: inout [LocalizationDiagnostic]) -> RenderedNotification.PlayedSound? {
        guard let sound else { return nil }
        let name: String
        var critical = false
        var volume: Double?
        switch sound {
        case .named(let value):
            name = value
        case .critical(let dictionary):
            name = dictionary.name ?? Sound.defaultName
            critical = dictionary.critical == 1
            volume = dictionary.volume
            if dictionary.name == nil {
                diagnostics.append(LocalizationDiagnostic(.warning, "the sound dictionary has no name; the device plays the default sound"))
            }
        }
        guard !name.isEmpty else {
            diagnostics.append(LocalizationDiagnostic(.info, "sound is an empty string: no sound plays"))
            return nil
        }
        var playsDefault = name == Sound.defaultName
        if !playsDefault {
            switch localizer.bundle?.containsFile(named: name) {
            case false?:
                playsDefault = true
                diagnostics.append(LocalizationDiagnostic(.warning, "sound \"\(name)\" is not in the app bundle; the device plays the default sound (Apple's \(AppleDocument.legacyProgrammingGuide), Table 5-1)"))
            case true?:
                break
            case nil:
                diagnostics.append(LocalizationDiagnostic(.info, "sound \"\(name)\": without an app bundle Herald cannot check that the file exists (if it does not, the default sound plays)"))
            }
            let lowered = name.lowercased()
            if !playsDefault, ![".aiff", ".aif", ".caf", ".wav"].contains(where: { lowered.hasSuffix($0) }) {
                diagnostics.append(LocalizationDiagnostic(.warning, "sound \"\(name)\" is not an .aiff, .wav or .caf file; system sounds must be Linear PCM, MA4, µLaw or aLaw in one of those containers"))
            }
        }
        return RenderedNotification.PlayedSound(name: name, critical: critical, volume: volume, playsDefault: playsDefault)
    }

    /// The payload as a JSON object, as `userInfo` carries it.
    static func userInfo(of payload: Payload) -> JSONObject {
        guard let bytes = try? payload.encode(), let document = try? JSONDocument(parsing: bytes),
              case .object(let object) = document.root.value else { return [:] }
        return object
    }
}

extension LocalizationDiagnostic {
    /// The same diagnostic with a context such as `body (loc-key "X")` in front of its message.
    func prefixed(_ context: String) -> LocalizationDiagnostic {
        var copy = self
        copy.message = "\(context): \(message)"
        return copy
    }
}

extension NotificationRenderer {
    /// What the rendering shows of a lint rule's concern, said as the rule says it (its
    /// severity, summary and id), so that a preview and `herald lint` agree and a preview with
    /// lint findings says it once.
    static func finding(_ id: RuleID) -> LocalizationDiagnostic {
        let rule = LintCatalog.rule(id)
        return LocalizationDiagnostic(rule.severity, rule.summary, rule: id.rawValue)
    }
}
