// Generated shape for the benchmarks: what an APNSwift-style user writes for a 3 KB payload with
// 60 custom keys (a synthesized Codable struct). Kept in source so the compiler synthesizes the
// conformance, as it would in the user's program.

struct SynthesizedAPS: Codable {
    struct Alert: Codable {
        var title: String
        var subtitle: String
        var body: String
    }

    var alert: Alert
    var badge: Int
    var sound: String
    var threadID: String
    var category: String
    var mutableContent: Int

    enum CodingKeys: String, CodingKey {
        case alert, badge, sound, category
        case threadID = "thread-id"
        case mutableContent = "mutable-content"
    }
}

/// Listing 1 of "Generating a remote notification", as a synthesized struct.
struct ListingOne: Codable {
    struct APS: Codable {
        struct Alert: Codable {
            var title: String
            var subtitle: String
            var body: String
        }

        var alert: Alert
        var category: String
    }

    var aps: APS
    var gameID: String
}

/// A 3 KB payload: a full alert and 60 custom keys (numbers, strings, Booleans).
struct SixtyKeys: Codable {
    var aps: SynthesizedAPS
    var key00: Int
    var key01: String
    var key02: Bool
    var key03: Int
    var key04: String
    var key05: Bool
    var key06: Int
    var key07: String
    var key08: Bool
    var key09: Int
    var key10: String
    var key11: Bool
    var key12: Int
    var key13: String
    var key14: Bool
    var key15: Int
    var key16: String
    var key17: Bool
    var key18: Int
    var key19: String
    var key20: Bool
    var key21: Int
    var key22: String
    var key23: Bool
    var key24: Int
    var key25: String
    var key26: Bool
    var key27: Int
    var key28: String
    var key29: Bool
    var key30: Int
    var key31: String
    var key32: Bool
    var key33: Int
    var key34: String
    var key35: Bool
    var key36: Int
    var key37: String
    var key38: Bool
    var key39: Int
    var key40: String
    var key41: Bool
    var key42: Int
    var key43: String
    var key44: Bool
    var key45: Int
    var key46: String
    var key47: Bool
    var key48: Int
    var key49: String
    var key50: Bool
    var key51: Int
    var key52: String
    var key53: Bool
    var key54: Int
    var key55: String
    var key56: Bool
    var key57: Int
    var key58: String
    var key59: Bool

    static let sample = SixtyKeys(
        aps: SynthesizedAPS(
            alert: .init(title: "Order shipped", subtitle: "Arriving Thursday", body: "Your order #48213 left our warehouse and is on its way to you."),
            badge: 3, sound: "default", threadID: "orders-48213", category: "ORDER_UPDATE", mutableContent: 1),
        key00: 1000,
        key01: "value 01: https://example.com/orders/48213/items/1?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key02: true,
        key03: 1111,
        key04: "value 04: https://example.com/orders/48213/items/4?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key05: false,
        key06: 1222,
        key07: "value 07: https://example.com/orders/48213/items/7?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key08: true,
        key09: 1333,
        key10: "value 10: https://example.com/orders/48213/items/10?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key11: false,
        key12: 1444,
        key13: "value 13: https://example.com/orders/48213/items/13?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key14: true,
        key15: 1555,
        key16: "value 16: https://example.com/orders/48213/items/16?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key17: false,
        key18: 1666,
        key19: "value 19: https://example.com/orders/48213/items/19?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key20: true,
        key21: 1777,
        key22: "value 22: https://example.com/orders/48213/items/22?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key23: false,
        key24: 1888,
        key25: "value 25: https://example.com/orders/48213/items/25?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key26: true,
        key27: 1999,
        key28: "value 28: https://example.com/orders/48213/items/28?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key29: false,
        key30: 2110,
        key31: "value 31: https://example.com/orders/48213/items/31?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key32: true,
        key33: 2221,
        key34: "value 34: https://example.com/orders/48213/items/34?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key35: false,
        key36: 2332,
        key37: "value 37: https://example.com/orders/48213/items/37?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key38: true,
        key39: 2443,
        key40: "value 40: https://example.com/orders/48213/items/40?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key41: false,
        key42: 2554,
        key43: "value 43: https://example.com/orders/48213/items/43?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key44: true,
        key45: 2665,
        key46: "value 46: https://example.com/orders/48213/items/46?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key47: false,
        key48: 2776,
        key49: "value 49: https://example.com/orders/48213/items/49?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key50: true,
        key51: 2887,
        key52: "value 52: https://example.com/orders/48213/items/52?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key53: false,
        key54: 2998,
        key55: "value 55: https://example.com/orders/48213/items/55?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key56: true,
        key57: 3109,
        key58: "value 58: https://example.com/orders/48213/items/58?ref=push&campaign=autumn-sale-2026&v=2&s=1&lang=en",
        key59: false)
}
