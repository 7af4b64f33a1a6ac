import Foundation
import Osprey

/// What an origin's `Cache-Control` allows for results made from its image: `no-store` (never
/// cached, answered `no-store`), `private` (answered `private`), `max-age`/`s-maxage` (results live
/// at most that long, in the result cache and in the answer's `max-age`). Ignored when
/// ``ServerConfiguration/respectOriginCacheControl`` is off.
struct OriginPolicy: Sendable, Hashable {
    /// `no-store` (or `no-cache`): results are not kept.
    var noStore = false
    /// `private`: answers say `private`.
    var isPrivate = false
    /// `s-maxage` or `max-age`, in seconds.
    var maxAge: Int?

    /// Parses a `Cache-Control` value with the library's parser; `nil` for none.
    init?(cacheControl: String?) {
        guard let cacheControl else { return nil }
        let parsed = CacheControl(cacheControl)
        isPrivate = parsed.isPrivate
        maxAge = parsed.sharedMaxAge ?? parsed.maxAge
        noStore = parsed.noStore || maxAge == 0
    }

    init(noStore: Bool = false, isPrivate: Bool = false, maxAge: Int? = nil) {
        self.noStore = noStore
        self.isPrivate = isPrivate
        self.maxAge = maxAge
    }
}

/// The policies of the sources fetched so far, by source URL (the first hop), recorded by the
/// loader as responses arrive. A policy is kept at least `lifetime` (the origin TTL: by then the
/// source is validated again, which records its policy anew); older ones are dropped as the table
/// grows, so it holds about the sources fetched within one TTL, not every URL ever fetched.
final class OriginPolicies: Sendable {
    private let policies: ExpiringTable<OriginPolicy>
    private let lifetime: Duration

    init(lifetime: Duration, pruneAt: Int = 10_000) {
        self.lifetime = lifetime
        policies = ExpiringTable(pruneAt: pruneAt)
    }

    /// The policies held now.
    var count: Int { policies.count }

    func record(_ policy: OriginPolicy?, for url: URL) {
        policies.set(url.absoluteString, policy, until: .now + lifetime)
    }

    func policy(for url: URL) -> OriginPolicy? {
        policies.get(url.absoluteString)
    }
}
