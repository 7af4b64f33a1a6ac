import Testing

@testable import Osprey

@Suite("Cache-Control: one parser for the library and the server", .timeLimit(.minutes(1)))
struct CacheControlTests {
    @Test("max-age, s-maxage, private, no-store and no-cache, in any case, quoted or not")
    func directives() {
        let plain = CacheControl("public, max-age=60")
        #expect(plain.maxAge == 60 && plain.sharedMaxAge == nil && !plain.noStore && !plain.isPrivate)
        #expect(plain.freshness == 60)
        let shared = CacheControl("Max-Age=60, S-MAXAGE=\"120\", private")
        #expect(shared.freshness == 120 && shared.isPrivate)
        #expect(CacheControl("no-cache, max-age=60").freshness == 0)
        #expect(CacheControl("no-store").noStore)
    }

    @Test("unknown directives, stray separators and bad arguments are ignored (no crash); an empty header says nothing")
    func malformed() {
        #expect(CacheControl("").freshness == nil)
        #expect(CacheControl(",,=, max-age=abc, immutable").freshness == nil)
    }
}
