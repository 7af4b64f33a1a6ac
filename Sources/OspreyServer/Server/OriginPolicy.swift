import Foundation

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

    /// Parses a `Cache-Control` value; `nil` for none.
    init?(cacheControl: String?) {
        guard let cacheControl else { return nil }
        var sharedMaxAge: Int?
        for directive in cacheControl.lowercased().split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            switch parts[0] {
            case "no-store", "no-cache": noStore = true
            case "private": isPrivate = true
            case "max-age": maxAge = parts.count > 1 ? Int(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))) : nil
            case "s-maxage": sharedMaxAge = parts.count > 1 ? Int(parts[1]) : nil
            default: break
            }
        }
        if let sharedMaxAge { maxAge = sharedMaxAge }
        if maxAge == 0 { noStore = true }
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
