import Foundation
import HeraldPayload
import Testing
import HeraldTestSupport

/// `.apns` files: the Simulator's keys cut out, everything else as written.
@Suite(.ownThreads) struct SimulatorFileTests {
    @Test(arguments: [
        // first, middle, last, only, both, with whitespace and nesting
        #"{"Simulator Target Bundle":"com.example.app","aps":{"alert":"Hi"}}"#,
        #"{"aps":{"alert":"Hi"},"Simulator Target Bundle":"com.example.app","custom":[1,2]}"#,
        #"{"aps":{"alert":"Hi"},"custom":{"a":"b"},"Simulator Target Bundle":"com.example.app"}"#,
        #"{"Simulator Target Bundle":"com.example.app"}"#,
        "{\n  \"Simulator Target Bundle\" : \"com.example.app\",\n  \"aps\" : { \"alert\" : \"Hi\" },\n  \"WatchKit Simulator Actions\" : [ { \"title\" : \"First\" } ]\n}",
    ])
    func theSimulatorKeysGoAndTheRestStaysAsWritten(_ file: String) throws {
        let (payload, bundleID) = SimulatorFile.strippingSimulatorKeys(Array(file.utf8))
        #expect(bundleID == "com.example.app")
        // Foundation's parser as the oracle: the same object without the two keys.
        let original = try #require(try JSONSerialization.jsonObject(with: Data(file.utf8)) as? [String: Any])
        let stripped = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any], "\(String(decoding: payload, as: UTF8.self))")
        var expected = original
        expected[SimulatorFile.targetBundleKey] = nil
        expected[SimulatorFile.watchKitActionsKey] = nil
        #expect(NSDictionary(dictionary: stripped).isEqual(to: expected))
        // Every byte of what stays is the file's: what remains is a subsequence of it.
        var rest = payload[...]
        for byte in file.utf8 where rest.first == byte { rest = rest.dropFirst() }
        #expect(rest.isEmpty, "bytes were rewritten, not only cut")
    }

    @Test func aBodyThatIsNotAnObjectComesBackUnchanged() {
        for body in ["[1,2]", "not json", ""] {
            let (payload, bundleID) = SimulatorFile.strippingSimulatorKeys(Array(body.utf8))
            #expect(payload == Array(body.utf8) && bundleID == nil)
        }
        let plain = #"{"aps":{"alert":"Hi"}}"#
        #expect(SimulatorFile.strippingSimulatorKeys(Array(plain.utf8)).payload == Array(plain.utf8))
    }
}
