import Osprey
import Testing

@testable import OspreyServer

@Suite("Format negotiation: q-values compared across AVIF, WebP and the legacy class", .timeLimit(.minutes(1)))
struct FormatNegotiatorTests {
    static let negotiator = FormatNegotiator(allowsAVIF: true)

    @Test(
        "the offer for an Accept header",
        arguments: [
            (nil, "legacy"),
            ("image/*", "legacy"),
            ("*/*", "legacy"),
            ("image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8", "avif>webp"),  // Chrome
            ("image/webp,image/avif,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5", "avif>webp"),  // Safari: a tie, AVIF first
            ("image/avif;q=0.5,image/webp;q=0.9", "webp>avif"),
            ("image/avif;q=0,image/webp;q=0", "legacy"),
            ("image/webp;q=0.5,image/jpeg", "legacy"),  // JPEG preferred to WebP
            ("image/webp;q=0.5,image/*", "legacy"),  // any image preferred to WebP
            ("image/webp;q=0.5,image/*;q=0.4", "webp"),
            ("image/webp;q=0.5,*/*;q=0.8", "legacy"),
            ("image/webp,image/jpeg;q=0,image/png;q=0", "webp"),
            ("IMAGE/WEBP ; Q=0.7, image/*;q=0.6", "webp"),
            ("image/webp,image/avif,image/jxl,image/*;q=0.8", "avif>jxl>webp"),  // Safari 17: a tie, AVIF, JPEG XL, WebP
            ("image/jxl,image/*;q=0.8", "jxl"),
            ("image/jxl;q=0.5,image/webp", "webp>jxl"),
            ("image/jxl;q=0.5,image/*", "legacy")
        ] as [(String?, String)])
    func offer(accept: String?, key: String) {
        #expect(Self.negotiator.offer(accept: accept).key == key, "\(accept ?? "no header")")
    }

    @Test("the format for an image: alpha decides within the legacy class, animations take WebP or GIF")
    func format() throws {
        let opaque = try Image(data: Image(rgba: [UInt8](repeating: 255, count: 16), width: 2, height: 2).encoded(as: .jpeg))
        let alpha = try Image(rgba: [UInt8](repeating: 128, count: 16), width: 2, height: 2)
        let legacy = Self.negotiator.offer(accept: "image/png,image/*;q=0.8")
        #expect(Self.negotiator.format(for: opaque, offer: legacy) == .jpeg, "image/png listed first does not make a photo PNG")
        #expect(Self.negotiator.format(for: alpha, offer: legacy) == .png)
        #expect(Self.negotiator.format(for: alpha, offer: Self.negotiator.offer(accept: "image/webp;q=0.9,image/*;q=0.5")) == .webp)
    }
}
