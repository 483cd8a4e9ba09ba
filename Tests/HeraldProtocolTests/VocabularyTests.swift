import Foundation
import HeraldProtocol
import Testing

@Suite("Push types and topics")
struct PushTypeTests {
    @Test("all eleven push types of reference §1.3")
    func elevenTypes() {
        #expect(PushType.allCases.map(\.rawValue).sorted() == [
            "alert", "background", "complication", "controls", "fileprovider", "liveactivity", "location", "mdm",
            "pushtotalk", "voip", "widgets",
        ])
        #expect(PushType(rawValue: "Alert") == nil)
        #expect(PushType(rawValue: "liveActivity") == nil)
    }

    @Test("topics for a bundle ID", arguments: [
        (PushType.alert, "com.example.app"),
        (.background, "com.example.app"),
        (.complication, "com.example.app.complication"),
        (.controls, "com.example.app.push-type.controls"),
        (.fileprovider, "com.example.app.pushkit.fileprovider"),
        (.liveactivity, "com.example.app.push-type.liveactivity"),
        (.location, "com.example.app.location-query"),
        (.pushtotalk, "com.example.app.voip-ptt"),
        (.voip, "com.example.app.voip"),
        (.widgets, "com.example.app.push-type.widgets"),
    ])
    func topics(_ type: PushType, _ topic: String) {
        #expect(type.topic(forBundleID: "com.example.app") == topic)
        let implied = PushType.implied(byTopic: topic)
        if type == .alert || type == .background {
            #expect(implied == nil)
        } else {
            #expect(implied == type)
        }
    }

    @Test("suffix inference picks the longest suffix and needs a bundle ID before it")
    func inference() {
        #expect(PushType.implied(byTopic: "com.x.voip-ptt") == .pushtotalk)
        #expect(PushType.implied(byTopic: "com.x.voip") == .voip)
        #expect(PushType.implied(byTopic: ".voip") == nil)
        #expect(PushType.implied(byTopic: "com.x.voipish") == nil)
        #expect(PushType.mdm.topic(forBundleID: "com.x") == nil)
    }

    @Test("payload limits: 4096, 5120 for voip and for broadcasts")
    func limits() {
        for type in PushType.allCases {
            #expect(type.payloadLimit == (type == .voip ? 5120 : 4096))
            #expect(PayloadLimit.limit(for: type, endpoint: .broadcast) == 5120)
        }
        #expect(PayloadLimit.limit(for: nil) == 4096)
        #expect(PayloadLimit.legacyBinary == 2048)
    }

    @Test("token-only types, platform gaps and the background priority rule")
    func facts() {
        #expect(PushType.allCases.filter(\.requiresTokenAuthentication) == [.fileprovider, .location])
        #expect(PushType.liveactivity.unavailablePlatforms == [.watchOS, .macOS, .tvOS])
        #expect(PushType.alert.unavailablePlatforms.isEmpty)
        #expect(PushType.background.requiredPriority == .conservePower)
        #expect(PushType.alert.requiredPriority == nil)
    }
}

@Suite("Headers and values")
struct HeaderValueTests {
    @Test("priorities: only 10, 5 and 1, written plainly")
    func priorities() {
        #expect(PushPriority(headerValue: "10") == .immediate)
        #expect(PushPriority(headerValue: "5") == .conservePower)
        #expect(PushPriority(headerValue: "1") == .lowPower)
        for bad in ["0", "7", "05", "+5", " 5", "10.0", "", "high"] {
            #expect(PushPriority(headerValue: bad) == nil, "\(bad)")
        }
        #expect(PushPriority.default == .immediate)
    }

    @Test("device tokens: lowercase, even hex, 32 to 100 bytes")
    func deviceTokens() throws {
        let upper = String(repeating: "AB", count: 32)
        let token = try DeviceToken(hex: upper)
        #expect(token.hex == String(repeating: "ab", count: 32))
        #expect(token.bytes == Array(repeating: 0xAB, count: 32))
        #expect(token.isConventionalLength)
        #expect(try DeviceToken(bytes: token.bytes) == token)
        #expect(try DeviceToken(hex: String(repeating: "0", count: 200)).byteCount == 100)
        #expect(try !DeviceToken(hex: String(repeating: "0", count: 66)).isConventionalLength)

        #expect(DeviceToken.problem(with: "") == .empty)
        #expect(DeviceToken.problem(with: String(repeating: "a", count: 63)) == .oddLength(digits: 63))
        #expect(DeviceToken.problem(with: "ab cd") == .invalidCharacter(" ", position: 2))
        #expect(DeviceToken.problem(with: String(repeating: "ab", count: 16)) == .unexpectedLength(bytes: 16))
        #expect(DeviceToken.problem(with: String(repeating: "ab", count: 101)) == .unexpectedLength(bytes: 101))
        #expect(DeviceTokenError.invalidCharacter("g", position: 4).description.contains("position 5"))
    }

    /// Every byte value, and non-ASCII characters, at each place of tokens of many lengths:
    /// the answer is the one a plain reading of the rule gives (the first character that is not
    /// a hex digit and its position in characters, else the count's problem).
    @Test("device tokens: every character judged as the rule says")
    func deviceTokenProblemsAgainstTheRule() {
        func expected(_ text: String) -> DeviceTokenError? {
            let characters = Array(text.unicodeScalars)
            if characters.isEmpty { return .empty }
            if let bad = characters.firstIndex(where: { !"0123456789abcdefABCDEF".unicodeScalars.contains($0) }) {
                return .invalidCharacter(String(characters[bad]), position: bad)
            }
            if characters.count % 2 == 1 { return .oddLength(digits: characters.count) }
            return (32...100).contains(characters.count / 2) ? nil : .unexpectedLength(bytes: characters.count / 2)
        }
        // The initializer refuses what the rule refuses, and keeps the rest in lowercase
        // (written out here: only A-F have a lowercase among hex digits).
        func expectToken(_ text: String) {
            let lowercase = String(String.UnicodeScalarView(text.unicodeScalars.map { "ABCDEF".unicodeScalars.contains($0) ? Unicode.Scalar($0.value + 32)! : $0 }))
            do throws(DeviceTokenError) {
                let token = try DeviceToken(hex: text)
                #expect(expected(text) == nil && token.hex == lowercase, "\(text.debugDescription)")
            } catch {
                #expect(error == expected(text), "\(text.debugDescription)")
            }
        }
        var generator = SystemRandomNumberGenerator()
        let strangers = (0...127).map { String(UnicodeScalar(UInt8($0))) } + ["é", "€", "😀", "\u{7F}", "\u{80}", "\u{FF}"]
        for length in [1, 2, 31, 63, 64, 65, 66, 200, 201, 202] {
            // Lowercase only, as nearly every token arrives, and mixed case.
            let lower = String((0..<length).map { _ in "0123456789abcdef".randomElement(using: &generator)! })
            #expect(DeviceToken.problem(with: lower) == expected(lower), "\(lower)")
            expectToken(lower)
            let hex = String((0..<length).map { _ in "0123456789abcdefABCDEF".randomElement(using: &generator)! })
            #expect(DeviceToken.problem(with: hex) == expected(hex), "\(hex)")
            expectToken(hex)
            for stranger in strangers {
                let at = Int.random(in: 0..<length, using: &generator)
                var characters = Array(hex)
                characters[at] = Character(stranger)
                let text = String(characters)
                #expect(DeviceToken.problem(with: text) == expected(text), "\(text.debugDescription)")
                expectToken(text)
                var lowerCharacters = Array(lower)
                lowerCharacters[at] = Character(stranger)
                expectToken(String(lowerCharacters))
            }
        }
        expectToken("")
    }

    @Test("apns-id: canonical lowercase UUIDs")
    func apnsID() throws {
        let id = try APNsID(parsing: "123E4567-E89B-12D3-A456-4266554400A0")
        #expect(id.uuidString == "123e4567-e89b-12d3-a456-4266554400a0")
        #expect(APNsID.isCanonical("123e4567-e89b-12d3-a456-4266554400a0"))
        #expect(!APNsID.isCanonical("123E4567-E89B-12D3-A456-4266554400A0"))
        #expect(throws: APNsIDError.wrongLength(32)) { try APNsID(parsing: "123e4567e89b12d3a4564266554400a0") }
        #expect(throws: APNsIDError.expectedHyphen(position: 8)) { try APNsID(parsing: "123e4567xe89b-12d3-a456-4266554400a0") }
        #expect(throws: APNsIDError.expectedHexDigit(position: 0)) { try APNsID(parsing: "g23e4567-e89b-12d3-a456-4266554400a0") }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100 {
            let random = APNsID.random(using: &generator)
            #expect(APNsID.isCanonical(random.uuidString))
            #expect(Array(random.uuidString)[14] == "4")
        }
    }

    /// The 8-4-4-4-12 form written as a regular expression says what parses (Foundation's
    /// parser on Linux also takes spaces and short groups, so it cannot say that), and
    /// Foundation's `UUID` says what it parses to, in lowercase, whatever the case.
    @Test("apns-id: what parses, and to what, against a regular expression and Foundation")
    func apnsIDAgainstOracles() throws {
        let form = try Regex("^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789abcdefABCDEF-g Gé".utf8)
        var parsed = 0
        for round in 0..<20_000 {
            var bytes = Array(RandomIdentifier.uuid().utf8)
            // Some with one byte changed, some in mixed case, some cut short.
            switch round % 4 {
            case 0: bytes[Int.random(in: 0..<36, using: &generator)] = alphabet.randomElement(using: &generator)!
            case 1: bytes = bytes.map { (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) && Bool.random(using: &generator) ? $0 - 32 : $0 }
            case 2: bytes.removeLast(Int.random(in: 0...2, using: &generator))
            default: break
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let ours = try? APNsID(parsing: text)
            #expect((ours != nil) == (text.wholeMatch(of: form) != nil), "\(text)")
            if let ours {
                parsed += 1
                #expect(ours.uuidString == UUID(uuidString: text)?.uuidString.lowercased(), "\(text)")
                #expect(APNsID.isCanonical(text) == (text == ours.uuidString), "\(text)")
            }
        }
        #expect(parsed > 10_000)
    }

    @Test("collapse id: at most 64 UTF-8 bytes")
    func collapseID() throws {
        _ = try CollapseID(String(repeating: "a", count: 64))
        #expect(throws: CollapseIDError.tooLong(bytes: 65)) { try CollapseID(String(repeating: "a", count: 65)) }
        // 22 Hangul syllables are 66 bytes though only 22 characters.
        #expect(throws: CollapseIDError.tooLong(bytes: 66)) { try CollapseID(String(repeating: "안", count: 22)) }
        #expect(throws: CollapseIDError.empty) { try CollapseID("") }
    }

    @Test("expiration: epoch seconds or 0")
    func expiration() throws {
        #expect(try Expiration(headerValue: "0") == .immediately)
        #expect(try Expiration(headerValue: "1767225600") == .at(epochSeconds: 1_767_225_600))
        #expect(try Expiration(headerValue: "1767225600000").looksLikeMilliseconds)
        #expect(try !Expiration(headerValue: "1767225600").looksLikeMilliseconds)
        #expect(throws: ExpirationError.notDigits("-1")) { try Expiration(headerValue: "-1") }
        #expect(throws: ExpirationError.notDigits("1.5")) { try Expiration(headerValue: "1.5") }
        #expect(throws: ExpirationError.empty) { try Expiration(headerValue: "") }
        #expect(throws: ExpirationError.outOfRange("99999999999999999999")) { try Expiration(headerValue: "99999999999999999999") }
    }

    @Test("environments, hosts and paths")
    func environments() throws {
        #expect(APNsEnvironment.production.host == "api.push.apple.com")
        #expect(APNsEnvironment.sandbox.host == "api.sandbox.push.apple.com")
        #expect(APNsEnvironment(host: "api.development.push.apple.com") == .sandbox)
        #expect(APNsEnvironment(host: "API.PUSH.APPLE.COM") == .production)
        #expect(APNsEnvironment(host: "example.com") == nil)
        #expect(APNsEnvironment.sandbox.channelManagementPort == 2195)
        #expect(APNsEnvironment.production.channelManagementPort == 2196)
        let token = try DeviceToken(hex: String(repeating: "0f", count: 32))
        #expect(APNsPath.device(token) == "/3/device/" + String(repeating: "0f", count: 32))
        #expect(APNsPath.allChannels(bundleID: "com.x") == "/1/apps/com.x/all-channels")
    }

    /// Every name the readers look for, in other cases, one byte off at each place and of
    /// each length near theirs: a name is recognised exactly when it is one of the ten.
    @Test("header names: the ten the readers look for, and nothing else")
    func headerNames() {
        let wanted: [String: APNsHeaderName] = [
            ":method": .method, ":path": .path, "apns-id": .id, "apns-collapse-id": .collapseID, "apns-priority": .priority,
            "apns-push-type": .pushType, "apns-expiration": .expiration, "apns-topic": .topic, "apns-channel-id": .channelID,
            "authorization": .authorization,
        ]
        #expect(Set(wanted.values) == Set(APNsHeaderName.allCases))
        var names = Array(wanted.keys) + [":scheme", ":authority", "content-length", "apns-unique-id", "apns-request-id", "", "a", "x-apns-topic"]
        for name in wanted.keys {
            let bytes = Array(name.utf8)
            names.append(name.uppercased())
            names.append(name + "s")
            names.append(String(name.dropLast()))
            names.append(String(repeating: "x", count: bytes.count))
            for at in bytes.indices {
                var changed = bytes
                changed[at] = changed[at] == UInt8(ascii: "z") ? UInt8(ascii: "y") : UInt8(ascii: "z")
                names.append(String(decoding: changed, as: UTF8.self))
            }
        }
        for name in names {
            #expect(APNsHeaderName(lowercase: name) == wanted[name], "\(name)")
            if let header = APNsHeaderName(lowercase: name) { #expect(header.text == name) }
        }
        // The pass over a request's fields reads the same names in place: the first value of each.
        let fields = APNsHeaderFields(names.enumerated().map { APNsHeaderFields.Field(lowercaseName: $0.element, value: "v\($0.offset)") }
            + wanted.keys.map { APNsHeaderFields.Field(lowercaseName: $0, value: "repeat") })
        var known = APNsHeaderFields.KnownValues()
        fields.read(into: &known)
        let read: [APNsHeaderName: String?] = [
            .method: known.method, .path: known.path, .id: known.id, .collapseID: known.collapseID, .priority: known.priority,
            .pushType: known.pushType, .expiration: known.expiration, .topic: known.topic, .channelID: known.channelID,
            .authorization: known.authorization,
        ]
        #expect(read.count == APNsHeaderName.allCases.count)
        for (name, header) in wanted {
            #expect(read[header] == .some(names.firstIndex(of: name).map { "v\($0)" }), "\(name)")
        }
        var none = APNsHeaderFields.KnownValues()
        APNsHeaderFields().read(into: &none)
        #expect(none.path == nil)
    }

    /// Prefixes and strings of ASCII and other characters, a combining mark just past the
    /// prefix included: the rest is the bytes past the prefix, when the bytes start with it.
    @Test("the rest of a string after an ASCII prefix, by bytes")
    func suffixAfterPrefix() {
        let prefixes = ["", "/", "/3/device/", "/4/broadcasts/apps/", "bearer "]
        let rests = ["", "a", "é", "\u{301}x", "0123456789abcdef0123456789abcdef", "😀/3/device/", " ", "/3/device/"]
        for prefix in prefixes {
            for start in prefixes + ["/3/devic", "/3/Device/", "x"] {
                for rest in rests {
                    let text = start + rest
                    let bytes = Array(text.utf8), head = Array(prefix.utf8)
                    let expected = bytes.starts(with: head) ? String(decoding: bytes[head.count...], as: UTF8.self) : nil
                    #expect(text.suffix(afterASCIIPrefix: prefix) == expected, "\(text.debugDescription) after \(prefix.debugDescription)")
                }
            }
        }
    }

    /// `authorization` values built from schemes in every case and near misses, spaces and
    /// tokens: the answer is the rule's, read scalar by scalar (the scheme `bearer` in ASCII
    /// letters of any case, one space, then any spaces, then a token that is not empty).
    @Test("authorization: the provider token after bearer, as the rule reads it")
    func providerTokens() {
        func expected(_ value: String) -> String? {
            var scalars = Array(value.unicodeScalars)
            let scheme = Array("bearer ".unicodeScalars)
            guard scalars.count > scheme.count else { return nil }
            for (sent, wanted) in zip(scalars, scheme) {
                let folded = ("A"..."Z").contains(sent) ? Unicode.Scalar(sent.value + 32)! : sent
                if folded != wanted { return nil }
            }
            scalars.removeFirst(scheme.count)
            while scalars.first == " " { scalars.removeFirst() }
            return scalars.isEmpty ? nil : String(String.UnicodeScalarView(scalars))
        }
        let schemes = [
            "bearer ", "Bearer ", "BEARER ", "bEaReR ", "bearer", "bearer  ", "bearer\t", "bearerx", "beare ", "basic ", "bearér ",
            "ｂearer ", "bearer\u{301} ", "bearer\u{0}", "Bearer\u{0}", " bearer ", "", "b", "BEARE", "bearer \u{301}",
        ]
        let tokens = ["", " ", "   ", "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJYIn0.c2ln", "a", "tok en", "é", "😀x", "\u{301}abc", " a "]
        for scheme in schemes {
            for token in tokens {
                let value = scheme + token
                #expect(APNsHeader.providerToken(inAuthorization: value) == expected(value), "\(value.debugDescription)")
            }
        }
    }
}

@Suite("Reasons")
struct ReasonTests {
    static let deviceReasons: [(String, Int)] = [
        ("BadCollapseId", 400), ("BadDeviceToken", 400), ("BadExpirationDate", 400), ("BadMessageId", 400),
        ("BadPriority", 400), ("BadTopic", 400), ("DeviceTokenNotForTopic", 400), ("DuplicateHeaders", 400),
        ("IdleTimeout", 400), ("InvalidPushType", 400), ("MissingDeviceToken", 400), ("MissingTopic", 400),
        ("PayloadEmpty", 400), ("TopicDisallowed", 400), ("BadCertificate", 403), ("BadCertificateEnvironment", 403),
        ("ExpiredProviderToken", 403), ("Forbidden", 403), ("InvalidProviderToken", 403), ("MissingProviderToken", 403),
        ("UnrelatedKeyIdInToken", 403), ("BadEnvironmentKeyIdInToken", 403), ("BadPath", 404), ("MethodNotAllowed", 405),
        ("ExpiredToken", 410), ("Unregistered", 410), ("PayloadTooLarge", 413), ("TooManyProviderTokenUpdates", 429),
        ("TooManyRequests", 429), ("InternalServerError", 500), ("ServiceUnavailable", 503), ("Shutdown", 503),
    ]

    @Test("the 32 documented device reasons with their statuses")
    func deviceReasonTable() {
        #expect(Self.deviceReasons.count == 32)
        for (string, status) in Self.deviceReasons {
            let reason = APNsReason(rawValue: string)
            #expect(reason.isKnown, "\(string)")
            #expect(reason.status == status, "\(string)")
            #expect(reason.info?.endpoints.contains(.device) == true, "\(string)")
            #expect(reason.info?.isDocumented == true)
        }
        let documentedDevice = APNsReason.all.filter { $0.info!.endpoints.contains(.device) && $0.info!.isDocumented }
        #expect(documentedDevice.count == 32)
    }

    @Test("broadcast reasons and the observed spelling")
    func broadcastReasons() {
        for string in ["FeatureNotEnabled", "MissingChannelId", "BadChannelId", "ChannelNotRegistered", "BadRequestParams",
                       "BadRequestPayload", "MissingPushType", "CannotCreateChannelConfig"] {
            #expect(APNsReason(rawValue: string).status == 400, "\(string)")
            #expect(APNsReason(rawValue: string).info?.endpoints == [.broadcast])
        }
        #expect(APNsReason.topicMismatch.status == 403)
        #expect(APNsReason.badEnvironmentKeyInToken.status == 403)
        #expect(APNsReason.badEnvironmentKeyInToken.info?.isDocumented == false)
        #expect(Set(APNsReason.all).count == APNsReason.all.count)
    }

    @Test("unknown reasons are kept verbatim")
    func unknown() {
        let reason = APNsReason(rawValue: "SomethingNew")
        #expect(!reason.isKnown)
        #expect(reason.status == nil)
        #expect(reason.description == "SomethingNew")
    }

    @Test("Apple's retry guidance")
    func retry() {
        for never in [APNsReason.badDeviceToken, .deviceTokenNotForTopic, .forbidden, .expiredToken, .unregistered, .payloadTooLarge] {
            #expect(never.retry == .doNotRetry, "\(never)")
        }
        #expect(APNsReason.tooManyRequests.retry == .retryAfterDelay)
        #expect(APNsReason.internalServerError.retry == .retryWithBackoff)
        #expect(APNsReason.expiredProviderToken.retry == .refreshProviderTokenAndRetry)
        #expect(APNsReason.badTopic.retry == .retryAfterFixingRequest)
        #expect(APNsStatus.meaning(of: 413) != nil)
        #expect(APNsStatus.meaning(of: 418) == nil)
    }
}
