import HeraldLint
import HeraldProtocol
import Testing

@Suite("Lint context")
struct LintContextTests {
    /// Random header lists (repeats, other names, names given in uppercase, no `:path` or one
    /// for a broadcast): the context's values are what ``APNsHeaderFields``' subscript gives, the
    /// first of each name, and the device token is the path's after `/3/device/`.
    @Test("header values are the first of each name, among repeats and others")
    func headerValuesAgreeWithTheFields() {
        var generator = SystemRandomNumberGenerator()
        let names = [
            APNsHeader.pushType, APNsHeader.priority, APNsHeader.topic, APNsHeader.collapseID, APNsHeader.expiration, APNsHeader.id, ":path",
            ":method", APNsHeader.authorization, "x-other", "APNS-TOPIC", "Apns-Priority", "apns-push-typ", "apns-push-types",
        ]
        let values = ["", "alert", "5", "com.example.app", "/3/device/" + String(repeating: "ab", count: 32), "/4/broadcasts/apps/com.x", "/3/device/", "é"]
        for _ in 0..<2_000 {
            var fields = APNsHeaderFields()
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                fields.append(name: names.randomElement(using: &generator)!, value: values.randomElement(using: &generator)!)
            }
            let context = LintContext(fields: fields, isRequest: true)
            #expect(context.pushType == fields[APNsHeader.pushType])
            #expect(context.priority == fields[APNsHeader.priority])
            #expect(context.topic == fields[APNsHeader.topic])
            #expect(context.collapseID == fields[APNsHeader.collapseID])
            #expect(context.expiration == fields[APNsHeader.expiration])
            #expect(context.apnsID == fields[APNsHeader.id])
            let path = fields[":path"]
            let token = path.flatMap { $0.hasPrefix("/3/device/") ? String($0.dropFirst(10)) : nil }
            #expect(context.deviceToken == token, "\(fields.map { "\($0.name): \($0.value)" })")
        }
        // Setting the fields reads them again.
        var context = LintContext(fields: [APNsHeader.topic: "com.a"])
        context.fields = [APNsHeader.topic: "com.b", APNsHeader.topic: "com.c"]
        #expect(context.topic == "com.b")
    }
}
