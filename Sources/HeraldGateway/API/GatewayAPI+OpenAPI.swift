import HeraldHTTPAPI
import HeraldJSON
import HeraldProtocol

extension GatewayAPI {
    static let documentedRoutes = DocumentedRoutes(openAPIDocument)

    /// Zones the document gives as examples (the API takes any of the system's database).
    static let sampleZones = ["UTC", "Europe/Paris", "America/New_York", "Asia/Tokyo", "Australia/Sydney", "America/Sao_Paulo", "Asia/Kolkata"]

    /// The methods the OpenAPI document gives `path`, if it documents the path.
    static func methods(forPath path: String) -> [String]? { documentedRoutes.methods(forPath: path) }

    /// The OpenAPI 3.1 document of the gateway's API, served at `/v1/openapi.json`.
    static let openAPIDocument: JSONValue = {
        let ref = OpenAPI.ref, json = OpenAPI.jsonResponse, body = OpenAPI.body
        func parameter(_ name: String, in location: String = "query", _ schema: JSONValue, _ description: String) -> JSONValue {
            OpenAPI.parameter(name, in: location, schema, description)
        }
        let error = json("An error: what is wrong, and where (a JSON Pointer into the body)", ref("Error"))
        let done: JSONValue = ["description": "Done"]
        let string: JSONValue = ["type": "string"]
        let nonEmpty: JSONValue = ["type": "string", "minLength": 1]
        let tag: JSONValue = ["type": "string", "pattern": "^[^,]+$"]
        let appID: JSONValue = ["type": "string", "pattern": "^[A-Za-z0-9._-]{1,128}$"]
        let integer: JSONValue = ["type": "integer"]
        let time: JSONValue = ["type": "string", "format": "date-time", "description": "RFC 3339, UTC, milliseconds: 2026-11-27T12:40:54.123Z"]
        let nullableTime: JSONValue = ["type": ["string", "null"], "format": "date-time", "description": "RFC 3339, UTC, milliseconds"]
        let app = parameter("app", in: "path", string, "The app's id")
        let limit = parameter("limit", ["type": "integer", "minimum": 1, "maximum": 10000], "At most this many (default 1000)")
        let activity = parameter("id", in: "path", string, "The activity's id (yours)")
        let activityName: JSONValue = ["type": "string", "minLength": 1, "maxLength": 128, "pattern": "^[^/\\u0000-\\u001f]+$"]
        let hexToken: JSONValue = ["type": "string", "pattern": "^([0-9A-Fa-f]{2}){32,100}$"]
        let nullableText: JSONValue = ["type": ["string", "null"]]
        let seconds: JSONValue = ["type": "integer", "minimum": 0, "maximum": 99_999_999_999, "description": "Unix seconds"]
        func object(_ properties: [(String, JSONValue)], required: [String] = [], closed: Bool = false) -> JSONValue {
            var members = JSONObject()
            for (name, schema) in properties { members.members.append(.init(key: name, value: schema)) }
            var schema: JSONValue = ["type": "object", "properties": .object(members), "required": .array(required.map { .string($0) })]
            if closed { schema = adding("additionalProperties", false, to: schema) }
            return schema
        }
        func adding(_ key: String, _ value: JSONValue, to schema: JSONValue) -> JSONValue {
            var members = schema.objectValue ?? JSONObject()
            members.members.append(.init(key: key, value: value))
            return .object(members)
        }
        let authenticated: (JSONValue) -> JSONValue = { value in
            var operation = value.objectValue ?? JSONObject()
            operation.members.append(.init(key: "security", value: [["apiKey": []]]))
            var responses = operation["responses"]?.objectValue ?? JSONObject()
            responses.members.append(.init(key: "401", value: error))
            responses.members.append(.init(key: "403", value: error))
            responses.members.append(.init(key: "503", value: OpenAPI.jsonResponse(
                "The database is unreachable, or its disk is full: nothing was changed; try again after Retry-After seconds", ref("Error"))))
            operation.members.removeAll { $0.key == "responses" }
            operation.members.append(.init(key: "responses", value: .object(responses)))
            return .object(operation)
        }
        let tokens: JSONValue = ["type": "array", "items": ["type": "string", "pattern": "^([0-9a-fA-F]{2}){32,100}$"], "minItems": 1]
        // An app's definition; as a patch, every member optional (nested ones too: a patch merges)
        // and the optional ones nullable (null removes), without the id.
        func appSchema(patch: Bool) -> JSONValue {
            func orNull(_ schema: JSONValue) -> JSONValue {
                guard patch, var members = schema.objectValue, let type = members["type"] else { return schema }
                members.members.removeAll { $0.key == "type" }
                members.members.insert(.init(key: "type", value: .array((type.arrayValue ?? [type]) + ["null"])), at: 0)
                return .object(members)
            }
            func required(_ names: [String]) -> [String] { patch ? [] : names }
            var members: [(String, JSONValue)] = patch ? [] : [("id", appID)]
            members += [
                ("bundleId", ["type": "string", "pattern": "^[A-Za-z0-9.-]{1,128}$", "description": "Letters, digits, hyphens and periods"]),
                ("environment", ["type": "string", "enum": ["sandbox", "production"]]),
                ("server", orNull(object([
                    ("host", nonEmpty), ("port", ["type": "integer", "minimum": 1, "maximum": 65535]),
                    ("caCertificate", orNull(["type": "string", "pattern": "-----BEGIN CERTIFICATE-----", "description": "A CA to trust besides the system's, as PEM text (a herald mock's)"])),
                    ("plaintext", ["type": "boolean", "description": "HTTP/2 without TLS, for herald mock --plaintext"]),
                    ("channelPort", orNull(["type": "integer", "minimum": 1, "maximum": 65535, "description": "Broadcast channel management's port on host (a herald mock's --channel-port)"])),
                ], required: required(["host", "port"]), closed: true))),
                ("token", object([
                    ("key", ["type": "string", "description": "The .p8 file's text (a PEM P-256 private key)"]),
                    ("keyId", ["type": "string", "pattern": "^[A-Z0-9]{10}$"]), ("teamId", ["type": "string", "pattern": "^[A-Z0-9]{10}$"]),
                ], required: required(["key", "keyId", "teamId"]), closed: true)),
                ("certificate", object([
                    ("p12", ["type": "string", "contentEncoding": "base64", "pattern": "^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"]), ("password", string),
                ], required: required(["p12"]), closed: true)),
                ("rateLimit", orNull(["type": "integer", "minimum": 1, "maximum": 1_000_000, "description": "Sends per second at most, per gateway process"])),
                ("concurrency", ["type": "integer", "minimum": 1, "maximum": 100_000, "description": "Requests in flight at most, per gateway process (default 1000)"]),
                ("timeZone", ["type": "string", "enum": .array(Self.sampleZones.map { .string($0) }), "description": "The zone of devices registered without one, for local-time schedules (UTC by default; any IANA name; these are examples)"]),
                ("webhook", orNull(object([
                    ("url", ["type": "string", "format": "uri", "pattern": "^https?://[^/?#]+"]), ("secret", ["type": "string", "minLength": 16]),
                    ("events", ["type": "array", "items": ["type": "string", "enum": .array(GatewayApp.Webhook.Event.allCases.map { .string($0.rawValue) })],
                                "description": "Default: token.dead and app.paused"]),
                ], required: required(["url", "secret"]), closed: true))),
            ]
            return object(members, required: required(["bundleId"]), closed: true)
        }
        // What the dry run of a submission answers.
        let checked = object([
            ("accepted", ["type": "boolean"]), ("status", integer), ("message", string), ("pointer", nullableText),
            ("recipients", integer), ("findings", ["type": "array", "items": ["type": "object"]]),
            ("previews", ["type": "array", "items": object([("language", nullableText), ("rendered", ["type": ["object", "null"]])])]),
        ], required: ["accepted", "status", "message", "findings", "previews"])
        let paths: JSONValue = [
            "/healthz": ["get": OpenAPI.operation("Alive, and Herald's version", responses: ["200": json("Alive", object([("status", string), ("version", string)]))])],
            "/readyz": ["get": OpenAPI.operation("Ready: the database answers and the process takes requests", responses: [
                "200": json("Ready", object([("status", string)])), "503": error,
            ])],
            "/metrics": ["get": OpenAPI.operation("Prometheus metrics", responses: ["200": ["description": "The text exposition format", "content": ["text/plain": ["schema": string]]]])],
            "/v1/openapi.json": ["get": OpenAPI.operation("This document", responses: ["200": json("OpenAPI 3.1", ["type": "object"])])],
            "/v1/apps": [
                "post": authenticated(OpenAPI.operation(
                    "Register an app with its credentials (administrators)", body: body(ref("AppDefinition")),
                    responses: [
                        "201": json("The app, credentials hidden", ref("App")), "400": error, "409": json("An app has this id: change it with PATCH", ref("Error")),
                        "422": json("The credentials cannot be used (not a P-256 key, not a PKCS#12 file, a wrong password, a certificate for another app, environment, or expired)", ref("Error")),
                    ])),
                "get": authenticated(OpenAPI.operation("The apps the key may use", responses: ["200": json("Apps", object([("apps", ["type": "array", "items": ref("App")])]))])),
            ],
            "/v1/apps/{app}": [
                "get": authenticated(OpenAPI.operation("An app, credentials hidden, and whether it sends or is paused", parameters: [app], responses: ["200": json("The app", ref("App")), "404": error])),
                "patch": authenticated(OpenAPI.operation(
                    "Change an app in place (administrators): a JSON Merge Patch of its definition (null removes a member; token replaces certificate and the reverse), checked as at registration; devices, notifications and history stay. Changing credentials, environment, server or bundleId resumes a paused app",
                    parameters: [app], body: body(ref("AppPatch")),
                    responses: [
                        "200": json("The app as changed", ref("App")), "400": error, "404": error,
                        "422": json("The credentials cannot be used", ref("Error")),
                    ])),
                "delete": authenticated(OpenAPI.operation(
                    "Delete an app with its devices, notifications and outcomes (administrators), at once: sends under way finish", parameters: [app],
                    responses: ["200": json("What was removed", object([("deleted", object([
                        ("app", string), ("devices", integer), ("notifications", integer), ("deliveries", integer), ("webhookEvents", integer),
                    ]))])), "404": error])),
            ],
            "/v1/apps/{app}/resume": [
                "post": authenticated(OpenAPI.operation(
                    "Resume a paused app's sending without changing it (administrators), when what APNs refused was fixed elsewhere (the clock, Apple's account)",
                    parameters: [app], responses: ["200": json("The app", ref("App")), "404": error])),
            ],
            "/v1/keys": [
                "post": authenticated(OpenAPI.operation(
                    "Make an API key, for every app (no apps) or for some (administrators)",
                    body: body(object([("name", nonEmpty), ("apps", ["type": "array", "items": appID, "minItems": 1])], required: ["name"], closed: true)),
                    responses: ["201": json("The key: shown once", ref("Key")), "400": error])),
                "get": authenticated(OpenAPI.operation("The keys (never their secrets)", responses: ["200": json("Keys", object([("keys", ["type": "array", "items": ref("Key")])]))])),
            ],
            "/v1/key": [
                "get": authenticated(OpenAPI.operation("The key this request is made with (any key): its id, name and apps", responses: ["200": json("The key", ref("Key"))])),
            ],
            "/v1/keys/{id}": [
                "delete": authenticated(OpenAPI.operation(
                    "Revoke a key (not the last administrator's)", parameters: [parameter("id", in: "path", string, "The key's id")],
                    responses: ["204": done, "404": error, "409": json("The last administrator's key", ref("Error"))])),
            ],
            "/v1/apps/{app}/devices": [
                "post": authenticated(OpenAPI.operation(
                    "Register device tokens (a dead token registered again is active again), with tags for audiences",
                    parameters: [app], body: body(object([
                        ("tokens", tokens),
                        ("tags", ["type": "array", "items": tag, "description": "Replaces the devices' tags (omit it to keep them)"]),
                        ("addTags", ["type": "array", "items": tag, "description": "Tags added to the devices'"]),
                        ("removeTags", ["type": "array", "items": tag, "description": "Tags removed from the devices'"]),
                        ("user", ["type": "string", "minLength": 1, "maxLength": 256, "description": "Your own id for the person the devices belong to, at most 256 bytes of UTF-8 (a token registered again for another user moves to it)"]),
                        ("language", ["type": "string", "pattern": "^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*$", "description": "The device's preferred language, BCP 47"]),
                        ("timeZone", ["type": "string", "enum": .array(Self.sampleZones.map { .string($0) }), "description": "The device's time zone: any IANA name of the system's database (these are examples)"]),
                    ], required: ["tokens"], closed: true)),
                    responses: ["200": json("How many", object([("registered", integer)])), "400": error, "404": error])),
                "get": authenticated(OpenAPI.operation(
                    "Registered devices in token order",
                    parameters: [app, parameter("state", ["type": "string", "enum": ["active", "dead"]], "Only active or dead tokens"),
                                 parameter("tag", string, "Only devices with this tag"),
                                 parameter("user", string, "Only this user's devices"),
                                 parameter("prefix", ["type": "string", "pattern": "^[0-9A-Fa-f]{1,200}$"], "Only tokens that start with these hex digits"),
                                 parameter("deadSince", ["type": "string", "format": "date-time"], "Only tokens that died at or after this time (RFC 3339)"), parameter("after", string, "The token to continue after (paging)"), limit],
                    responses: ["200": json("Devices", object([("devices", ["type": "array", "items": ref("Device")]), ("next", ["type": ["string", "null"]])])), "400": error, "404": error])),
            ],
            "/v1/apps/{app}/users/{user}/devices": [
                "get": authenticated(OpenAPI.operation(
                    "A user's devices", parameters: [app, parameter("user", in: "path", string, "Your id for the user"), parameter("after", string, "The token to continue after (paging)"), limit],
                    responses: ["200": json("Devices", object([("devices", ["type": "array", "items": ref("Device")]), ("next", ["type": ["string", "null"]])])), "400": error, "404": error])),
            ],
            "/v1/apps/{app}/users/{user}": [
                "delete": authenticated(OpenAPI.operation(
                    "Erase a user: its devices, and every stored copy of its id and tokens (deliveries keep their outcome, without the token; those still queued are cancelled)",
                    parameters: [app, parameter("user", in: "path", string, "Your id for the user")],
                    responses: ["200": json("What was erased", object([("erased", object([
                        ("devices", integer), ("deliveries", integer), ("cancelled", integer), ("webhookEvents", integer),
                        ("startTokens", integer), ("activities", ["type": "integer", "description": "Live Activities that no longer name the user"]),
                    ]))])), "404": error])),
            ],
            "/v1/apps/{app}/devices/{token}": [
                "delete": authenticated(OpenAPI.operation(
                    "Forget a device", parameters: [app, parameter("token", in: "path", string, "The device token")], responses: ["204": done, "400": error, "404": error])),
            ],
            "/v1/apps/{app}/notifications": [
                "get": authenticated(OpenAPI.operation(
                    "The app's notifications, newest first, without counts (GET one for them); pages stay whole while submissions arrive",
                    parameters: [
                        app, parameter("status", ["type": "string", "enum": .array(JobStatus.allCases.map { .string($0.rawValue) })], "Only those scheduled, sending, done or cancelled"),
                        parameter("from", ["type": "string", "format": "date-time"], "Only those created at or after this time (RFC 3339)"),
                        parameter("until", ["type": "string", "format": "date-time"], "Only those created before this time (RFC 3339)"),
                        parameter("before", ["type": "string", "pattern": "^-?[0-9]{1,18}\\..+$"], "The \"next\" of the page before"),
                        parameter("limit", ["type": "integer", "minimum": 1, "maximum": 10000], "At most this many (default 100)"),
                    ],
                    responses: ["200": json("Notifications", object([("notifications", ["type": "array", "items": ref("Notification")]), ("next", ["type": ["string", "null"]])])), "400": error, "404": error])),
                "post": authenticated(OpenAPI.operation(
                    "Submit a notification for devices; acknowledged once stored. Refused, with the lint findings, when APNs would reject it",
                    parameters: [app, parameter("Idempotency-Key", in: "header", ["type": "string", "minLength": 1, "maxLength": 255], "Makes a retried submission a no-op: the same key and body answer the first notification")],
                    body: body(ref("Submission")),
                    responses: [
                        "202": json("Queued", ref("Notification")), "200": json("Already submitted with this Idempotency-Key", ref("Notification")),
                        "400": error, "404": error, "409": error, "413": error,
                        "422": json("The payload has lint errors (what APNs rejects, and what the device would ignore or misread), with the findings; or its expiration is past", ref("Error")),
                    ])),
            ],
            "/v1/apps/{app}/notifications/check": [
                "post": authenticated(OpenAPI.operation(
                    "A dry run of a submission: whether it would be accepted (or the status and message it would get: a lint error, a past expiration, an empty audience), its lint findings, the audience's size, and each variant rendered as a device shows it. Nothing is stored or sent. A body that is not a JSON object is answered 400",
                    parameters: [app],
                    body: body(["type": "object", "description": "A draft of a submission (see Submission): any object, since the answer says what POST would say about it"]),
                    responses: [
                        "200": json("What POST would answer: accepted with its findings (warnings), the audience's size and the previews; or refused with the status, message and findings", checked),
                        "400": error, "404": error, "413": error,
                    ])),
            ],
            "/v1/apps/{app}/webhooks": [
                "get": authenticated(OpenAPI.operation(
                    "The app's webhook events, newest first, with what the last attempt got (status, milliseconds, the answer's first 256 bytes)",
                    parameters: [app, parameter("before", ["type": "integer", "minimum": 1, "maximum": 9_223_372_036_854_775_807], "The \"next\" of the page before"),
                                 parameter("limit", ["type": "integer", "minimum": 1, "maximum": 10000], "At most this many (default 50)")],
                    responses: ["200": json("Webhook events", object([
                        ("url", nullableText), ("next", ["type": ["integer", "null"]]),
                        ("events", ["type": "array", "items": object([
                            ("id", integer), ("type", nullableText), ("state", string), ("attempts", integer), ("lastError", nullableText),
                            ("lastStatus", ["type": ["integer", "null"]]), ("lastLatencyMs", ["type": ["integer", "null"]]), ("lastAnswer", nullableText),
                            ("createdAt", time), ("sentAt", ["type": ["string", "null"]]), ("dueAt", ["type": ["string", "null"]]),
                        ])]),
                    ])), "400": error, "404": error])),
            ],
            "/v1/stats": [
                "get": authenticated(OpenAPI.operation(
                    "This process's last hour in ten-second buckets (tokens submitted, outcomes, the queue's depth), counting the apps the key may use, and each app's APNs connections here",
                    parameters: [parameter("minutes", ["type": "integer", "minimum": 1, "maximum": 60], "How far back (default 60)")],
                    responses: ["200": json("Stats", object([
                        ("worker", string), ("bucketSeconds", integer),
                        ("buckets", ["type": "array", "items": object([
                            ("at", time), ("submitted", integer), ("accepted", integer), ("rejected", integer), ("retried", integer), ("expired", integer),
                            ("queueWaiting", ["type": ["integer", "null"]]),
                        ])]),
                        ("apps", ["type": "array", "items": object([
                            ("app", string), ("state", string),
                            ("apns", ["type": "string", "enum": ["connected", "refusing", "idle", "unused"], "description": "This process's connections to the app's APNs endpoint: open, failing and backing off, none open, or not used yet"]),
                            ("connections", ["type": ["integer", "null"]]), ("failedAttempts", integer), ("lastFailure", nullableText),
                            ("nextAttemptIn", ["type": ["number", "null"], "description": "Seconds until the next connection attempt, while refusing"]),
                        ])]),
                    ])), "400": error])),
            ],
            "/v1/apps/{app}/notifications/{id}": [
                "get": authenticated(OpenAPI.operation(
                    "A notification and its deliveries counted by state", parameters: [app, parameter("id", in: "path", string, "The notification's id")],
                    responses: ["200": json("The notification", ref("Notification")), "404": error])),
                "delete": authenticated(OpenAPI.operation(
                    "Cancel a notification (as POST …/cancel)", parameters: [app, parameter("id", in: "path", string, "The notification's id")],
                    responses: ["200": json("The notification and what the cancel did", ref("Cancelled")), "404": error])),
            ],
            "/v1/apps/{app}/notifications/{id}/cancel": [
                "post": authenticated(OpenAPI.operation(
                    "Cancel a notification: every delivery not yet handed to APNs is cancelled, those in flight finish; again, the same answer",
                    parameters: [app, parameter("id", in: "path", string, "The notification's id")],
                    responses: ["200": json("The notification and what the cancel did", ref("Cancelled")), "404": error])),
            ],
            "/v1/apps/{app}/notifications/{id}/deliveries": [
                "get": authenticated(OpenAPI.operation(
                    "Each token's outcome, in order",
                    parameters: [app, parameter("id", in: "path", string, "The notification's id"),
                                 parameter("state", ["type": "string", "enum": .array(DeliveryState.allCases.map { .string($0.rawValue) })], "Only this state"),
                                 parameter("after", ["type": "integer", "minimum": 0, "maximum": 9_223_372_036_854_775_807], "The delivery id to continue after (paging)"), limit],
                    responses: ["200": json("Deliveries", object([
                        ("metadata", ["type": ["object", "null"], "description": "The submission's metadata"]),
                        ("deliveries", ["type": "array", "items": ref("Delivery")]), ("next", ["type": ["integer", "null"]]),
                    ])), "400": error, "404": error])),
            ],
            "/v1/apps/{app}/start-tokens": [
                "post": authenticated(OpenAPI.operation(
                    "Register a push-to-start token (from pushToStartTokenUpdates) for an ActivityAttributes type; a user's new token for the type replaces the old",
                    parameters: [app], body: body(object([("token", hexToken), ("attributesType", activityName), ("user", activityName)], required: ["token", "attributesType"], closed: true)),
                    responses: ["201": json("Registered", object([("token", string), ("attributesType", string), ("user", nullableText)])), "400": error, "404": error])),
            ],
            "/v1/apps/{app}/activities": [
                "post": authenticated(OpenAPI.operation(
                    "Start a Live Activity with your own id on a user's push-to-start tokens or one token: the gateway sends the start (input-push-token, or input-push-channel with channel: true) and tracks the activity",
                    parameters: [app], body: body(ref("ActivityStart")),
                    responses: [
                        "202": json("Starting", object([("id", string), ("state", string), ("startTokens", integer), ("channel", ["type": "boolean"]), ("findings", ["type": "array", "items": ref("Finding")])])),
                        "400": error, "404": error, "409": json("The app already has an activity with this id", ref("Error")),
                        "422": json("What the device would ignore (no alert, no attributes, no content state), a lint error, or a user without a push-to-start token", ref("Error")),
                    ])),
                "get": authenticated(OpenAPI.operation(
                    "The app's activities in id order",
                    parameters: [app, parameter("state", ["type": "string", "enum": .array(ActivityState.allCases.map { .string($0.rawValue) })], "Only this state"),
                                 parameter("after", string, "The id to continue after (paging)"), parameter("limit", ["type": "integer", "minimum": 1, "maximum": 10000], "At most this many (default 100)")],
                    responses: ["200": json("Activities", object([("activities", ["type": "array", "items": ref("Activity")]), ("next", ["type": ["string", "null"]])])), "400": error, "404": error])),
            ],
            "/v1/apps/{app}/activities/{id}": [
                "get": authenticated(OpenAPI.operation(
                    "An activity: its state, tokens, the content last sent, what waits, counts and budget use", parameters: [app, activity],
                    responses: ["200": json("The activity", ref("Activity")), "404": error])),
                "patch": authenticated(OpenAPI.operation(
                    "Update an activity: sent to its update token (or channel) only, at priority 5 unless asked; an older update not yet sent is superseded. Waits for the update token when the app has not reported it",
                    parameters: [app, activity], body: body(ref("ActivityUpdate")),
                    responses: ["202": json("Queued", ref("ActivityQueued")), "400": error, "404": error, "409": json("The activity ended or expired", ref("Error")), "422": error])),
            ],
            "/v1/apps/{app}/activities/{id}/end": [
                "post": authenticated(OpenAPI.operation(
                    "End an activity (its final content, and when the Lock Screen removes it); then updates answer 409",
                    parameters: [app, activity], body: body(ref("ActivityEnd")),
                    responses: ["202": json("Queued", ref("ActivityQueued")), "400": error, "404": error, "409": json("The activity ended or expired", ref("Error")), "422": error])),
            ],
            "/v1/apps/{app}/activities/{id}/tokens": [
                "post": authenticated(OpenAPI.operation(
                    "The app reports its activity's update token (from pushTokenUpdates), again whenever it changes: what waited for it is sent",
                    parameters: [app, activity], body: body(object([("token", hexToken)], required: ["token"], closed: true)),
                    responses: ["200": json("Recorded", object([("id", string), ("state", string), ("updateToken", nullableText)])), "400": error, "404": error])),
            ],
            "/v1/apps/{app}/activity-tokens": [
                "post": authenticated(OpenAPI.operation(
                    "An update token reported without the activity's id (as herald mock --report-activity-tokens posts it): matched by start token, attributes type and attributes",
                    parameters: [app], body: body(adding("anyOf", [["required": ["activityId"]], ["required": ["attributesType", "attributes"]]], to: object([
                        ("token", hexToken), ("activityId", activityName), ("startToken", hexToken), ("attributesType", activityName), ("attributes", ["type": "object"]), ("topic", string),
                    ], required: ["token"], closed: true))),
                    responses: ["200": json("Recorded", object([("id", string), ("state", string), ("updateToken", nullableText)])), "400": error, "404": error])),
            ],
        ]
        let nullableString: JSONValue = ["type": ["string", "null"]]
        let nullableInteger: JSONValue = ["type": ["integer", "null"]]
        return [
            "openapi": "3.1.0",
            "info": ["title": "Herald gateway", "version": "1", "description": "Queues notifications durably and sends them to APNs; every token's outcome can be looked up. With traces on (herald serve --otlp-endpoint), a W3C traceparent header on any request makes the request's span a child of the caller's, and a submission's delivery attempts spans of the same trace."],
            "paths": paths,
            "components": [
                "securitySchemes": ["apiKey": ["type": "http", "scheme": "bearer", "description": "An API key made by POST /v1/keys (or the administrator's key shown at first start)"]],
                "schemas": [
                    "Error": APIError.schema(extra: [
                        ("reason", ["type": "string", "description": "The reason APNs would answer with, when the payload is refused"]),
                        ("findings", ["type": "array", "items": ref("Finding")]),
                        ("database", ["type": "string", "description": "Why the database cannot be used now (503)"]),
                    ]),
                    "Finding": object([("rule", string), ("severity", string), ("message", string), ("pointer", nullableString), ("line", nullableInteger), ("column", nullableInteger)]),
                    "AppDefinition": adding("anyOf", [["required": ["token"]], ["required": ["certificate"]]], to: appSchema(patch: false)),
                    "AppPatch": appSchema(patch: true),
                    "App": object([
                        ("id", string), ("bundleId", string), ("environment", string), ("state", ["type": "string", "enum": ["active", "paused"]]),
                        ("paused", ["type": ["object", "null"], "properties": ["since": time, "reason": string, "advice": string], "description": "Why APNs' answers paused the app, and what to do"]),
                        ("createdAt", time), ("updatedAt", time),
                    ], required: ["id", "bundleId", "environment", "state", "createdAt", "updatedAt"]),
                    "Key": object([("id", string), ("key", string), ("name", string), ("apps", ["type": ["array", "string"]]), ("createdAt", time)], required: ["id", "name"]),
                    "Device": object([
                        ("token", string), ("state", string), ("tags", ["type": "array", "items": string]), ("user", nullableString), ("language", nullableString),
                        ("timeZone", nullableString), ("reason", nullableString), ("deadAt", nullableTime), ("updatedAt", time),
                    ]),
                    "Submission": adding("oneOf", [["required": ["tokens"]], ["required": ["audience"]]], to: object([
                        ("payload", ["type": "object"]), ("pushType", ["type": "string", "enum": .array(PushType.allCases.map { .string($0.rawValue) })]),
                        ("priority", ["type": "integer", "enum": [10, 5, 1]]), ("topic", nonEmpty),
                        ("collapseId", ["type": "string", "minLength": 1, "maxLength": 64, "description": "1 to 64 bytes of UTF-8"]),
                        ("expiration", ["type": "integer", "minimum": 0, "maximum": 9_223_372_036_854_775_807, "description": "Unix seconds; 0: try once"]),
                        ("tokens", tokens),
                        ("audience", ["oneOf": [
                            ["type": "string", "enum": ["all"]], object([("tag", tag)], required: ["tag"], closed: true),
                            object([("users", ["type": "array", "minItems": 1, "maxItems": 10_000, "items": ["type": "string", "minLength": 1, "maxLength": 256]])], required: ["users"], closed: true),
                        ]]),
                        ("localized", [
                            "type": "object", "minProperties": 1,
                            "propertyNames": ["pattern": "^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*$"],
                            "additionalProperties": ["type": ["string", "object"]],
                            "description": "An alert per language (any BCP 47 tag; these are examples), replacing aps.alert for devices of that language: each device gets the one iOS would choose",
                        ]),
                        ("sendAt", ["oneOf": [
                            ["type": "string", "format": "date-time", "description": "RFC 3339: send at this instant"],
                            object([("localTime", ["type": "string", "pattern": "^20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])T([01][0-9]|2[0-3]):[0-5][0-9]$"])], required: ["localTime"], closed: true),
                        ], "description": "When to send: an instant, or a wall-clock time in each device's zone (within a year)"]),
                        ("metadata", ["type": "object", "description": "Your own ids (at most 1 KB of compact JSON), given back with the notification, its deliveries and its webhook events"]),
                    ], required: ["payload"], closed: true)),
                    "Cancelled": adding("description", "The notification, and what the cancel did: cancelled, sent, finishing and skipped add up to total", to: object([
                        ("id", string), ("status", string),
                        ("cancel", object([("cancelled", integer), ("sent", integer), ("finishing", integer), ("skipped", integer), ("total", integer)], required: ["cancelled", "sent", "finishing", "skipped", "total"])),
                    ], required: ["id", "cancel"])),
                    "Notification": object([
                        ("id", string), ("app", string), ("status", ["type": "string", "enum": .array(JobStatus.allCases.map { .string($0.rawValue) })]), ("tokens", integer),
                        ("audience", string), ("usersWithoutDevices", integer), ("sendAt", nullableTime), ("localTime", nullableString), ("startedAt", nullableTime),
                        ("lateBy", ["type": ["number", "null"], "description": "Seconds a schedule began late (every gateway down when it was due)"]), ("cancelledAt", nullableTime),
                        ("pending", ["type": "integer", "description": "Deliveries not final yet"]),
                        ("counts", ["type": "object", "additionalProperties": integer, "description": "Deliveries by state (not in a listing)"]),
                        ("headers", object([
                            ("pushType", string), ("priority", integer), ("topic", string), ("collapseId", string), ("expiration", integer),
                        ])),
                        ("createdAt", time), ("finishedAt", nullableTime), ("retryUntil", time), ("metadata", ["type": ["object", "null"]]),
                        ("findings", ["type": "array", "items": ref("Finding")]),
                    ], required: ["id", "app", "status", "tokens", "pending", "createdAt"]),
                    "ActivityStart": object([
                        ("id", activityName), ("attributesType", activityName), ("attributes", ["type": "object"]), ("contentState", ["type": "object"]),
                        ("alert", ["type": ["string", "object"]]), ("to", ["oneOf": [object([("user", activityName)], required: ["user"], closed: true), object([("startToken", hexToken)], required: ["startToken"], closed: true)]]),
                        ("staleDate", seconds), ("relevanceScore", ["type": "number"]), ("channel", ["type": "boolean", "description": "Send updates and the end through a broadcast channel made for the activity"]),
                    ], required: ["id", "attributesType", "attributes", "contentState", "alert", "to"], closed: true),
                    "ActivityUpdate": object([
                        ("contentState", ["type": "object"]), ("alert", ["type": ["string", "object"]]), ("staleDate", seconds), ("relevanceScore", ["type": "number"]),
                        ("priority", ["type": "integer", "enum": [5, 10], "description": "5 (default) uses no budget; 10 counts against the device's"]),
                    ], required: ["contentState"], closed: true),
                    "ActivityEnd": object([
                        ("contentState", ["type": "object"]), ("alert", ["type": ["string", "object"]]), ("dismissalDate", seconds), ("staleDate", seconds),
                        ("relevanceScore", ["type": "number"]), ("priority", ["type": "integer", "enum": [5, 10]]),
                    ], closed: true),
                    "ActivityQueued": object([
                        ("id", string), ("state", string), ("seq", integer), ("waitingForToken", ["type": "boolean"]),
                        ("warnings", ["type": "array", "items": string]), ("findings", ["type": "array", "items": ref("Finding")]),
                    ]),
                    "Activity": object([
                        ("id", string), ("attributesType", string), ("attributes", ["type": "object"]),
                        ("state", ["type": "string", "enum": .array(ActivityState.allCases.map { .string($0.rawValue) })]), ("user", nullableString),
                        ("startTokens", ["type": "array", "items": string]), ("startPending", ["type": ["array", "null"]]), ("updateToken", nullableString),
                        ("channel", ["type": ["object", "null"]]), ("createdAt", time), ("startedAt", nullableTime), ("endedAt", nullableTime),
                        ("expiresAt", time), ("lockScreenUntil", nullableTime), ("lastContent", ["type": ["object", "null"]]), ("lastTimestamp", nullableInteger),
                        ("lastSentAt", nullableTime), ("lastStatus", nullableInteger), ("lastReason", nullableString), ("pending", ["type": ["object", "null"]]),
                        ("counts", object([("sent", integer), ("superseded", integer), ("failed", integer), ("submitted", integer)])),
                        ("budget", object([("priority10ThisHour", integer), ("warnsAfter", integer)])),
                    ]),
                    "Delivery": object([
                        ("id", integer), ("token", string), ("apnsId", string),
                        ("state", ["type": "string", "enum": .array(DeliveryState.allCases.map { .string($0.rawValue) })]),
                        ("attempts", integer), ("status", nullableInteger), ("reason", nullableString),
                        ("meaning", ["type": ["string", "null"], "description": "Apple's meaning of the reason (Handling notification responses from APNs)"]), ("unregisteredAt", nullableTime), ("updatedAt", time),
                        ("dueAt", nullableTime),
                    ]),
                ],
            ],
        ]
    }()
}
